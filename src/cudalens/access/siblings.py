"""Strided accesses whose siblings fill the gaps: ``out[3*x+0]``, ``out[3*x+1]``, ``out[3*x+2]``
(interleaved RGB), or ``s[2*t]`` and ``s[2*t+1]`` (a scan's pair load).

Each access alone has lane stride k and touches k times the sectors its bytes need, but the k
accesses of one statement group together read or write every element of the span: the sectors
one fetches, the next finds in L1/L2 (loads) or the L2 merges (stores). The traffic the group
moves is what its bytes need, so the stride is not a coalescing problem (its cost is k
instructions where one wide access would do, which is G4's and G6's to judge).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from cudalens.access import lanes as L
from cudalens.source import expr as E
from cudalens.source.model import Access


def mark_complementary(accesses: list[Access], ev: Any) -> list[Access]:
    """``accesses`` with ``covered_by_siblings`` set on global accesses of a group (same array,
    direction, loops and non-unit lane stride) whose union over the first warp is contiguous."""
    groups: dict[tuple, list[int]] = {}
    for i, a in enumerate(accesses):
        if a.space == "global" and a.lane_stride not in (None, 0, 1, -1) and a.index_expr is not None:
            groups.setdefault((a.array, a.op, a.loop_lines, a.lane_stride), []).append(i)
    out = list(accesses)
    for members in groups.values():
        if len(members) < 2:
            continue
        try:
            values = []
            for i in members:
                a = accesses[i]
                sets, _trial = ev.value_sets([a.index_expr], a.loop_context)
                vals = ev.with_block(sets[0], (0, 0, 0))
                idx = np.asarray(L.per_thread(L.evaluate(a.index_expr, vals), ev.nthreads))[:32]
                values.append(idx)
        except (E.Unknown, ValueError, TypeError, OverflowError, RecursionError, IndexError):
            continue
        union = np.unique(np.concatenate(values))
        if union.size > 1 and int(union[-1] - union[0]) + 1 == union.size:
            for i in members:
                out[i] = dataclasses.replace(out[i], covered_by_siblings=True)
    return out
