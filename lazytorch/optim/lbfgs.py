"""L-BFGS with torch's two-loop recursion, stopping rules and strong-Wolfe line search.

L-BFGS decides on the host: whether a curvature pair is kept, whether the direction is a
descent direction, when to stop, and where the line search steps next. So each inner
iteration reads a few numbers (the loss, dot products, maxima) — each read is a graph cut —
while the vectors themselves (the flat gradient, the direction, the history) stay lazy
tensors. The line search's arithmetic runs on Python floats: for float64 parameters that is
torch's arithmetic exactly, for float32 it is done in double precision where torch rounds
to float32.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import Any

from lazytorch.autograd.grad_mode import enable_grad, no_grad
from lazytorch.ops.creation import zeros
from lazytorch.ops.shape import cat
from lazytorch.optim.optimizer import Optimizer, ParamsT, check_number, same_value
from lazytorch.runtime import materialize, materialize_nodes
from lazytorch.tensor import Tensor

__all__ = ["LBFGS"]

# Curvature pairs the two-loop recursion handles per cut (a few small programs, each reused).
PAIRS_PER_CUT = 4


def _cut(*tensors: Tensor) -> None:
    """Compute `tensors` now, as a cut located at the calling line of this file.

    Every cut inside ``step`` would otherwise be located at the user's ``step`` line, and
    the dozen different programs L-BFGS cuts there would read as one location recompiling.
    """
    here = (__file__, sys._getframe(1).f_lineno)
    materialize_nodes([t._node for t in tensors], cause="LBFGS", loc=here)


def _host(*values: Any, keep: tuple[Tensor, ...] = ()) -> list[float]:
    """The values of 0-d tensors (or numbers) as Python floats, computed by one cut together
    with the tensors in `keep` (which later cuts read, and so must not compute again)."""
    here = (__file__, sys._getframe(1).f_lineno)
    tensors = [t for t in (*values, *keep) if isinstance(t, Tensor)]
    materialize_nodes([t._node for t in tensors], cause="LBFGS", loc=here)
    return [float(v.item()) if isinstance(v, Tensor) else float(v) for v in values]


def _cubic_interpolate(
    x1: float,
    f1: float,
    g1: float,
    x2: float,
    f2: float,
    g2: float,
    bounds: tuple[float, float] | None = None,
) -> float:
    """The minimizer of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped to the
    bounds (by default the interval between x1 and x2); the midpoint if it has none."""
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square >= 0:
        d2 = math.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(
    obj_func: Callable[[list[Tensor], float, Tensor], tuple[float, Tensor]],
    x: list[Tensor],
    t: float,
    d: Tensor,
    f: float,
    g: Tensor,
    gtd: float,
    c1: float = 1e-4,
    c2: float = 0.9,
    tolerance_change: float = 1e-9,
    max_ls: int = 25,
) -> tuple[float, Tensor, float, int]:
    """torch's strong-Wolfe line search along `d` from step `t`: bracket, then zoom by
    cubic interpolation. Returns the loss, flat gradient and step it ends at, and the number
    of function evaluations. (minFunc's ``WolfeLineSearch``, as torch ports it.)"""
    (d_norm,) = _host(d.abs().max())
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    (gtd_new,) = _host(g_new.dot(d))

    # Bracket an interval containing a point satisfying the Wolfe criteria.
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new], [gtd_prev, gtd_new]
            break
        # Interpolate, extrapolating by at most 10x.
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(
            t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step)
        )
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new, gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        (gtd_new,) = _host(g_new.dot(d))
        ls_iter += 1

    if ls_iter == max_ls:  # reached the maximum number of iterations
        bracket, bracket_f, bracket_g = [0.0, t], [f, f_new], [g, g_new]

    # Zoom: shrink the bracket until a point satisfies the criteria.
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break  # the line search is stuck
        t = _cubic_interpolate(
            bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1]
        )
        # Too close to a bracket end while making little progress: move away from it.
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False

        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        (gtd_new,) = _host(g_new.dot(d))
        ls_iter += 1

        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            # Armijo condition not satisfied, or not lower than the lowest point.
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new, gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True  # the Wolfe conditions hold
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                # The old high becomes the new low.
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]
            # The new point becomes the new low.
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new, gtd_new

    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals


