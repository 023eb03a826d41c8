"""Attributes a script sets on its own tensors and parameters, as torch keeps them.

torch's tensors carry a ``__dict__``: mamba.py tags ``A_log._no_weight_decay = True`` to
leave a parameter out of weight decay, other scripts tag parameters for their optimizer
groups. Each test makes the same calls on both libraries and compares what survives
in-place ops, new results, ``copy.deepcopy``, pickling and ``torch.save``/``load``.
"""

from __future__ import annotations

import copy
import io
import pickle

import pytest
import torch

import lazytorch as lt


def _tagged(lib):
    p = lib.nn.Parameter(lib.ones(2))
    p._no_weight_decay = True
    t = lib.arange(3.0)
    t.foo = 3
    return p, t


@pytest.mark.parametrize("lib", [torch, lt], ids=["torch", "lazytorch"])
def test_attributes_set_on_tensors_and_parameters(lib):
    p, t = _tagged(lib)
    assert p._no_weight_decay is True and t.foo == 3
    assert getattr(p, "_no_reinit", False) is False  # unset: an AttributeError, as in torch
    with pytest.raises(AttributeError):
        t.bar  # noqa: B018 (the attribute read is the test)
    t.add_(1)  # an in-place op keeps the tensor, so its attributes
    with lib.no_grad():
        p.mul_(2)
    assert t.foo == 3 and p._no_weight_decay is True


def _survivors(lib):
    """What each way of copying keeps of the attributes, in `lib`."""
    p, t = _tagged(lib)
    buf = io.BytesIO()
    lib.save({"p": p, "t": t}, buf)
    buf.seek(0)
    loaded = lib.load(buf, weights_only=False)
    m = lib.nn.Linear(2, 2)
    m.weight.tag = 1
    return {
        "result": (t + 1).__dict__,
        "detach": t.detach().__dict__,
        "clone": t.clone().__dict__,
        "deepcopy tensor": copy.deepcopy(t).__dict__,
        "deepcopy parameter": copy.deepcopy(p).__dict__,  # torch's Parameter drops them
        "deepcopy module": copy.deepcopy(m).weight.__dict__,
        "state_dict": m.state_dict()["weight"].__dict__,
        "pickle tensor": pickle.loads(pickle.dumps(t)).__dict__,
        "pickle parameter": pickle.loads(pickle.dumps(p)).__dict__,
        "save tensor": loaded["t"].__dict__,
        "save parameter": loaded["p"].__dict__,
    }


def test_what_copies_keep_is_what_torch_keeps():
    assert _survivors(lt) == _survivors(torch)


@pytest.mark.filterwarnings("error")  # nothing dropped, nothing warned
def test_checkpoints_carry_attributes_both_ways():
    p, t = _tagged(torch)
    t.other = torch.ones(1)  # a tensor inside the attributes
    buf = io.BytesIO()
    torch.save({"p": p, "t": t}, buf)
    buf.seek(0)
    ours = lt.load(buf, weights_only=False)
    assert isinstance(ours["p"], lt.nn.Parameter)
    assert ours["p"].__dict__ == {"_no_weight_decay": True}
    assert ours["t"].foo == 3 and ours["t"].other.tolist() == [1.0]
    assert ours["t"].tolist() == [0.0, 1.0, 2.0]

    p, t = _tagged(lt)
    t.other = lt.ones(1)
    buf = io.BytesIO()
    lt.save({"p": p, "t": t, "plain": lt.ones(2)}, buf)
    buf.seek(0)
    theirs = torch.load(buf, weights_only=False)
    assert isinstance(theirs["p"], torch.nn.Parameter)
    assert theirs["p"].__dict__ == {"_no_weight_decay": True}
    assert theirs["t"].foo == 3 and theirs["t"].other.tolist() == [1.0]
    assert theirs["t"].tolist() == [0.0, 1.0, 2.0] and theirs["plain"].__dict__ == {}
