"""A proof that a memory plan never overwrites a value while a read of it is pending.

The memory plan (`lazytorch.scheduler.memory`) puts temporaries at offsets in one arena and
lets a temporary take over the block of one that dies in the step that writes it. Getting
that wrong computes a wrong answer with no error, so every plan made under verification
(``LAZYTORCH_VERIFY=1``, always on in the test suite) is checked here by a walk that shares
no decision code with the planner. The contract it checks:

* **Bounds.** Every temporary a step touches has an offset, and its bytes (plus the
  ``ALIGN`` slack of a sizes-as-symbols plan) lie inside the arena.
* **Inputs are read-only.** No step writes a program input (the caller's memory, e.g. a
  parameter or an optimizer state being updated: the update is a new output).
* **Between steps.** Steps run one after another. A step that writes temporary ``b`` must
  not touch bytes that hold a temporary ``a`` whose value is still needed: ``a`` written
  at or before this step and read at a later one. A temporary written in the same step
  as ``b`` may not overlap it either.
* **Within a step.** The passes of a kernel run in order for one outer point, but outer
  points run in parallel, so a step's reads and writes are concurrent. The one exception
  is element-wise reuse: ``b`` takes exactly ``a``'s bytes (same offset, element size and
  shape) in a pointwise or reduction kernel that stores ``b`` once, reads ``a`` only at
  that store's index and level, and evaluates no read of ``a`` in a pass after the
  store's — each element of ``a`` is then read by the one iteration that overwrites it,
  before it does. Extern calls (BLAS, argsort) and their epilogues get no exception: a
  GEMM reads its operands while its tiles are stored.

Which pass reads what is derived from the kernel body as codegen evaluates it: a pass
evaluates the values its reductions and stores depend on (`Kernel.closure`), counted at
both levels, which over-approximates (a row cache can only remove re-reads).

A sizes-as-symbols plan is checked at the sample sizes it was made for; the scheduler
plans every sample of a dynamic program, so every sample is checked.

>>> import lazytorch as lt
>>> from lazytorch.scheduler import schedule
>>> x = lt.tensor([[0.5] * 8] * 8)
>>> s = schedule(lt.debug.program((x.exp() @ x).sum()))
>>> check_plan(s)  # the plan as made: safe
>>> exp_out, product = s.buffers[1], s.buffers[2]
>>> product.offset = exp_out.offset  # the GEMM would write over its own operand
>>> check_plan(s)
Traceback (most recent call last):
...
lazytorch.scheduler.plan_check.PlanAliasError: memory plan: step k1 writes b2:f32[8, 8] over b1:f32[8, 8] (offsets 0, 0) while it reads b1:f32[8, 8]: an extern call reads its inputs while it writes
"""

from __future__ import annotations

from lazytorch.scheduler.kernel import Buffer, Extern, Kernel, Schedule

__all__ = ["PlanAliasError", "check_plan", "pass_reads"]

# Mirrors memory.ALIGN without importing the planner: the checker must not share its code.
_SLACK = 64


class PlanAliasError(AssertionError):
    """The memory plan lets a write clobber a value that is still to be read (names the
    step, both buffers and the pending read)."""


def pass_reads(k: Kernel) -> dict[int, dict[int, set[int]]]:
    """buffer id -> pass -> ids of the load values of that buffer the pass evaluates.

    Outer stores of pass 0 run after the last pass; they count as pass ``npasses + 1``.
    """
    out: dict[int, dict[int, set[int]]] = {}
    last = k.npasses + 1
    for p in range(0, k.npasses + 1):
        roots = [r.value for r in k.reductions if r.pass_no == p]
        roots += [x for s in k.stores if s.pass_no == p for x in k.store_deps(s)]
        if not roots:
            continue
        for vid in {*k.closure(roots, True), *k.closure(roots, False)}:
            v = k.values[vid]
            if v.op == "load":
                out.setdefault(v.attr[0], {}).setdefault(p or last, set()).add(vid)
    return out


def _store_pass(k: Kernel, p: int) -> int:
    return p or k.npasses + 1


