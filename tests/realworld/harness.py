"""Run one corpus script under torch (recording its random draws) or lazytorch (replaying them).

lazytorch's Philox generator does not produce torch's numbers, so a comparison of losses
needs both runs to see the same draws. The torch run records, in order, the result of every
random draw the script (or the library on its behalf) makes at the Python level; the
lazytorch run substitutes those results in the same order. Draws are queued per kind, so a
draw one library makes and the other does not leaves the other kinds aligned (both
DataLoaders draw their workers' base seed with ``Tensor.random_`` each epoch, so lazytorch's
emulated workers get torch's seeds):

==========  =============================================================================
kind        calls
==========  =============================================================================
``fill``    in-place fills: ``Tensor.uniform_/normal_/bernoulli_/exponential_/...`` and
            every ``nn.init`` filler (the recorded value is the tensor's final content, so
            two libraries that build ``kaiming_uniform_`` differently still agree)
``rand``    ``torch.rand``, ``rand_like``; dropout masks (``F.dropout`` and
            ``dropout1d/2d/3d`` are replaced in *both* runs by ``x * (rand >= p) / (1-p)``,
            and torch's ``scaled_dot_product_attention`` with ``dropout_p > 0`` by its
            documented math, because torch draws those masks in C; ``torch.compile``
            returns its argument in the torch run, which runs eagerly, since Dynamo's
            fake tensors cannot be recorded)
others      ``randn``, ``randint``, ``randperm``, ``normal``, ``bernoulli``,
            ``multinomial`` (and lazytorch's ``Categorical`` sampling, which torch's does
            through multinomial), ``poisson``, ``random_`` — one queue each
==========  =============================================================================

Only the outermost draw is recorded (a ``rand_like`` built on ``rand`` is one draw). A
replayed draw whose shape differs from the recorded one stops the run with `ReplayMismatch`.
torch's ``RandomSampler`` ends each pass with a draw nothing uses (``randperm(n)[:0]``);
the torch run uses the same sampler without it. Draws torch makes in C are not seen:
dropout between the layers of ``nn.RNN/LSTM/GRU(num_layers > 1, dropout > 0)`` and
``F.rrelu`` in training (README.md says which entries could meet them: none today).

Each run logs the loss of every step (``float(loss)`` when ``Tensor.backward`` is called on
a 0-d tensor or one of shape ``(1,)``: a materialization lazytorch makes at each backward,
which the timings include), every ``Tensor.item()`` value the script itself asks for (and,
with ``REALWORLD_LOG_CONVERSIONS=1``, its ``float(t)``/``int(t)``/``bool(t)``), a timestamp per
``backward`` (the step boundaries), and the whole script's wall time, as JSON::

    python tests/realworld/harness.py --lib torch --tape T.pkl --out torch.json script.py ARGS
    python tests/realworld/harness.py --lib lazytorch --tape T.pkl --out lt.json script.py ARGS

This module imports neither library at import time: the lazytorch run installs lazytorch as
``torch`` first (`lazytorch.install_as_torch`), which refuses once real torch is loaded.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import importlib
import json
import os
import pickle
import random
import runpy
import sys
import tempfile
import time
import traceback
from collections import defaultdict
from typing import Any

import numpy as np

# Set to "1" (corpus.py does, for an entry with log_conversions): the script's float(t),
# int(t) and bool(t) of tensors are logged with its item() values.
LOG_CONVERSIONS = "REALWORLD_LOG_CONVERSIONS"

# Module-level draw functions: name -> queue kind.
PRINTED_MAX = 256  # values logged per printed tensor
_COLLECTIONS = collections.__file__
FUNCTION_DRAWS = {
    "rand": "rand",
    "rand_like": "rand",
    "randn": "randn",
    "randn_like": "randn",
    "randint": "randint",
    "randint_like": "randint",
    "randperm": "randperm",
    "normal": "normal",
    "bernoulli": "bernoulli",
    "multinomial": "multinomial",
    "poisson": "poisson",
}
# Tensor methods that fill self in place, and Tensor methods that return a new draw.
INPLACE_METHODS = {
    "uniform_": "fill",
    "normal_": "fill",
    "bernoulli_": "fill",
    "exponential_": "fill",
    "cauchy_": "fill",
    "log_normal_": "fill",
    "geometric_": "fill",
    "random_": "random_",
}
TENSOR_DRAWS = {"bernoulli": "bernoulli", "multinomial": "multinomial"}
INIT_FILLERS = (
    "uniform_",
    "normal_",
    "trunc_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "xavier_uniform_",
    "xavier_normal_",
    "orthogonal_",
    "sparse_",
)


def _eager_compile(model: Any = None, **kwargs: Any) -> Any:
    """torch.compile in the torch run: the model or function itself, run eagerly. Dynamo
    traces a compiled forward with fake tensors, through the recording wrappers above, which
    cannot record a fake draw; eager torch computes the same math, and the lazytorch run
    keeps lazytorch's own ``compile``. Used as ``torch.compile(m)`` or as a decorator with
    options (``@torch.compile(mode=...)``)."""
    if model is None:
        return lambda fn: fn
    return model


class ReplayMismatch(RuntimeError):
    """The lazytorch run asked for a draw the torch run did not make (kind, order or shape)."""


class Tape:
    """Per-kind queues of recorded draws (NumPy arrays), and where the replay stands."""

    def __init__(self, queues: dict[str, list[np.ndarray]] | None = None) -> None:
        self.queues: dict[str, list[np.ndarray]] = defaultdict(list, queues or {})
        self.used: dict[str, int] = defaultdict(int)

    def record(self, kind: str, value: np.ndarray) -> None:
        self.queues[kind].append(value)

    def take(self, kind: str, shape: tuple[int, ...]) -> np.ndarray:
        """The next recorded draw of `kind`, which must have `shape`."""
        i = self.used[kind]
        queue = self.queues.get(kind, [])
        if i >= len(queue):
            raise ReplayMismatch(
                f"draw {kind!r} #{i} of shape {tuple(shape)}: the torch run made only {len(queue)}"
            )
        if tuple(queue[i].shape) != tuple(shape):
            raise ReplayMismatch(
                f"draw {kind!r} #{i}: torch drew shape {tuple(queue[i].shape)}, "
                f"lazytorch asks for {tuple(shape)}"
            )
        self.used[kind] = i + 1
        return queue[i]

    def unused(self) -> dict[str, int]:
        return {k: len(q) - self.used[k] for k, q in self.queues.items() if len(q) > self.used[k]}


class Hooks:
    """Patches one library (torch, or lazytorch installed as torch) to record or replay draws
    and to log losses, ``item()`` values and step times. Same code for both libraries."""

    def __init__(self, torch: Any, tape: Tape, replay: bool, real_torch: bool) -> None:
        self.torch, self.tape, self.replay, self.real_torch = torch, tape, replay, real_torch
        self.depth = 0  # > 0 inside a draw: inner draws belong to the outer one
        self.in_backward = False
        self.losses: list[float] = []
        self.items: list[float | int | bool] = []
        # values of tensors made into text or saved, before the first backward (once training
        # starts, losses and item() values are compared: Adam turns rounding noise in
        # near-zero gradients into weight differences no tolerance on a weight fits)
        self.printed: list[list[float | int | bool]] = []
        self.in_print = False
        self.step_stamps: list[float] = []
        self.draws: dict[str, int] = defaultdict(int)
        self.script_dir = ""  # item() calls from files under here are logged

    # -- values <-> arrays -------------------------------------------------------------
    def to_array(self, t: Any) -> np.ndarray:
        t = t.detach().cpu()
        if t.dtype == self.torch.bfloat16:  # NumPy has no bfloat16: float32 holds it exactly
            t = t.float()
        return np.array(t.numpy(), copy=True)

    def from_array(self, a: np.ndarray, like: Any = None) -> Any:
        t = self.torch.from_numpy(np.array(a, copy=True))
        return t if like is None else t.to(like.device)

    # -- draws -------------------------------------------------------------------------
    def _draw(self, kind: str, original: Any, *args: Any, **kwargs: Any) -> Any:
        if self.depth:
            return original(*args, **kwargs)
        self.depth += 1
        try:
            if not self.replay:
                out = original(*args, **kwargs)
                if out.device.type == "meta":  # a shape without values: nothing drawn
                    return out
                self.tape.record(kind, self.to_array(out))
                self.draws[kind] += 1
                return out
            # Replay: the draw's shape and dtype come from running it (cheap, lazy), the
            # values from the tape.
            out = original(*args, **kwargs)
            if out.device.type == "meta":
                return out
            value = self.tape.take(kind, tuple(out.shape))
            self.draws[kind] += 1
            t = self.from_array(value, out).to(out.dtype)
            if kwargs.get("out") is not None:  # ``torch.rand(2, 2, out=c)`` draws into c
                out.copy_(t)
                return out
            if getattr(out, "requires_grad", False):
                t.requires_grad_(True)
            return t
        finally:
            self.depth -= 1

    def _fill(self, kind: str, original: Any, tensor: Any, *args: Any, **kwargs: Any) -> Any:
        if self.depth or tensor.device.type == "meta":  # meta: a shape, no values to fill
            return original(tensor, *args, **kwargs)
        self.depth += 1
        try:
            if not self.replay:
                out = original(tensor, *args, **kwargs)
                self.tape.record(kind, self.to_array(tensor))
                self.draws[kind] += 1
                return out
            value = self.tape.take(kind, tuple(tensor.shape))
            self.draws[kind] += 1
            with self.torch.no_grad():
                tensor.copy_(self.from_array(value, tensor).to(tensor.dtype))
            return tensor
        finally:
            self.depth -= 1

    def _patch(self, owner: Any, name: str, replacement: Any) -> None:
        """``owner.name = replacement``; in the lazytorch run also every other reference to
        the same function in lazytorch's modules (`from lazytorch.ops.random import
        randperm` in the DataLoader's sampler, `dropout` in attention), so a library-internal
        draw is replayed as the facade's is."""
        original = getattr(owner, name)
        setattr(owner, name, replacement)
        if self.real_torch or not callable(original):
            return
        for mod_name, mod in list(sys.modules.items()):
            if not mod_name.startswith("lazytorch") or mod is None:
                continue
            for attr, value in list(vars(mod).items()):
                if value is original and not (mod is owner and attr == name):
                    setattr(mod, attr, replacement)

    def _wrap_draw(self, owner: Any, name: str, kind: str) -> None:
        original = getattr(owner, name, None)
        if original is None:
            return

        def draw(*args: Any, **kwargs: Any) -> Any:
            return self._draw(kind, original, *args, **kwargs)

        self._patch(owner, name, draw)

    def _wrap_fill(self, owner: Any, name: str, kind: str) -> None:
        original = getattr(owner, name, None)
        if original is None:
            return

        def fill(tensor: Any, *args: Any, **kwargs: Any) -> Any:
            return self._fill(kind, original, tensor, *args, **kwargs)

        self._patch(owner, name, fill)

    # -- dropout with a mask from the (recorded or replayed) rand ----------------------
    def _mask_dropout(self, channel_dims: int | None) -> Any:
        torch = self.torch

        def dropout(input: Any, p: float = 0.5, training: bool = True, inplace: bool = False):
            if not training or p == 0.0:
                return input
            if channel_dims is None:
                shape = tuple(input.shape)
            elif input.dim() == channel_dims + 2:  # dropout1d/2d/3d: one draw per (N, C)
                shape = (*input.shape[:2], *(1,) * channel_dims)
            else:  # torch treats any other rank as unbatched: one draw per leading index
                shape = (input.shape[0], *(1,) * (input.dim() - 1))
            keep = torch.rand(shape, dtype=input.dtype, device=input.device) >= p
            out = input * (keep.to(input.dtype) * (1.0 / (1.0 - p)))
            if inplace:
                with torch.no_grad():
                    input.copy_(out)
                return input
            return out

        return dropout

    def _math_sdpa(self, original: Any) -> Any:
        torch, F = self.torch, self.torch.nn.functional

        def sdpa(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, **kw):
            if dropout_p == 0.0:
                return original(q, k, v, attn_mask, dropout_p, is_causal, scale=scale, **kw)
            # torch's documented reference implementation, with the mask drawn by rand;
            # torch's math kernel computes a bfloat16/float16 attention in float32 and
            # rounds the output once
            low = q.dtype if q.dtype in (torch.bfloat16, torch.float16) else None
            if low is not None:
                q, k, v = q.float(), k.float(), v.float()
                if attn_mask is not None and attn_mask.dtype != torch.bool:
                    attn_mask = attn_mask.float()
            L, S = q.size(-2), k.size(-2)
            scale_factor = 1 / (q.size(-1) ** 0.5) if scale is None else scale
            attn_bias = torch.zeros(L, S, dtype=q.dtype, device=q.device)
            if is_causal:
                temp_mask = torch.ones(L, S, dtype=torch.bool, device=q.device).tril(diagonal=0)
                attn_bias = attn_bias.masked_fill(temp_mask.logical_not(), float("-inf"))
            if attn_mask is not None:
                if attn_mask.dtype == torch.bool:
                    attn_bias = attn_bias.masked_fill(attn_mask.logical_not(), float("-inf"))
                else:
                    attn_bias = attn_mask + attn_bias
            attn_weight = q @ k.transpose(-2, -1) * scale_factor
            attn_weight = torch.softmax(attn_weight + attn_bias, dim=-1)
            attn_weight = F.dropout(attn_weight, dropout_p, training=True)
            out = attn_weight @ v
            return out if low is None else out.to(low)

        return sdpa

    def _sampler_without_empty_draw(self) -> None:
        """torch's ``RandomSampler.__iter__`` ends every pass with ``randperm(n)[:n_samples %
        n]`` even when that keeps nothing: a draw of the same shape as the next epoch's, whose
        values nothing sees. The torch run uses the same code without that empty draw (what
        it yields is unchanged: the generator is private to the pass), so the next epoch's
        permutation is the next one on the tape."""
        torch = self.torch
        sampler = torch.utils.data.RandomSampler
        original = sampler.__iter__

        def __iter__(s: Any) -> Any:
            if s.replacement:
                yield from original(s)
                return
            n = len(s.data_source)
            if s.generator is None:
                seed = int(torch.empty((), dtype=torch.int64).random_().item())
                generator = torch.Generator()
                generator.manual_seed(seed)
            else:
                generator = s.generator
            for _ in range(s.num_samples // n):
                yield from torch.randperm(n, generator=generator).tolist()
            if s.num_samples % n:
                yield from torch.randperm(n, generator=generator).tolist()[: s.num_samples % n]

        sampler.__iter__ = __iter__

    # -- losses, items, steps ----------------------------------------------------------
    def install(self) -> None:
        torch = self.torch
        if not self.real_torch:
            # Load the modules that import a draw by name before the draws are wrapped
            # (`_patch` rebinds those names in the modules loaded so far).
            for sub in ("nn", "nn.functional", "utils.data", "optim", "distributions"):
                importlib.import_module(f"lazytorch.{sub}")
            # torch's Categorical.sample calls torch.multinomial; lazytorch's calls
            # categorical_draws (multinomial's with-replacement draw without its eager check
            # of the weights): the same draw, replayed from the same queue
            random_ops = importlib.import_module("lazytorch.ops.random")
            self._wrap_draw(random_ops, "categorical_draws", "multinomial")
        else:
            # ``with torch.device(...)`` gives factories its device by looking them up in a
            # set built once, from the torch namespace: built now, before the wrapping,
            # it holds the original functions that the wrappers call
            importlib.import_module("torch.utils._device")._device_constructors()
        for name, kind in FUNCTION_DRAWS.items():
            self._wrap_draw(torch, name, kind)
        if self.real_torch:
            # torch's random_split imports randperm by name: its module must call the wrapper
            dataset = importlib.import_module("torch.utils.data.dataset")
            self._patch(dataset, "randperm", torch.randperm)
        for name, kind in INPLACE_METHODS.items():
            self._wrap_fill(torch.Tensor, name, kind)
        for name, kind in TENSOR_DRAWS.items():
            self._wrap_draw(torch.Tensor, name, kind)
        for name in INIT_FILLERS:
            self._wrap_fill(torch.nn.init, name, "fill")
        F = torch.nn.functional
        self._patch(F, "dropout", self._mask_dropout(None))
        for n in (1, 2, 3):
            if hasattr(F, f"dropout{n}d"):
                self._patch(F, f"dropout{n}d", self._mask_dropout(n))
        if self.real_torch:
            F.scaled_dot_product_attention = self._math_sdpa(F.scaled_dot_product_attention)
            self._sampler_without_empty_draw()
            torch.compile = _eager_compile

        backward, item = torch.Tensor.backward, torch.Tensor.item

        def logged_backward(t: Any, *args: Any, **kwargs: Any) -> Any:
            if self.in_backward:  # torch re-enters through a __torch_function__ mode
                return backward(t, *args, **kwargs)
            self.step_stamps.append(time.perf_counter())
            if t.dim() == 0 or t.shape == (1,):  # a loss of shape (1,) is a loss too
                self.losses.append(float(t.detach()))
            self.in_backward = True
            try:
                return backward(t, *args, **kwargs)
            finally:
                self.in_backward = False

        def logged_item(t: Any) -> Any:
            v = item(t)
            # only the script's own calls: each library's internals call item() differently
            if sys._getframe(1).f_code.co_filename.startswith(self.script_dir):
                self.items.append(v)
            return v

        torch.Tensor.backward = logged_backward
        torch.Tensor.item = logged_item
        # What a script prints is what its user compares: tutorials that print tensors and log
        # no loss are compared on the values they print (Parameter has a repr of its own).
        for cls in (torch.Tensor, torch.nn.Parameter):
            for name in ("__repr__", "__str__", "__format__"):
                if name in vars(cls):
                    setattr(cls, name, self._logged_text(getattr(cls, name)))
        if self.real_torch:
            self._zeroed_empty()
        self._logged_save()
        if os.environ.get(LOG_CONVERSIONS) == "1":
            for name in ("__float__", "__int__", "__bool__"):
                setattr(torch.Tensor, name, self._logged_conversion(getattr(torch.Tensor, name)))

    def _logged_text(self, to_text: Any) -> Any:
        """``repr``/``str``/``format`` of a tensor called from the script's own files logs the
        tensor's values (the first ``PRINTED_MAX`` in flat order); the library's nested calls
        (Parameter's repr calling Tensor's) are not logged again."""

        def logged(t: Any, *args: Any) -> Any:
            caller = sys._getframe(1)
            # a namedtuple's repr (``print(torch.svd(m))``) is Python code in one library
            # (lazytorch's return types) and C in the other (torch's): look through it
            while caller.f_back is not None and caller.f_code.co_filename == _COLLECTIONS:
                caller = caller.f_back
            if self.in_print or not caller.f_code.co_filename.startswith(self.script_dir):
                return to_text(t, *args)
            self.in_print = True
            try:
                text = to_text(t, *args)
                if not self.step_stamps:
                    self.printed.append(self.printable_values(t))
                return text
            finally:
                self.in_print = False

        return logged

    def printable_values(self, t: Any) -> list[Any]:
        if t.device.type == "meta" or t.layout != self.torch.strided:
            return []  # no values (meta) or a layout compared through its dense ops
        flat = t.detach().reshape(-1)[:PRINTED_MAX]
        return [v if isinstance(v, (bool, int)) else float(v) for v in flat.tolist()]

    def _logged_save(self) -> None:
        """``torch.save`` from the script logs the values of the tensors it saves (walking
        dicts, lists and tuples in order) with the printed ones: what a checkpointing
        tutorial produces is its checkpoint."""
        torch, save = self.torch, self.torch.save

        def walk(obj: Any) -> None:
            if isinstance(obj, torch.Tensor):
                if not self.step_stamps:
                    self.printed.append(self.printable_values(obj))
            elif isinstance(obj, dict):
                for v in obj.values():
                    walk(v)
            elif isinstance(obj, (list, tuple)):
                for v in obj:
                    walk(v)

        def logged_save(obj: Any, *args: Any, **kwargs: Any) -> Any:
            if sys._getframe(1).f_code.co_filename.startswith(self.script_dir):
                walk(obj)
            return save(obj, *args, **kwargs)

        torch.save = logged_save

    def _zeroed_empty(self) -> None:
        """torch's ``empty`` returns whatever the memory held, lazytorch's zeros: a script that
        prints an uninitialized tensor (the tensor tutorials do) is compared on zeros."""
        torch = self.torch

        def zeroed(original: Any) -> Any:
            def empty(*args: Any, **kwargs: Any) -> Any:
                out = original(*args, **kwargs)
                if out.device.type != "meta" and out.layout == torch.strided:
                    with torch.no_grad():
                        out.zero_()
                return out

            return empty

        for name in ("empty", "empty_like", "empty_strided"):
            setattr(torch, name, zeroed(getattr(torch, name)))
        torch.Tensor.new_empty = zeroed(torch.Tensor.new_empty)

    def _logged_conversion(self, convert: Any) -> Any:
        """``float(t)``, ``int(t)``, ``bool(t)`` logged like ``item()`` (the script's own)."""

        def logged(t: Any) -> Any:
            v = convert(t)
            if sys._getframe(1).f_code.co_filename.startswith(self.script_dir):
                self.items.append(v)
            return v

        return logged


def run_script(script: str, args: list[str], lib: str, tape_path: str) -> dict[str, Any]:
    """Run `script` with `args` under `lib` ("torch" records the tape, "lazytorch" replays
    it) and return what it logged."""
    if lib == "lazytorch":
        import lazytorch

        lazytorch.install_as_torch()
        with open(tape_path, "rb") as f:
            tape = Tape(pickle.load(f))
    else:
        tape = Tape()
    import torch

    hooks = Hooks(torch, tape, replay=lib == "lazytorch", real_torch=lib == "torch")
    hooks.install()
    result: dict[str, Any] = {"lib": lib, "ok": True, "error": None}
    script = os.path.abspath(script)
    hooks.script_dir = os.path.dirname(script) + os.sep
    saved_argv, saved_path, saved_cwd = sys.argv[:], sys.path[:], os.getcwd()
    random.seed(0)  # Python's and NumPy's generators: seeded alike in both runs
    np.random.seed(0)
    torch.manual_seed(0)  # a script that never seeds torch records the same tape every time
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as work:
        try:
            sys.argv = [script, *args]
            sys.path.insert(0, os.path.dirname(script))
            os.chdir(work)  # anything a script still writes lands in a scratch folder
            with contextlib.redirect_stdout(sys.stderr):
                runpy.run_path(script, run_name="__main__")
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            result["ok"] = False
            result["error"] = f"{type(e).__name__}: {e}".splitlines()[0][:500]
            result["error_type"] = type(e).__name__
            result["traceback"] = traceback.format_exc()[-4000:]
        finally:
            os.chdir(saved_cwd)
            sys.argv, sys.path[:] = saved_argv, saved_path
    result["wall_s"] = time.perf_counter() - start
    result["losses"] = hooks.losses
    result["items"] = [v if isinstance(v, (int, float, bool)) else float(v) for v in hooks.items]
    result["printed"] = hooks.printed
    result["step_stamps"] = [s - start for s in hooks.step_stamps]
    result["draws"] = dict(hooks.draws)
    if lib == "torch":
        with open(tape_path, "wb") as f:
            pickle.dump(dict(tape.queues), f)
    else:
        result["unused_draws"] = tape.unused()
    return result


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lib", choices=("torch", "lazytorch"), required=True)
    p.add_argument("--tape", required=True, help="the draws: written by torch, read by lazytorch")
    p.add_argument("--out", required=True, help="JSON file for the run's log")
    p.add_argument("script")
    p.add_argument("args", nargs=argparse.REMAINDER)
    a = p.parse_args()
    result = run_script(a.script, a.args, a.lib, a.tape)
    with open(a.out, "w") as f:
        json.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
