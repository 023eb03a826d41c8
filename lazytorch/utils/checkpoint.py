"""``torch.utils.checkpoint``: `checkpoint` and `checkpoint_sequential`, torch's values and
gradients.

Activation checkpointing trades compute for memory in an eager library: the forward of a
segment runs without keeping its activations, and runs again during backward. In lazytorch
nothing runs eagerly: the forward, the backward and the optimizer step are recorded and
compiled into one program whose memory plan decides what is kept live. So `checkpoint`
calls the function normally, which gives exactly torch's values and gradients; it does
*not* recompute anything and saves no memory by itself (what the compiled program keeps
is whatever its schedule plans). torch's observable rules are kept: the warning when
`use_reentrant` is not passed, the reentrant variant's refusal of extra keyword arguments
(and of ``context_fn`` / ``debug``), and its output not requiring grad when no input
does (torch's reentrant checkpoint then gives the function's parameters no gradient).
``preserve_rng_state`` is accepted: with no second forward there is no state to replay.

>>> import lazytorch
>>> from lazytorch.utils.checkpoint import checkpoint
>>> x = lazytorch.tensor([1.0, 2.0], requires_grad=True)
>>> checkpoint(lambda t: (t * t).sum(), x, use_reentrant=False).backward()
>>> x.grad
tensor([2., 4.])
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from lazytorch.autograd.grad_mode import no_grad
from lazytorch.nn.modules.container import Sequential
from lazytorch.tensor import Tensor

__all__ = [
    "check_backward_validity",
    "checkpoint",
    "checkpoint_sequential",
    "detach_variable",
    "noop_context_fn",
]


def noop_context_fn() -> tuple[contextlib.AbstractContextManager[Any], Any]:
    """The default ``context_fn``: no context around the forward nor the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """Each tensor of `inputs` detached, keeping its ``requires_grad``."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(
            "Only tuple of tensors is supported. Got Unsupported input type: "
            f"{type(inputs).__name__}"
        )
    out = []
    for inp in inputs:
        if not isinstance(inp, Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad_(inp.requires_grad)
        out.append(x)
    return tuple(out)


def check_backward_validity(inputs: Iterable[Any]) -> None:
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn(
            "None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2
        )


def checkpoint(
    function: Callable[..., Any],
    *args: Any,
    use_reentrant: bool | None = None,
    context_fn: Callable[[], tuple[Any, Any]] = noop_context_fn,
    determinism_check: str = "default",
    debug: bool = False,
    early_stop: bool = True,
    **kwargs: Any,
) -> Any:
    """``function(*args, **kwargs)``, with torch's checkpoint rules (see the module docstring:
    nothing is recomputed in lazytorch, and the values and gradients are torch's)."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be "
            "passed explicitly. Starting in PyTorch 2.9, calling checkpoint "
            "without use_reentrant will raise an exception. use_reentrant=False is "
            "recommended, but if you need to preserve the current default "
            "behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError(
                "Passing `context_fn` or `debug` is only supported when use_reentrant=False."
            )
        if not any(a.requires_grad for a in args if isinstance(a, Tensor)):
            warnings.warn(
                "None of the inputs have requires_grad=True. Gradients will be None",
                stacklevel=2,
            )
            with no_grad():  # torch's reentrant forward: no graph unless an input needs one
                return function(*args)
        return function(*args)
    if determinism_check not in ("default", "none"):
        raise ValueError(
            f"determinism_check should be one of ['default', 'none'], but got {determinism_check}"
        )
    forward_context, _ = context_fn()
    with forward_context:
        return function(*args, **kwargs)


def checkpoint_sequential(
    functions: Any, segments: int, input: Any, use_reentrant: bool | None = None, **kwargs: Any
) -> Any:
    """Run `functions` (a list or an ``nn.Sequential``) in order on `input`, in `segments`
    checkpointed chunks as torch splits them (the last chunk is not checkpointed)."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant "
            "parameter should be passed explicitly. "
            "In version 2.9 we will raise an exception if use_reentrant "
            "is not passed. use_reentrant=False is "
            "recommended, but if you need to preserve the current default "
            "behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start: int, end: int, functions: Any) -> Callable[[Any], Any]:
        def forward(input: Any) -> Any:
            for j in range(start, end + 1):
                input = functions[j](input)
            return input

        return forward

    if isinstance(functions, Sequential):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(
            run_function(start, end, functions),
            input,
            use_reentrant=use_reentrant,
            preserve_rng_state=preserve,
        )
    return run_function(end + 1, len(functions) - 1, functions)(input)