def check_plan(sched: Schedule) -> None:
    """Raise `PlanAliasError` unless `sched`'s memory plan is safe (see the module doc)."""
    bufs = sched.buffers
    slack = _SLACK if sched.symbolic else 0
    temps = [b for b in bufs if b.kind == "temp"]
    first: dict[int, int] = {}  # temp -> first step writing it
    last: dict[int, int] = {}  # temp -> last step reading or writing it
    for i, s in enumerate(sched.steps):
        for b in s.writes:
            if bufs[b].kind == "input":
                raise PlanAliasError(f"{_where(s)} writes program input {bufs[b]}")
        for b in (*s.writes, *s.reads):
            if bufs[b].kind != "temp":
                continue
            if bufs[b].offset is None:
                raise PlanAliasError(f"{_where(s)} uses {bufs[b]}, which has no arena offset")
            last[b] = i
            if b in s.writes:
                first.setdefault(b, i)
    used = [b for b in temps if b.id in last]
    for b in used:
        end = b.offset + b.nbytes + slack
        if b.offset < 0 or end > sched.arena_bytes:
            raise PlanAliasError(
                f"{b} spans bytes {b.offset}..{end}, outside the arena ({sched.arena_bytes} B)"
            )
        if b.id not in first:
            raise PlanAliasError(f"{b} is read but no step writes it")
    overlaps = _overlapping([b for b in used if b.nbytes], slack)
    for i, s in enumerate(sched.steps):
        for b in sorted(s.writes):
            if bufs[b].kind != "temp":
                continue
            for a in overlaps.get(b, ()):
                if first[a] > i or last[a] < i:
                    continue  # a's value is not alive during this step
                _check_pair(sched, i, s, bufs[b], bufs[a], first[a], last[a])


def _check_pair(
    sched: Schedule, i: int, s: Kernel | Extern, b: Buffer, a: Buffer, a_first: int, a_last: int
) -> None:
    """Step `s` (number `i`) writes `b`, whose bytes overlap live temporary `a`."""
    if a_first == i:
        raise PlanAliasError(f"{_where(s)} writes {b} and {a}, which overlap in the arena")
    if a_last > i:
        raise PlanAliasError(
            f"{_where(s)} writes {b} over {a} (offsets {b.offset}, {a.offset}), which step "
            f"{sched.steps[a_last].name} reads later"
        )
    if a.id not in s.reads:
        return  # `a` is last written here and never read again: nothing pending to lose
    reason = _not_elementwise(s, b, a)
    if reason:
        raise PlanAliasError(
            f"{_where(s)} writes {b} over {a} (offsets {b.offset}, {a.offset}) while it "
            f"reads {a}: {reason}"
        )


def _not_elementwise(s: Kernel | Extern, b: Buffer, a: Buffer) -> str:
    """Why writing `b` over `a` within step `s` is not element-wise reuse ('' if it is)."""
    if not isinstance(s, Kernel):
        return "an extern call reads its inputs while it writes"
    if s.kind not in ("pointwise", "reduction"):
        return f"a {s.kind} kernel reads and writes at different indices"
    if b.offset != a.offset or b.dtype.itemsize != a.dtype.itemsize or b.shape != a.shape:
        return "the two do not occupy the same elements"
    stores = [st for st in s.stores if st.buffer == b.id]
    if len(stores) != 1:
        return f"{b} is stored {len(stores)} times"
    st = stores[0]
    loads = [v for v in s.values if v.op == "load" and v.attr[0] == a.id]
    for v in loads:
        if v.attr[1] != st.index or v.inner != st.inner:
            return f"v{v.id} reads {a} at [{v.attr[1]}], the store writes at [{st.index}]"
    at = _store_pass(s, st.pass_no)
    for p, vids in pass_reads(s).get(a.id, {}).items():
        if p > at:
            return f"pass {p} reads {a} (v{min(vids)}) after pass {at} overwrote it"
    return ""


def _overlapping(temps: list[Buffer], slack: int) -> dict[int, list[int]]:
    """temp id -> ids of the other temps whose arena bytes intersect its own."""
    spans = sorted((b.offset, b.offset + b.nbytes + slack, b.id) for b in temps)
    out: dict[int, list[int]] = {}
    open_: list[tuple[int, int]] = []  # (end, id) of spans that may still intersect
    for lo, hi, bid in spans:
        open_ = [(e, o) for e, o in open_ if e > lo]
        for _, o in open_:
            out.setdefault(bid, []).append(o)
            out.setdefault(o, []).append(bid)
        open_.append((hi, bid))
    return out


def _where(s: Kernel | Extern) -> str:
    return f"memory plan: step {s.name}"
