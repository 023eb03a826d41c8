"""Cliffs real scripts fell off (issue: index reads, collate, chained roll, the live
registry, infinite samplers): each is a regression test of the behaviour, not of time."""

from __future__ import annotations

import lazytorch as lt
import lazytorch.runtime as rt


def test_live_registry_stays_flat_under_in_place_updates():
    """Each in-place update registers the tensor's new pending value again; the registry
    must keep one entry per live tensor, not one per update (it grew to 12,027 entries in
    a 2,000-step loop and made every step slower)."""
    w = [lt.zeros(3) for _ in range(4)]
    sizes = []
    for step in range(25_000):
        for a in w:
            a += 1.0
        if step % 50 == 49:
            lt.materialize(*w)
        if step % 5_000 == 4_998:  # tensors pending, each updated 49 times since the cut
            rt.prune()
            sizes.append(len(rt._live))
    assert w[0].tolist() == [25_000.0] * 3
    assert max(sizes) <= 8, sizes
    # between prunes the list may grow, but only to a bounded multiple of the survivors
    assert len(rt._live) <= 2 * 1024 + 8
