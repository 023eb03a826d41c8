"""Random small training steps, run on lazytorch (cpp, interpreter) and torch.

A case is a small model from one of a few families (conv/BatchNorm/pool/residual nets,
Linear+LayerNorm MLPs, a small attention block, an embedding classifier), an optimizer
(SGD with momentum, Nesterov and weight decay, Adam, AdamW) and 1-3 steps. Both libraries
start from the same weights (drawn once in NumPy and loaded into both) and see the same
batches. Each step is ``zero_grad(); loss.backward(); opt.step()`` with nothing read in
between, so on lazytorch forward, backward and update are one fused program; after each
step every parameter and buffer is compared with torch's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

import lazytorch as lt

from .programs import Mismatch, _compare


@dataclass
class TrainingCase:
    family: str
    arch: dict[str, Any]
    optimizer: str
    opt_kwargs: dict[str, Any]
    steps: int
    dtype: str = "float64"
    seed: int = 0
    train_mode: bool = True


# -- models, written once for both libraries ----------------------------------------------------


def build(lib: Any, case: TrainingCase) -> Any:
    nn = lib.nn
    F = nn.functional
    a = case.arch

    if case.family == "convnet":

        class ConvNet(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                c, f, k = a["channels"], a["filters"], a["kernel"]
                pad = k // 2 if a["same"] else 0
                self.conv1 = nn.Conv2d(c, f, k, stride=a["stride"], padding=pad, bias=a["bias"])
                self.bn1 = nn.BatchNorm2d(f) if a["bn"] else None
                self.conv2 = nn.Conv2d(f, f, 3, padding=1, bias=False) if a["residual"] else None
                self.bn2 = nn.BatchNorm2d(f) if a["residual"] and a["bn"] else None
                pool = nn.MaxPool2d if a["pool"] == "max" else nn.AvgPool2d
                self.pool = pool(2, stride=a["pool_stride"])
                self.fc = nn.Linear(f * a["pooled"] ** 2, a["classes"])

            def forward(self, x: Any) -> Any:
                h = self.conv1(x)
                if self.bn1 is not None:
                    h = self.bn1(h)
                h = F.relu(h)
                if self.conv2 is not None:
                    r = self.conv2(h)
                    if self.bn2 is not None:
                        r = self.bn2(r)
                    h = F.relu(h + r)
                h = self.pool(h)
                return self.fc(h.flatten(1))

        return ConvNet()

    if case.family == "mlp":

        class MLP(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                d, w = a["features"], a["width"]
                self.fc1 = nn.Linear(d, w)
                self.ln = nn.LayerNorm(w) if a["layernorm"] else None
                self.act = {"gelu": nn.GELU(), "tanh": nn.Tanh(), "silu": nn.SiLU()}[a["act"]]
                self.drop = nn.Dropout(a.get("dropout", 0.0))
                self.fc2 = nn.Linear(w, w)
                self.out = nn.Linear(w, a["classes"])

            def forward(self, x: Any) -> Any:
                h = self.act(self.fc1(x))
                if self.ln is not None:
                    h = self.ln(h)
                h = h + self.drop(self.act(self.fc2(h)))  # residual
                return self.out(h)

        return MLP()

    if case.family == "attention":

        class Attention(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                e = a["width"]
                self.qkv = nn.Linear(e, 3 * e, bias=False)  # a key bias has no gradient
                self.proj = nn.Linear(e, e)
                self.ln = nn.LayerNorm(e)
                self.out = nn.Linear(e, a["classes"])

            def forward(self, x: Any) -> Any:
                T, E = x.shape[1], x.shape[2]
                h = self.ln(x)
                q, k, v = self.qkv(h).split(E, dim=2)
                att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(E))
                if a["causal"]:
                    mask = lib.tril(lib.ones(T, T, dtype=x.dtype))
                    att = att.masked_fill(mask == 0, float("-inf"))
                att = F.softmax(att, dim=-1)
                x = x + self.proj(att @ v)
                return self.out(x.mean(1))

        return Attention()

    if case.family == "embedding":

        class Bag(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.emb = nn.Embedding(a["vocab"], a["width"])
                self.ln = nn.LayerNorm(a["width"]) if a["layernorm"] else None
                self.out = nn.Linear(a["width"], a["classes"])

            def forward(self, idx: Any) -> Any:
                h = self.emb(idx)
                if self.ln is not None:
                    h = self.ln(h)
                return self.out(h.mean(1))

        return Bag()
    raise ValueError(f"unknown family {case.family!r}")


def batches(case: TrainingCase) -> list[tuple[np.ndarray, np.ndarray]]:
    """The same batches for both libraries: inputs and integer class targets."""
    rng = np.random.default_rng(case.seed + 1)
    a, out = case.arch, []
    for _ in range(case.steps):
        b = a["batch"]
        if case.family == "convnet":
            x = rng.normal(size=(b, a["channels"], a["size"], a["size"]))
        elif case.family == "mlp":
            x = rng.normal(size=(b, a["features"]))
        elif case.family == "attention":
            x = rng.normal(size=(b, a["tokens"], a["width"]))
        else:
            x = rng.integers(0, a["vocab"], size=(b, a["tokens"]))
        if x.dtype.kind == "f":
            x = x.astype(case.dtype)
        out.append((x, rng.integers(0, a["classes"], size=(b,))))
    return out


def _load_same_weights(models: list[Any], case: TrainingCase) -> None:
    """One NumPy draw per parameter, loaded into every model (torch's own init is skipped)."""
    rng = np.random.default_rng(case.seed)
    names = [n for n, _ in models[0].named_parameters()]
    values = {}
    for name, p in models[0].named_parameters():
        shape = tuple(p.shape)
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
        values[name] = rng.uniform(-1, 1, size=shape) / math.sqrt(max(fan_in, 1))
        if name.endswith(("ln.weight", "bn1.weight", "bn2.weight")):
            values[name] = 1.0 + 0.1 * values[name]
    for m in models:
        lib = torch if isinstance(m, torch.nn.Module) else lt
        params = dict(m.named_parameters())
        assert sorted(params) == sorted(names), (sorted(params), sorted(names))
        with lib.no_grad():
            for name, p in params.items():
                p.copy_(lib.tensor(values[name].astype(case.dtype)))


def _optimizer(lib: Any, case: TrainingCase, params: Any) -> Any:
    return getattr(lib.optim, case.optimizer)(params, **case.opt_kwargs)


def _state(m: Any, lib: Any) -> dict[str, np.ndarray]:
    """Parameters and float buffers (BatchNorm running statistics) as NumPy."""
    out = {}
    for name, t in list(m.named_parameters()) + list(m.named_buffers()):
        if t.dtype.is_floating_point:
            out[name] = t.detach().numpy().copy()
    return out


def train(
    lib: Any,
    case: TrainingCase,
    dtype: str | None = None,
    whole_step: bool = False,
    compiled: list[Any] | None = None,
    decay_lr_from: int | None = None,
) -> list[dict[str, Any]]:
    """Run `case` on `lib`; after each step, the loss and every parameter and buffer.

    `whole_step` (lazytorch): the step is `lazytorch.compile`d, so from its fourth call on
    it is replayed as a whole step (lazytorch._compile.step) where the model allows.
    `decay_lr_from`: from that step (0-based) on, every group's lr is halved before each
    step, as an LR schedule outside the step does.
    """
    dtype = dtype or case.dtype
    if lib is torch:
        torch.manual_seed(case.seed)
    else:
        lt.manual_seed(case.seed)
    model = build(lib, case)
    model = model.double() if dtype == "float64" else model.float()
    model.train(case.train_mode)
    _load_same_weights([model], TrainingCase(**{**case.__dict__, "dtype": dtype}))
    opt = _optimizer(lib, case, model.parameters())
    F = lib.nn.functional

    def step(x: Any, y: Any) -> Any:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        if lib is lt:  # one cut for the whole step: loss, parameters, buffers, optimizer state
            lt.materialize()
        return loss

    if whole_step:
        step = lt.compile(step)
        if compiled is not None:
            compiled.append(step)
    states = []
    for i, (xb, yb) in enumerate(batches(case)):
        if decay_lr_from is not None and i >= decay_lr_from:
            for g in opt.param_groups:
                g["lr"] = g["lr"] * 0.5
        x = lib.tensor(xb.astype(dtype) if xb.dtype.kind == "f" else xb)
        y = lib.tensor(yb)
        loss = step(x, y)
        state = _state(model, lib)
        state["loss"] = np.asarray(loss.item())
        states.append(state)
    return states


RUNS = {"cpp": "cpp", "interpreter": "interpreter", "cpp compiled step": "cpp"}
# Steps of the compiled-step run: the optimizer's first step, the steady step recorded
# twice, then replays.
STEP_CAPTURE_STEPS = 6


def check_training(case: TrainingCase, runs: tuple[str, ...] = tuple(RUNS)) -> list[Mismatch]:
    """Train `case` on torch and on each lazytorch backend; the disagreements found.

    With dropout (p > 0) the masks are lazytorch's own random stream, not torch's: then
    the cpp backend is compared with the interpreter, seeded alike, instead of torch.
    """
    truth = None
    if case.arch.get("dropout", 0.0) > 0:
        with lt.backend("interpreter"):
            want = train(lt, case)
        runs = tuple(r for r in runs if r != "interpreter")
    else:
        want = train(torch, case)
        truth = train(torch, case, dtype="float64") if case.dtype == "float32" else None
    found = []
    if "cpp compiled step" in runs:
        found += check_step_capture(case)
        runs = tuple(r for r in runs if r != "cpp compiled step")
    for name in runs:
        try:
            with lt.backend(RUNS[name]):
                got = train(lt, case)
        except Exception as e:
            found.append(Mismatch(name, f"raises {type(e).__name__}", str(e)[:500]))
            continue
        for step, (g, w) in enumerate(zip(got, want)):
            for key in w:
                t = None if truth is None else truth[step][key]
                msg = _compare(f"step {step + 1} {key}", g.get(key), w[key], t, case.dtype)
                if msg:
                    found.append(Mismatch(name, "value", msg))
            if found:
                break  # later steps only repeat the first difference
    return found


def check_step_capture(case: TrainingCase) -> list[Mismatch]:
    """The case trained for `STEP_CAPTURE_STEPS` steps with the step compiled, against the
    same steps uncompiled on the same backend: bit for bit, since a replay runs the very
    programs the uncompiled step runs (a difference is a wrong binding or a stale input).
    The lr is constant over the recorded calls and decays after them (a number kept from
    the recording would then be stale)."""
    longer = TrainingCase(**{**case.__dict__, "steps": STEP_CAPTURE_STEPS})
    with lt.backend("cpp"):
        want = train(lt, longer, decay_lr_from=3)
        compiled: list[Any] = []
        try:
            got = train(lt, longer, whole_step=True, compiled=compiled, decay_lr_from=3)
        except Exception as e:
            return [Mismatch("cpp compiled step", f"raises {type(e).__name__}", str(e)[:500])]
    # Replayed unless the model draws random numbers (dropout in training mode).
    random = case.arch.get("dropout", 0.0) > 0 and case.train_mode
    if not random and compiled[0].stats["hits"] == 0:
        return [Mismatch("cpp compiled step", "not replayed", compiled[0].explain()[:800])]
    for step, (g, w) in enumerate(zip(got, want)):
        for key in w:
            if not np.array_equal(g[key], w[key], equal_nan=True):
                diff = np.max(np.abs(g[key].astype(np.float64) - w[key]))
                return [
                    Mismatch(
                        "cpp compiled step",
                        "value",
                        f"step {step + 1} {key}: differs from the uncompiled step by {diff:.3g}",
                    )
                ]
    return []


def assert_training(case: TrainingCase, runs: tuple[str, ...] = tuple(RUNS)) -> None:
    found = check_training(case, runs)
    assert not found, "\n".join(map(str, found)) + f"\n\n{case!r}"


# -- drawing ------------------------------------------------------------------------------------


def training_cases(dtype: str | None = None):
    """The hypothesis strategy of training cases."""
    from hypothesis import strategies as st

    @st.composite
    def draw_case(draw) -> TrainingCase:
        family = draw(st.sampled_from(["mlp", "convnet", "attention", "embedding"]))
        classes = draw(st.sampled_from([3, 2, 5]))
        batch = draw(st.sampled_from([4, 2, 3]))
        if family == "convnet":
            size = draw(st.sampled_from([6, 5, 4]))
            kernel = draw(st.sampled_from([3, 1]))
            stride = draw(st.sampled_from([1, 2]))
            same = draw(st.booleans())
            conv_out = (size + 2 * (kernel // 2 if same else 0) - kernel) // stride + 1
            pool_stride = draw(st.sampled_from([2, 1]))
            if conv_out < 2:
                stride, conv_out = 1, size + 2 * (kernel // 2 if same else 0) - kernel + 1
            pooled = (conv_out - 2) // pool_stride + 1
            bn = draw(st.booleans())
            arch = dict(
                channels=draw(st.sampled_from([2, 1, 3])),
                filters=draw(st.sampled_from([4, 2])),
                kernel=kernel,
                stride=stride,
                same=same,
                bias=not bn,  # a bias before BatchNorm has no gradient: Adam would amplify noise
                bn=bn,
                residual=draw(st.booleans()),
                pool=draw(st.sampled_from(["max", "avg"])),
                pool_stride=pool_stride,
                pooled=pooled,
                size=size,
            )
        elif family == "mlp":
            arch = dict(
                features=draw(st.sampled_from([5, 3, 8])),
                width=draw(st.sampled_from([8, 6])),
                layernorm=draw(st.booleans()),
                act=draw(st.sampled_from(["gelu", "tanh", "silu"])),
                dropout=draw(st.sampled_from([0.0, 0.0, 0.5])),
            )
        elif family == "attention":
            arch = dict(
                width=draw(st.sampled_from([8, 4])),
                tokens=draw(st.sampled_from([4, 3, 1])),
                causal=draw(st.booleans()),
            )
        else:
            arch = dict(
                vocab=draw(st.sampled_from([7, 12])),
                width=draw(st.sampled_from([6, 4])),
                tokens=draw(st.sampled_from([5, 3, 1])),
                layernorm=draw(st.booleans()),
            )
        arch.update(classes=classes, batch=batch)
        opt = draw(st.sampled_from(["SGD", "Adam", "AdamW"]))
        if opt == "SGD":
            momentum = draw(st.sampled_from([0.9, 0.0]))
            kw = dict(
                lr=0.1,
                momentum=momentum,
                weight_decay=draw(st.sampled_from([1e-2, 0.0])),
                nesterov=momentum > 0 and draw(st.booleans()),
            )
        else:
            kw = dict(lr=1e-2, weight_decay=draw(st.sampled_from([1e-2, 0.0])))
            if draw(st.booleans()):
                kw["amsgrad"] = True
        f32 = draw(st.integers(0, 3)) == 0 if dtype is None else dtype == "float32"
        return TrainingCase(
            family=family,
            arch=arch,
            optimizer=opt,
            opt_kwargs=kw,
            steps=draw(st.integers(1, 3)),
            dtype="float32" if f32 else "float64",
            seed=draw(st.integers(0, 2**16)),
            # eval mode: BatchNorm normalizes with its running statistics
            train_mode=family != "convnet" or draw(st.integers(0, 3)) > 0,
        )

    return draw_case()
