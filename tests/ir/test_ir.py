"""The IR: the primitive table, nodes and their hashes, provenance, programs, passes, the
verifier, and the reference RNG."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import lazytorch as lt
from lazytorch.ir import dtypes as dt
from lazytorch.ir import philox
from lazytorch.ir.device import CPU
from lazytorch.ir.node import Node
from lazytorch.ir.primitives import CATEGORIES, PRIMITIVES, get
from lazytorch.ir.program import Program, canonicalize, capture, cse, dce, fold_constants
from lazytorch.ir.verify import IRVerificationError, verify_graph, verify_program
from lazytorch.ops._core import const_node, leaf_node, scalar_node
from samples import RULE_SAMPLES, SAMPLES, Sample, Scalar, leaf_values

F32, I64, B = dt.float32, dt.int64, dt.bool_


def leaf(shape, dtype=F32, values=None):
    return leaf_node(leaf_values(shape, dtype, values), CPU)


def bind_sample(sample: Sample) -> tuple[Node, list[Node]]:
    """The sample's primitive applied to leaves (and scalar inputs) holding its inputs."""
    inputs = [
        scalar_node(x.value, x.dtype, CPU) if isinstance(x, Scalar) else leaf_node(x, CPU)
        for x in sample.inputs
    ]
    return get(sample.prim).bind(tuple(inputs), sample.attrs), inputs


# tests/samples.py: a primitive added to the table without a rule sample there fails
def test_every_primitive_has_a_sample():
    missing = {n for n, p in PRIMITIVES.items() if p.category != "leaf"} - {
        s.prim for s in RULE_SAMPLES
    }
    assert not missing, f"add samples for {sorted(missing)} to tests/samples.py"


def test_every_primitive_is_fully_defined():
    for name, p in PRIMITIVES.items():
        assert p.category in CATEGORIES, name
        # the slot autograd fills (lazytorch.autograd.rules; checked in test_autograd_rules)
        assert p.vjp is None or callable(p.vjp.fn)
        assert p.doc, f"{name} needs a one-line doc"
        if p.category != "leaf":
            assert p.shape_rule and p.dtype_rule and p.ref, name


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: s.id)
def test_reference_agrees_with_the_rules(sample):
    node, inputs = bind_sample(sample)
    p = get(sample.prim)
    p.check(node)
    arrays = [np.asarray(i.buffer, dtype=i.dtype.np) for i in inputs]
    with np.errstate(all="ignore"):
        out = np.asarray(p.ref(*arrays, **node.params))
    assert out.dtype == node.dtype.np, sample.id
    assert out.shape == tuple(node.shape), sample.id


def test_unknown_primitive_suggests_close_names():
    with pytest.raises(KeyError, match="did you mean reduce_sum"):
        get("reduce_sun")


def test_rules_reject_malformed_applications():
    with pytest.raises(RuntimeError):
        get("add").bind((leaf((2, 3)), leaf((3, 2))))
    with pytest.raises(TypeError):
        get("exp").bind((leaf((2,), I64),))
    with pytest.raises(TypeError):
        get("where").bind((leaf((2,)), leaf((2,)), leaf((2,))))


# -- hashes and provenance --------------------------------------------------------------------
def test_structural_hash_ignores_data_and_scalar_values():
    a = leaf((2, 3), values=np.zeros((2, 3)))
    b = leaf((2, 3), values=np.ones((2, 3)))
    assert a.struct_hash == b.struct_hash
    s1, s2 = scalar_node(1.0, F32, CPU), scalar_node(2.0, F32, CPU)
    assert s1.struct_hash == s2.struct_hash
    add = get("add")
    assert add.bind((a, s1)).struct_hash == add.bind((b, s2)).struct_hash
    assert add.bind((a, s1)).struct_hash != get("mul").bind((a, s1)).struct_hash
    assert leaf((2, 3)).struct_hash != leaf((3, 2)).struct_hash


def test_literal_hash_tells_signed_zeros_apart_and_nan_equal():
    z, nz = const_node(0.0, F32, CPU), const_node(-0.0, F32, CPU)
    assert z.struct_hash != nz.struct_hash
    n1 = get("const").bind((), (float("nan"), F32, CPU))
    n2 = get("const").bind((), (float("nan"), F32, CPU))
    assert n1.struct_hash == n2.struct_hash
    assert const_node(1, I64, CPU).struct_hash != const_node(True, B, CPU).struct_hash


def test_every_node_records_the_users_line():
    x = lt.ones(2)
    line = sys._getframe().f_lineno + 1
    y = lt.exp(x)
    assert y._node.loc == (__file__, line)


def test_node_ids_are_a_topological_order():
    x = lt.ones(3)
    y = (x + 1) * 2
    n = y._node
    for i in n.inputs:
        assert i.id < n.id


