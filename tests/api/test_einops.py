"""einops on lazytorch: rearrange/reduce/repeat/pack/unpack/einsum and the
``einops.layers.torch`` modules under `install_as_torch`, against the same calls on torch.

einops picks its torch backend by ``"torch" in sys.modules`` and ``isinstance(x,
torch.Tensor)``, so with ``import torch`` resolved to lazytorch it drives lazytorch tensors
through ``Tensor.reshape/permute/expand/amax/...`` and ``torch.einsum`` — the calls real
sequence-model scripts make through it. `_einops_calls` runs once in this process on torch
and once in a ``lazytorch run --as-torch`` subprocess (the hook refuses to install where
torch is imported); every output and every input gradient is compared.
"""

from __future__ import annotations

import inspect
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

einops = pytest.importorskip("einops")  # in the test extra: real scripts import it


def _einops_calls(torch) -> dict:
    """Every einops entry point on inputs built from NumPy: {name: NumPy array}, outputs
    and the gradients of ``(out * w).sum()`` for a fixed random ``w`` per output."""
    import numpy as np
    from einops import einsum, pack, rearrange, reduce, repeat, unpack
    from einops.layers.torch import EinMix, Rearrange, Reduce

    rng = np.random.default_rng(0)

    def leaf(*shape):
        return torch.tensor(rng.standard_normal(shape), dtype=torch.float32, requires_grad=True)

    results = {}

    def record(name, out, *inputs):
        # out may be a tensor or a list of tensors (unpack); each gets its own weights
        outs = out if isinstance(out, (list, tuple)) else [out]
        loss = 0
        for i, o in enumerate(outs):
            results[f"{name}.out{i}"] = o.detach().numpy()
            if o.dtype.is_floating_point:
                w = torch.tensor(rng.standard_normal(tuple(o.shape)), dtype=o.dtype)
                loss = loss + (o * w).sum()
        if inputs:
            loss.backward()
            for j, x in enumerate(inputs):
                results[f"{name}.grad{j}"] = x.grad.numpy()

    x = leaf(2, 3, 4, 6)
    record("rearrange_merge", rearrange(x, "b c h w -> b (h w) c"), x)
    x = leaf(2, 4, 6, 3)
    record(
        "rearrange_space_to_depth",
        rearrange(x, "b (h h2) (w w2) c -> b h w (c h2 w2)", h2=2, w2=3),
        x,
    )
    xs = [leaf(3, 5) for _ in range(4)]
    record("rearrange_list", rearrange(xs, "n a b -> a (n b)"), *xs)
    x = leaf(2, 3, 8)
    record("rearrange_heads", rearrange(x, "b t (h d) -> b h t d", h=2), x)
    x = leaf(4, 5)
    record("rearrange_ellipsis", rearrange(x[None, :, None], "a ... c -> ... (a c)"), x)

    for op in ("max", "min", "sum", "mean", "prod"):
        x = leaf(2, 3, 4, 6)
        record(f"reduce_{op}", reduce(x, "b c (h h2) (w w2) -> b c h w", op, h2=2, w2=2), x)
    x = leaf(3, 4, 5)
    record("reduce_keep_axis", reduce(x, "b t c -> b 1 c", "mean"), x)
    x = leaf(3, 4, 5)
    record("reduce_all_but_one", reduce(x, "b t c -> c", "max"), x)
    b = torch.tensor(rng.standard_normal((3, 4, 5)) > 0)
    record("reduce_any", reduce(b, "b t c -> b", "any"))
    record("reduce_all", reduce(b, "b t c -> t c", "all"))

    x = leaf(3, 4)
    record("repeat_new_axis", repeat(x, "b c -> b r c", r=5), x)
    x = leaf(3, 4)
    record("repeat_upsample", repeat(x, "h w -> (h h2) (w w2)", h2=2, w2=3), x)
    x = leaf(5)
    record("repeat_tile", repeat(x, "c -> (r c)", r=3), x)

    a, b2, c = leaf(2, 3, 4), leaf(2, 3), leaf(2, 3, 2, 5)
    packed, shapes = pack([a, b2, c], "b t *")
    record("pack", packed, a, b2, c)
    results["pack.shapes"] = np.array([list(s) + [-1] * (2 - len(s)) for s in shapes])
    p = leaf(2, 3, 15)
    record("unpack", unpack(p, shapes, "b t *"), p)

    q, k = leaf(2, 3, 4), leaf(2, 5, 4)
    record("einsum_two", einsum(q, k, "b i d, b j d -> b i j"), q, k)
    u, v, m = leaf(3, 4), leaf(4, 5), leaf(5, 2)
    record("einsum_three", einsum(u, v, m, "a b, b c, c d -> a d"), u, v, m)
    u = leaf(4, 4)
    record("einsum_trace_like", einsum(u, "i i ->"), u)

    x = leaf(2, 3, 4, 6)
    record("layer_rearrange", Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=2, p2=3)(x), x)
    x = leaf(2, 3, 4, 6)
    record("layer_reduce", Reduce("b c (h h2) (w w2) -> b c h w", "max", h2=2, w2=2)(x), x)

    mixers = {
        "einmix_channels": (
            EinMix("b t c -> b t d", weight_shape="c d", bias_shape="d", c=5, d=7),
            (2, 3, 5),
        ),
        "einmix_tokens": (
            EinMix("b t c -> b s c", weight_shape="t s", bias_shape="s c", t=3, s=4, c=5),
            (2, 3, 5),
        ),
        "einmix_grouped": (
            EinMix("b t (g c) -> b t (g d)", weight_shape="g c d", bias_shape="g d", g=2, c=3, d=4),
            (2, 3, 6),
        ),
    }
    for name, (mix, shape) in mixers.items():
        # einmix's own uniform_ draws differ between libraries: set the same values in both
        with torch.no_grad():
            for param in mix.parameters():
                param.copy_(torch.tensor(rng.standard_normal(tuple(param.shape))))
        x = leaf(*shape)
        record(name, mix(x), x, mix.weight, mix.bias)
    return results


def _lazytorch_results(tmp_path) -> dict[str, np.ndarray]:
    out = tmp_path / "lazy.npz"
    script = tmp_path / "einops_script.py"
    script.write_text(
        "import numpy as np\nimport torch\nimport sys\n\n"
        + textwrap.dedent(inspect.getsource(_einops_calls))
        + "\nnp.savez(sys.argv[1], **_einops_calls(torch))\n"
        # einops probed torch._dynamo only for torch >= 2 and < 2.8 (to allow_in_graph its
        # ops); it reads lazytorch's own version and must leave torch._dynamo unimported
        + "assert 'torch._dynamo' not in sys.modules, 'einops imported torch._dynamo'\n"
    )
    r = subprocess.run(
        [sys.executable, "-m", "lazytorch", "run", "--as-torch", str(script), str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    with np.load(out) as f:
        return dict(f)


def test_einops_functions_and_layers_match_torch(tmp_path):
    theirs = _lazytorch_results(tmp_path)
    ours = _einops_calls(torch)
    assert sorted(theirs) == sorted(ours)
    for name, ref in ours.items():
        got = theirs[name]
        assert got.shape == ref.shape and got.dtype == ref.dtype, (name, got.shape, ref.shape)
        if ref.dtype == np.bool_ or ref.dtype.kind == "i":
            np.testing.assert_array_equal(got, ref, err_msg=name)
        else:
            np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6, err_msg=name)