class LBFGS(Optimizer):
    """L-BFGS (as minFunc does it, and torch after it), torch's algorithm exactly.

    ``step(closure)`` runs up to `max_iter` iterations (and `max_eval` evaluations of the
    closure, default ``max_iter * 5 // 4``): the two-loop recursion over the last
    `history_size` curvature pairs gives a direction; the step along it is ``lr`` (the first
    iteration ever: ``min(1, 1 / |g|_1) * lr``), or, with ``line_search_fn="strong_wolfe"``,
    what the line search finds. It stops early when ``max|g| <= tolerance_grad``, or when
    the step or the loss changes by less than `tolerance_change`. One parameter group only;
    the state (torch's keys: ``func_evals``, ``n_iter``, ``d``, ``t``, ``old_dirs``,
    ``old_stps``, ``ro``, ``H_diag``, ``prev_flat_grad``, ``prev_loss``, ``al``) is kept
    under the first parameter.

    The closure is required and re-evaluates the loss with its gradients; ``step`` returns
    the loss of its first evaluation. The decisions read numbers on the host every iteration
    (see the module docstring); ``step`` ends with a cut like every optimizer's.

    >>> import lazytorch
    >>> from lazytorch.optim import LBFGS
    >>> w = lazytorch.tensor([1.0, -2.0], dtype=lazytorch.float64, requires_grad=True)
    >>> opt = LBFGS([w], line_search_fn="strong_wolfe")
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = ((w - 3.0) ** 2).sum()
    ...     loss.backward()
    ...     return loss
    >>> opt.step(closure).item()    # the loss before the step
    29.0
    >>> [round(v, 6) for v in w.tolist()]
    [3.0, 3.0]
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1,
        max_iter: int = 20,
        max_eval: int | None = None,
        tolerance_grad: float = 1e-7,
        tolerance_change: float = 1e-9,
        history_size: int = 100,
        line_search_fn: str | None = None,
    ) -> None:
        check_number("lr", lr)
        if not lr >= 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {
            "lr": lr,
            "max_iter": max_iter,
            "max_eval": max_eval,
            "tolerance_grad": tolerance_grad,
            "tolerance_change": tolerance_change,
            "history_size": history_size,
            "line_search_fn": line_search_fn,
        }
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params: list[Tensor] = self.param_groups[0]["params"]

    def _gather_flat_grad(self) -> Tensor:
        views = [
            zeros(p.numel(), dtype=p.dtype) if p.grad is None else p.grad.reshape(-1)
            for p in self._params
        ]
        return cat(views, 0)

    def _add_grad(self, step_size: float, update: Tensor) -> None:
        offset = 0
        for p in self._params:
            numel = p.numel()
            p.add_(update[offset : offset + numel].view_as(p), alpha=step_size)
            offset += numel

    def _directional_evaluate(
        self, closure: Callable[[], Any], x: list[Tensor], t: float, d: Tensor
    ) -> tuple[float, Tensor]:
        """The loss and flat gradient at ``x + t * d``; the parameters are put back to x."""
        self._add_grad(t, d)
        loss_t = closure()
        flat_grad = self._gather_flat_grad()
        (loss,) = _host(loss_t, keep=(flat_grad,))
        for p, pdata in zip(self._params, x, strict=True):
            p.copy_(pdata)
        return loss, flat_grad

    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Run up to ``max_iter`` L-BFGS iterations; `closure` re-evaluates the loss and
        its gradients (it runs under grad mode). Returns the closure's first loss."""
        with no_grad():
            loss = self._step(enable_grad()(closure))
        materialize()
        return loss

    def _step(self, closure: Callable[[], Any]) -> Any:
        group = self.param_groups[0]
        lr = group["lr"]
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]
        check_number("lr", lr)

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = closure()
        flat_grad = self._gather_flat_grad()
        loss, grad_max = _host(orig_loss, flat_grad.abs().max(), keep=(flat_grad,))
        current_evals = 1
        state["func_evals"] += 1
        if grad_max <= tolerance_grad:  # already optimal
            return orig_loss

        d = state.get("d")
        t = state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag = state.get("H_diag")
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1

            # The descent direction.
            if state["n_iter"] == 1:
                d = flat_grad.neg()
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                # Update the memory with the new curvature pair (y, s) if it is positive.
                y = flat_grad.sub(prev_flat_grad)
                s = d.mul(t)
                ys = y.dot(s)
                if _host(ys, keep=(y, s))[0] > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)  # an estimate of the Hessian's diagonal
                    _cut(ro[-1], H_diag)

                # The two-loop recursion on lazy tensors, cut after every PAIRS_PER_CUT
                # pairs: the cuts are a few programs reused whatever the history's length,
                # where one cut per direction would be a new program for every length.
                num_old = len(old_dirs)
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = state["al"]
                q = flat_grad.neg()
                _cut(q)  # (so that every cut below starts from computed values)
                for n, i in enumerate(range(num_old - 1, -1, -1), 1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q.sub_(old_dirs[i] * al[i])
                    if n % PAIRS_PER_CUT == 0 or i == 0:
                        _cut(q, *al[i:num_old][:PAIRS_PER_CUT])
                d = r = q * H_diag
                _cut(r)
                for i in range(num_old):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r.add_(old_stps[i] * (al[i] - be_i))
                    if (i + 1) % PAIRS_PER_CUT == 0 or i == num_old - 1:
                        _cut(r)

            prev_flat_grad = flat_grad
            prev_loss = loss

            # The step length: lr, or on the very first iteration a step bounded by |g|_1.
            if state["n_iter"] == 1:
                inverse = 1.0 / flat_grad.abs().sum()
                inverse_value, scaled = _host(inverse, inverse * lr)
                t = scaled if inverse_value < 1.0 else lr
            else:
                t = lr

            (gtd,) = _host(flat_grad.dot(d), keep=(d,))  # the directional derivative
            if gtd > -tolerance_change:
                break  # not a descent direction

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = [same_value(p) for p in self._params]

                def obj_func(x: list[Tensor], t: float, d: Tensor) -> tuple[float, Tensor]:
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals
                )
                self._add_grad(t, d)
                (grad_max,) = _host(flat_grad.abs().max(), keep=tuple(self._params))
            else:
                # A fixed step; re-evaluate the loss and gradient unless this was the last.
                self._add_grad(t, d)
                if n_iter != max_iter:
                    loss_t = closure()
                    flat_grad = self._gather_flat_grad()
                    loss, grad_max = _host(
                        loss_t, flat_grad.abs().max(), keep=(flat_grad, *self._params)
                    )
                    ls_func_evals = 1

            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            # The stopping conditions.
            if n_iter == max_iter or current_evals >= max_eval:
                break
            if grad_max <= tolerance_grad:
                break
            if _host(d.mul(t).abs().max())[0] <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state["d"] = d
        state["t"] = t
        state["old_dirs"] = old_dirs
        state["old_stps"] = old_stps
        state["ro"] = ro
        state["H_diag"] = H_diag
        state["prev_flat_grad"] = prev_flat_grad
        state["prev_loss"] = prev_loss
        return orig_loss
