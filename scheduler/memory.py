"""Memory planning: where each temporary lives in one arena.

Temporaries are live from the step that writes them to the last step that reads them.
Walking the steps in order, each new temporary takes the first free block that fits (a
freed block is split; neighbours merge when freed), and a temporary whose last reader is the
step that writes a new one of the same size hands its block over when that step reads and
writes element by element at the same index (in-place reuse). Program inputs and outputs
are not in the arena: inputs belong to the caller and outputs are handed back.

The plan reports the arena size (the planned peak) next to the naive sum of all temporaries.

A *sizes-as-symbols* plan (``symbolic=True``, for a program compiled over symbolic sizes,
see `lazytorch.runtime.dynamic`) must stay valid when every size is a polynomial of the
symbols rather than the sample value the scheduler sees. So it makes only decisions that
hold for every size: a block is reused only by a temporary of exactly its size (never
split or merged, which compares sizes), and no offset is rounded (rounding is not a
polynomial): each temporary gets ``ALIGN`` bytes of slack instead, and the program aligns
its pointer into the slack at run time.
"""

from __future__ import annotations

from lazytorch.scheduler.kernel import Buffer, Extern, Kernel

__all__ = ["ALIGN", "plan_memory"]

ALIGN = 64  # bytes: a cache line, and enough for any vector load


def _aligned(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


def _inplace_ok(step: Kernel | Extern, dead: Buffer, new: Buffer) -> bool:
    """`step` reads `dead` only at the index where it writes `new`, element by element."""
    if not isinstance(step, Kernel) or step.kind not in ("pointwise", "reduction"):
        return False
    if dead.nbytes != new.nbytes or dead.shape != new.shape:
        return False
    stores = [s for s in step.stores if s.buffer == new.id]
    loads = [v for v in step.values if v.op == "load" and v.attr[0] == dead.id]
    if len(stores) != 1 or not loads:
        return False
    st = stores[0]
    if step.inner and not st.inner:
        return False
    # Every read of the dead buffer is at the store's index, and none is evaluated by a
    # pass after the store's (a later pass re-reads what this one overwrote).
    if not all(v.attr[1] == st.index and v.inner == st.inner for v in loads):
        return False
    late = passes_after(step, st.pass_no)
    return not any(v.id in late for v in loads)


def passes_after(step: Kernel, p: int) -> set[int]:
    """Values some pass after pass `p` of `step` evaluates (inner or outer level)."""
    out: set[int] = set()
    for q in range(p + 1, step.npasses + 1):
        roots = [r.value for r in step.reductions if r.pass_no == q]
        roots += [x for s in step.stores if s.pass_no == q for x in step.store_deps(s)]
        out.update(step.closure(roots, True))
        out.update(step.closure(roots, False))
    return out


def plan_memory(
    buffers: list[Buffer], steps: list[Kernel | Extern], symbolic: bool = False
) -> tuple[int, int]:
    """Assign arena offsets to temporaries; returns (arena bytes, naive bytes).

    `symbolic` plans for sizes that are symbols (see the module doc).
    """
    temps = {b.id: b for b in buffers if b.kind == "temp"}
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for i, s in enumerate(steps):
        for b in s.writes:
            if b in temps:
                first.setdefault(b, i)
                last[b] = max(last.get(b, i), i)
        for b in s.reads:
            if b in temps:
                last[b] = i
    if symbolic:
        naive = sum(temps[b].nbytes + ALIGN for b in first)
    else:
        naive = sum(_aligned(temps[b].nbytes) for b in first)
    dies_at: dict[int, list[int]] = {}
    for b, i in last.items():
        dies_at.setdefault(i, []).append(b)
    handed: set[int] = set()  # donors whose space a later buffer took over
    free: list[tuple[int, int]] = []  # (offset, size), sorted by offset
    top = 0
    for i, s in enumerate(steps):
        dying = [b for b in s.reads if b in temps and last.get(b) == i and first.get(b, i) < i]
        for b in sorted(s.writes):
            if b not in temps or first.get(b) != i:
                continue
            buf = temps[b]
            donor = next((d for d in dying if _inplace_ok(s, temps[d], buf)), None)
            if donor is not None:
                buf.offset = temps[donor].offset
                buf.inplace_of = donor
                handed.add(donor)
                dying.remove(donor)
                continue
            if symbolic:
                size = buf.nbytes + ALIGN
                k = next((k for k, (_, sz) in enumerate(free) if sz == size), None)
                if k is None:
                    buf.offset = top
                    top += size
                else:
                    buf.offset = free.pop(k)[0]
                continue
            size = _aligned(max(buf.nbytes, 1))
            for k, (off, sz) in enumerate(free):
                if sz >= size:
                    buf.offset = off
                    if sz == size:
                        free.pop(k)
                    else:
                        free[k] = (off + size, sz - size)
                    break
            else:
                buf.offset = top
                top += size
        # Free what dies here (and temporaries nobody reads after being written).
        for b in sorted(dies_at.get(i, ())):
            if temps[b].offset is not None and b not in handed:
                if symbolic:
                    free.append((temps[b].offset, temps[b].nbytes + ALIGN))
                else:
                    _release(free, temps[b].offset, _aligned(max(temps[b].nbytes, 1)))
    return top, naive


def _release(free: list[tuple[int, int]], off: int, size: int) -> None:
    free.append((off, size))
    free.sort()
    merged: list[tuple[int, int]] = []
    for o, s in free:
        if merged and merged[-1][0] + merged[-1][1] == o:
            merged[-1] = (merged[-1][0], merged[-1][1] + s)
        else:
            merged.append((o, s))
    free[:] = merged
