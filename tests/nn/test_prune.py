"""torch.nn.utils.prune against torch: the same masks, parameters, buffers and gradients."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.utils.prune as TP

import lazytorch as lt
import lazytorch.nn.utils.prune as LP

RNG = np.random.default_rng(0)
W = RNG.standard_normal((6, 4, 3)).astype(np.float32)
B = RNG.standard_normal(6).astype(np.float32)
FC = RNG.standard_normal((2, 6)).astype(np.float32)  # no |value| shared with W (topk ties)


class Net:
    """The same small module in both libraries (a Conv1d and a Linear), same weights."""

    def __init__(self, lib):
        self.lib = lib
        self.conv = lib.nn.Conv1d(4, 6, 3)
        self.fc = lib.nn.Linear(6, 2)
        with lib.no_grad():
            self.conv.weight.copy_(lib.tensor(W))
            self.conv.bias.copy_(lib.tensor(B))
            self.fc.weight.copy_(lib.tensor(FC))
            self.fc.bias.copy_(lib.tensor(B[:2]))

    def forward(self, x):
        return self.fc(self.conv(x).relu().mean(-1))


def _np(t):
    return t.detach().numpy()


def both(fn):
    """fn(lib, prune_module, net) -> dict of tensors, compared between the libraries."""
    ours = fn(lt, LP, Net(lt))
    theirs = fn(torch, TP, Net(torch))
    assert list(ours) == list(theirs)
    for k in theirs:
        a, b = ours[k], theirs[k]
        if isinstance(b, torch.Tensor):
            assert tuple(a.shape) == tuple(b.shape), k
            np.testing.assert_allclose(_np(a), _np(b), rtol=1e-6, atol=1e-6, err_msg=k)
        else:
            assert a == b, k


def _state(m):
    out = {f"param {n}": p for n, p in m.named_parameters()}
    out.update({f"buffer {n}": b for n, b in m.named_buffers()})
    out["hooks"] = [type(h).__name__ for h in m._forward_pre_hooks.values()]
    return out


def test_l1_unstructured_and_iterative_pruning():
    def f(lib, P, net):
        P.l1_unstructured(net.conv, "weight", amount=0.3)
        P.l1_unstructured(net.conv, "bias", amount=3)
        s1 = _state(net.conv)
        P.ln_structured(net.conv, "weight", amount=0.5, n=2, dim=0)  # a PruningContainer
        P.l1_unstructured(net.conv, "weight", amount=5)  # acts on what is left
        out = {**s1, **{f"after {k}": v for k, v in _state(net.conv).items()}}
        out["weight"] = net.conv.weight
        out["container"] = [
            type(m).__name__
            for m in net.conv._forward_pre_hooks[
                next(
                    k for k, h in net.conv._forward_pre_hooks.items() if h._tensor_name == "weight"
                )
            ]
        ]
        out["is_pruned"] = P.is_pruned(net.conv)
        return out

    both(f)


@pytest.mark.parametrize("n,dim", [(1, 0), (2, 1), (float("inf"), -1), ("fro", 0)])
def test_ln_structured(n, dim):
    def f(lib, P, net):
        P.ln_structured(net.conv, "weight", amount=2 if dim != -1 else 0.34, n=n, dim=dim)
        return {"mask": net.conv.weight_mask, "weight": net.conv.weight}

    both(f)


def test_forward_hook_gradient_and_remove():
    def f(lib, P, net):
        P.l1_unstructured(net.conv, "weight", amount=0.5)
        with lib.no_grad():  # the hook recomputes weight from weight_orig at each forward
            net.conv.weight_orig.mul_(2)
        return {"weight_before_forward": net.conv.weight}

    # the same input in both libraries
    x = RNG.standard_normal((2, 4, 5)).astype(np.float32)

    def g(lib, P, net):
        P.l1_unstructured(net.conv, "weight", amount=0.5)
        with lib.no_grad():
            net.conv.weight_orig.mul_(2)
        y = net.forward(lib.tensor(x))
        y.sum().backward()
        out = {"y": y, "weight": net.conv.weight, "grad_orig": net.conv.weight_orig.grad}
        P.remove(net.conv, "weight")
        out.update(_state(net.conv))
        out["is_pruned"] = P.is_pruned(net.conv)
        return out

    both(f)
    both(g)


def test_global_unstructured_and_custom_mask():
    def f(lib, P, net):
        P.l1_unstructured(net.fc, "weight", amount=3)
        P.global_unstructured(
            [(net.conv, "weight"), (net.fc, "weight")], pruning_method=P.L1Unstructured, amount=0.4
        )
        mask = lib.tensor(np.arange(6) % 2, dtype=lib.float32)
        P.custom_from_mask(net.conv, "bias", mask)
        P.identity(net.fc, "bias")
        return {**_state(net.conv), **{f"fc {k}": v for k, v in _state(net.fc).items()}}

    both(f)


def test_custom_method_and_prune_tensor():
    def f(lib, P, net):
        class EveryOther(P.BasePruningMethod):
            PRUNING_TYPE = "unstructured"

            def compute_mask(self, t, default_mask):
                mask = default_mask.clone()
                mask.view(-1)[::2] = 0
                return mask

        EveryOther.apply(net.fc, "bias")
        t = lib.tensor(W[0])
        return {
            "bias_mask": net.fc.bias_mask,
            "pruned": P.L1Unstructured(amount=4).prune(t),
            "scores": P.L1Unstructured(amount=4).prune(t, importance_scores=-t),
        }

    both(f)


def test_random_methods_prune_the_right_counts():
    net = Net(lt)
    LP.random_unstructured(net.conv, "weight", amount=0.25)
    assert int((net.conv.weight_mask == 0).sum().item()) == round(0.25 * W.size)
    LP.random_structured(net.conv, "weight", amount=2, dim=1)  # 2 of 4 input channels
    mask = net.conv.weight_mask.numpy()
    dead = [c for c in range(4) if not mask[:, c].any()]
    assert len(dead) == 2


def test_errors():
    net = Net(lt)
    with pytest.raises(ValueError, match="float in the range"):
        LP.l1_unstructured(net.conv, "weight", amount=1.5)
    with pytest.raises(TypeError, match="Invalid type"):
        LP.l1_unstructured(net.conv, "weight", amount="a")
    with pytest.raises(ValueError, match="smaller than the number"):
        LP.l1_unstructured(net.conv, "bias", amount=7)
    assert "bias" in dict(net.conv.named_parameters())  # restored after the failure
    with pytest.raises(ValueError, match="multidimensional"):
        LP.ln_structured(net.conv, "bias", amount=1, n=1, dim=0)
    with pytest.raises(ValueError, match="has to be pruned"):
        LP.remove(net.fc, "weight")
