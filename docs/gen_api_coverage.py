"""Regenerate docs/api-coverage.md: which torch APIs lazytorch provides.

    python docs/gen_api_coverage.py > docs/api-coverage.md

Needs torch installed (the test extra); tests/api/test_public.py checks that the committed file
is this script's output. The tables against torch's categories count a name as provided
when lazytorch exposes it in the same place (``torch.X`` -> ``lazytorch.X``, ``Tensor.X``,
``nn.functional.X``); the last section lists what the public registry
(`lazytorch._public`: the ``@public`` declarations and the tables of
``lazytorch/ops/methods.py``) declares, as functions, methods and in-place methods. The
test suite checks the behaviour against torch.
"""

from __future__ import annotations

import collections
import inspect

import torch

import lazytorch as lt
from lazytorch._public import REGISTRY

# torch.* functions by the categories of torch's own documentation (the commonly used ones).
TORCH_CATEGORIES: dict[str, str] = {
    "Creation": "tensor as_tensor from_numpy zeros zeros_like ones ones_like arange linspace "
    "logspace eye empty empty_like full full_like scalar_tensor complex polar",
    "Random sampling": "manual_seed seed initial_seed get_rng_state set_rng_state rand rand_like "
    "randn randn_like randint randint_like randperm bernoulli multinomial normal poisson",
    "Joining, slicing, mutating": "cat concat concatenate chunk split tensor_split unbind stack "
    "hstack vstack dstack column_stack gather scatter scatter_add index_select masked_select "
    "nonzero argwhere narrow permute reshape squeeze unsqueeze t transpose swapaxes swapdims "
    "movedim moveaxis take take_along_dim tile where flatten unflatten atleast_1d atleast_2d "
    "atleast_3d index_add index_copy index_fill index_put diagonal_scatter select_scatter "
    "slice_scatter",
    "Pointwise math": "abs absolute acos acosh add addcdiv addcmul asin asinh atan atan2 atanh "
    "bitwise_and bitwise_not bitwise_or bitwise_xor bitwise_left_shift ceil clamp clip copysign "
    "cos cosh deg2rad div divide erf erfc erfinv exp exp2 expm1 fix float_power floor "
    "floor_divide fmod frac hypot lerp lgamma log log10 log1p log2 logaddexp logical_and "
    "logical_not logical_or logical_xor mul multiply nan_to_num neg negative positive pow "
    "rad2deg reciprocal remainder round rsqrt sigmoid sign sgn sin sinc sinh sqrt square sub "
    "subtract tan tanh true_divide trunc xlogy relu",
    "Reductions": "argmax argmin amax amin aminmax all any max min dist logsumexp mean nanmean "
    "median nanmedian mode norm nansum prod quantile std std_mean sum unique var var_mean "
    "count_nonzero",
    "Comparison": "allclose argsort eq equal ge greater_equal gt greater isclose isfinite isin "
    "isinf isposinf isneginf isnan isreal kthvalue le less_equal lt less maximum minimum fmax "
    "fmin ne not_equal sort topk msort",
    "Other math": "broadcast_tensors broadcast_to broadcast_shapes cdist clone cross cummax "
    "cummin cumprod cumsum diag diag_embed diagonal diff einsum flip fliplr flipud kron rot90 "
    "gcd histc meshgrid lcm logcumsumexp ravel renorm repeat_interleave roll searchsorted "
    "tril triu tril_indices triu_indices vander",
    "BLAS and LAPACK": "addmm addbmm baddbmm bmm chain_matmul dot inner matmul mm mv outer ger "
    "tensordot trace det inverse",
    "Switches and utilities": "is_tensor is_floating_point numel promote_types result_type "
    "can_cast set_default_dtype get_default_dtype set_default_device get_default_device no_grad "
    "enable_grad set_grad_enabled is_grad_enabled inference_mode compile",
}

TENSOR_METHODS = (
    "abs add add_ addcmul addcmul_ all amax amin any argmax argmin argsort bool byte ceil char "
    "chunk clamp clamp_ clip clone contiguous copy_ cos cpu cuda cumsum data detach dim div div_ "
    "double dtype element_size eq exp expand expand_as fill_ flatten flip float floor ge gather "
    "gt half index_select int is_contiguous is_floating_point item le log long lt masked_fill "
    "masked_fill_ matmul max mean min mm mul mul_ narrow ndim ndimension ne neg new_full "
    "new_ones new_tensor new_zeros nonzero norm normal_ numel numpy permute pow prod relu "
    "repeat reshape reshape_as round rsqrt scatter scatter_ scatter_add shape sigmoid sign sin "
    "size softmax sort split sqrt squeeze std sub sub_ sum t tanh to tolist topk transpose "
    "tril triu type_as unbind uniform_ unsqueeze var view view_as where zero_ T mT "
    "requires_grad_ backward grad register_hook apply_ map_ share_memory_ pin_memory "
    "storage stride data_ptr"
).split()


def mark(ok: bool) -> str:
    return "✓" if ok else "—"


def table(names: list[str], provided: set[str]) -> list[str]:
    rows = []
    per_row = 6
    for i in range(0, len(names), per_row):
        chunk = names[i : i + per_row]
        rows.append("| " + " | ".join(f"`{n}` {mark(n in provided)}" for n in chunk) + " |")
    head = "| " + " | ".join([""] * min(per_row, len(names))) + " |"
    sep = "|" + "---|" * min(per_row, len(names))
    return [head, sep, *rows]