# -- capture, programs and passes ---------------------------------------------------------------
def test_capture_wires_inputs_by_position():
    x, y = lt.tensor([1.0, 2.0]), lt.tensor([3.0, 4.0])
    k1 = capture([((x + y) * x)._node]).key
    k2 = capture([((x + y) * y)._node]).key
    k3 = capture([((y + x) * y)._node]).key
    assert k1 != k2
    assert k1 == k3  # same wiring by position


def test_program_from_capture_puts_params_first():
    x = lt.tensor([1.0, 2.0])
    prog = Program.from_capture(capture([(x * 2.0 + x)._node]))
    assert [p.kind for p in prog.params] == ["buffer", "scalar"]
    verify_program(prog)
    assert prog.ops() == ["mul", "add"]


def test_cse_merges_duplicate_work():
    x = lt.tensor([1.0, 2.0])
    y = lt.exp(x) + lt.exp(x)
    prog = Program.from_capture(capture([y._node]))
    assert prog.ops().count("exp") == 2
    merged = cse(prog)
    verify_program(merged, "cse")
    assert merged.ops().count("exp") == 1


def test_fold_constants_and_dce():
    c = get("mul").bind((const_node(2.0, F32, CPU), const_node(3.0, F32, CPU)))
    x = leaf((2,))
    y = get("add").bind((x, c))
    prog = fold_constants(Program.from_capture(capture([y])))
    verify_program(prog, "fold")
    assert prog.ops() == ["const", "add"]
    assert prog.instrs[0].attrs[0] == 6.0
    assert dce(prog) is prog


def test_canonicalize_verifies_after_each_pass():
    x = lt.tensor([1.0, -1.0])
    prog = canonicalize(
        Program.from_capture(capture([(lt.relu(x) + lt.relu(x))._node])), verify=True
    )
    assert prog.ops().count("maximum") == 1


# -- the verifier ---------------------------------------------------------------------------------
def test_verifier_accepts_real_graphs():
    x = lt.ones(2, 3)
    y = lt.nn.functional.softmax(x * 3, -1).sum(0)
    assert verify_graph([y._node]) > 5


def test_verifier_catches_a_wrong_shape():
    x = leaf((2, 3))
    bad = Node(get("exp"), (x,), (), (3, 2), F32, CPU, 0, None)
    with pytest.raises(IRVerificationError, match="records f32\\[3, 2\\]"):
        verify_graph([bad])


def test_verifier_catches_use_before_definition():
    x = leaf((2,))
    y = get("exp").bind((x,))
    prog = Program.from_capture(capture([y]))
    prog.instrs[0].inputs = (5,)
    with pytest.raises(IRVerificationError, match="not defined before use"):
        verify_program(prog, "test")


# -- symbolic shapes through the rules -------------------------------------------------------------
def test_rules_propagate_symbolic_sizes():
    from lazytorch.ir.symbolic import ShapeEnv, SymInt

    env = ShapeEnv()
    s = env.create_symbol(6)
    buf = np.ones((6, 4), dtype=np.float32)
    x = Node(get("buffer"), (), (), (s, 4), F32, CPU, hash(("sym", 4)), None, buf)
    y = get("exp").bind((x,))
    assert y.shape[0] is s
    r = get("reshape").bind((x,), ((s * 2, 2),))
    assert isinstance(r.shape[0], SymInt) and str(r.shape[0]) == "2*s0"
    sl = get("slice").bind((x,), ((1, 0), (s, 4), (1, 2)))
    assert str(sl.shape[0]) == "s0 - 1" and sl.shape[1] == 2
    red = get("reduce_sum").bind((x,), ((0,),))
    assert red.shape == (1, 4)
    # The interpreter runs a symbolic program at the symbols' hints.
    lt.runtime.materialize_nodes([sl])
    assert sl.buffer.shape == (5, 2)


# -- RNG reference --------------------------------------------------------------------------------
def test_philox_matches_the_random123_known_answers():
    u = np.uint64

    def run(c, k):
        out = philox.rounds(
            tuple(np.array([x], dtype=np.uint64) for x in c), tuple(u(x) for x in k)
        )
        return [int(o[0]) for o in out]

    assert run((0, 0, 0, 0), (0, 0)) == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    assert run((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2) == [
        0x408F276D,
        0x41C83B0E,
        0xA20BC7C6,
        0x6D5451FD,
    ]
    c = (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344)
    assert run(c, (0xA4093822, 0x299F31D0)) == [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]


def test_uniform_is_in_range_and_counter_addressed():
    a = philox.uniform(1000, 5, 0, np.float32)
    b = philox.uniform(10, 5, 990, np.float32)
    assert a.min() >= 0.0 and a.max() < 1.0
    np.testing.assert_array_equal(a[990:], b)  # element i depends only on (seed, offset + i)
    h = philox.uniform(4096, 1, 0, np.float16)
    assert h.dtype == np.float16 and h.max() < 1.0