def names_by_object(entries: list) -> list[str]:
    """Each object's names, sorted: its first-declared name, then its aliases in parentheses."""
    groups: dict[int, list[str]] = collections.defaultdict(list)
    for e in entries:
        groups[id(e.obj)].append(e.name)
    return [f"`{n[0]}`" + "".join(f" (`{a}`)" for a in n[1:]) for n in sorted(groups.values())]


def declared() -> list[str]:
    """The section listing the public registry, by kind."""
    functions = REGISTRY.entries("torch")
    tensor = [e for e in REGISTRY.entries("Tensor") if not e.name.startswith("__")]
    protocol = [e for e in REGISTRY.entries("Tensor") if e.name.startswith("__")]
    methods = [e for e in tensor if e.kind == "method"]
    inplace = [e for e in tensor if e.kind == "inplace"]
    generated = [e for e in inplace if e.of is not None]
    written = [e for e in inplace if e.of is None]
    not_torch = sorted(e.name for e in tensor if not hasattr(torch.Tensor, e.name))
    missing_inplace = sorted(
        f"{e.name}_"
        for e in methods
        if hasattr(torch.Tensor, e.name + "_") and not hasattr(lt.Tensor, e.name + "_")
    )
    return [
        "",
        "## What the public registry declares",
        "",
        "Every public name is declared once: beside its definition with `@public` "
        "(`lazytorch/_public.py`), or in a table of `lazytorch/ops/methods.py` (operators, "
        f"conversions, adapters, properties, Python protocols): {len(functions)} `torch.*` functions, {len(methods)} "
        f"`Tensor` methods and properties, {len(inplace)} in-place methods ({len(generated)} "
        f"generated from their op by `inplace=True`, {len(written)} written by hand), and "
        f"{len(protocol)} operators and Python protocols (`__add__`, `__iadd__`, ...). "
        "Aliases (one object, several names) are in parentheses.",
        "",
        f"### `torch.*` functions ({len(functions)})",
        "",
        " · ".join(names_by_object(functions)),
        "",
        f"### `Tensor` methods and properties ({len(methods)})",
        "",
        " · ".join(names_by_object(methods)),
        "",
        f"### In-place `Tensor` methods ({len(inplace)})",
        "",
        "Generated (`inplace=True`): " + " · ".join(sorted(f"`{e.name}`" for e in generated)),
        "",
        "Written by hand: " + " · ".join(sorted(f"`{e.name}`" for e in written)),
        "",
        "### Against torch",
        "",
        "Declared `Tensor` methods torch does not have: "
        + (" · ".join(f"`{n}`" for n in not_torch) or "none")
        + ".",
        "",
        "In-place variants torch has of the declared methods, not provided yet: "
        + (" · ".join(f"`{n}`" for n in missing_inplace) or "none")
        + ".",
    ]


def main() -> None:
    out = [
        "# API coverage against torch",
        "",
        f"Generated by `python docs/gen_api_coverage.py` against torch {torch.__version__}. "
        "✓ = provided with torch's name and semantics (the test suite compares it with "
        "torch); — = not provided yet.",
        "",
    ]
    total = have = 0
    out.append("## `torch.*` functions")
    for cat, names in TORCH_CATEGORIES.items():
        ns = names.split()
        provided = {n for n in ns if hasattr(lt, n)}
        total += len(ns)
        have += len(provided)
        out += ["", f"### {cat} ({len(provided)}/{len(ns)})", "", *table(ns, provided)]
    tensor_have = {n for n in TENSOR_METHODS if hasattr(lt.Tensor, n)}
    out += [
        "",
        f"## `Tensor` methods and properties ({len(tensor_have)}/{len(TENSOR_METHODS)})",
        "",
        *table(TENSOR_METHODS, tensor_have),
    ]
    f_names = sorted(
        n
        for n in dir(torch.nn.functional)
        if not n.startswith("_")
        and callable(getattr(torch.nn.functional, n))
        and getattr(getattr(torch.nn.functional, n), "__module__", "").startswith(
            "torch.nn.functional"
        )
    )
    f_have = {n for n in f_names if hasattr(lt.nn.functional, n)}
    fft_names = sorted(
        n
        for n in dir(torch.fft)
        if not n.startswith("_") and inspect.isbuiltin(getattr(torch.fft, n))
    )
    fft_have = {n for n in fft_names if hasattr(lt.fft, n)}
    out += [
        "",
        f"## `nn.functional` ({len(f_have)}/{len(f_names)})",
        "",
        *table(f_names, f_have),
        "",
        f"## `fft` ({len(fft_have)}/{len(fft_names)})",
        "",
        *table(fft_names, fft_have),
        "",
        f"Totals: {have}/{total} listed `torch.*` functions, {len(tensor_have)}/"
        f"{len(TENSOR_METHODS)} listed Tensor methods, {len(f_have)}/{len(f_names)} "
        "`nn.functional` functions.",
        "",
        "Beyond these tables: autograd, `autograd.functional` and the profilers "
        "(`autograd.profiler`, `profiler`; [autograd.md](autograd.md)), `nn` modules, lazy "
        "modules, `nn.Buffer`, `nn.init`, `nn.utils.parametrize` / `parametrizations` and "
        "`utils.checkpoint` ([nn.md](nn.md)), `optim` ([optim.md](optim.md)), `distributions` "
        "([distributions.md](distributions.md)), `utils.data` and "
        "`save`/`load` ([concepts.md](concepts.md)) and `compile` ([compile.md](compile.md)). "
        "The cuda device (Triton kernels) is described in [backends.md](backends.md); its test "
        "suite passes on an H200.",
        *declared(),
    ]
    print("\n".join(out))


if __name__ == "__main__":
    main()
