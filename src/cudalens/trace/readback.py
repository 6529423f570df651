"""X4, the read-back pattern: a few bytes copied to the host, then a synchronize, every loop iteration.

A training loop's ``loss.item()`` (also ``float(t)``, ``t.cpu()`` of a scalar, ``.tolist()`` of a small
tensor, CuPy's ``.get()`` of a reduction) copies a few bytes device-to-host with ``cudaMemcpyAsync``
and then waits for the stream (``cudaStreamSynchronize``). In a CUPTI trace: a small DtoH copy
record, then a synchronizing runtime call, with no kernel launched in between (runtime correlation
ids grow with every call, so "between" is a range of ids). The copy itself is cheap; the cost is
that the host cannot queue the next iteration's work before the GPU has drained its queue, so the
GPU then idles while the host launches again. That idle time -- from the end of the copy to the
next GPU work -- is the measured cost (an upper bound on what removing the read-back saves: the
host's own launch time may still show); the host's wait in the synchronizing call is evidence.

Pure functions on a :class:`~cudalens.trace.records.Trace`; the finding is the X4 rule's. The copies already flagged by the
synchronous-copy form of X4 (``cudaMemcpy`` without the async flag) are not counted again.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from cudalens.trace.records import ApiRecord, CopyRecord, Trace

READBACK_MAX_BYTES = 4096  # a scalar, a few metrics: not a result being downloaded
MIN_REPEATS = 3  # seen at least this often, kernels launched between them: a loop, not a one-off


@dataclass(frozen=True)
class ReadBack:
    copy: CopyRecord
    sync: ApiRecord  # the synchronizing call that waited for it
    gpu_idle_ns: int  # copy end -> next GPU work (0 when other work was already queued)


def _syncing(api: ApiRecord) -> bool:
    return "ynchronize" in api.name


def read_backs(trace: Trace) -> list[ReadBack]:
    """Small DtoH copies followed by a synchronize before the next kernel launch (see module docstring)."""
    syncs = sorted((a for a in trace.api if _syncing(a)), key=lambda a: a.correlation)
    if not syncs:
        return []
    sync_ids = [a.correlation for a in syncs]
    launch_ids = sorted(k.correlation for k in trace.kernels)
    starts = sorted(s for s, _ in trace.gpu_records)
    out = []
    for c in trace.copies:
        if c.kind != "DtoH" or c.bytes > READBACK_MAX_BYTES or not c.is_async:
            continue
        i = bisect.bisect_right(sync_ids, c.correlation)
        if i == len(syncs):
            continue
        sync = syncs[i]
        j = bisect.bisect_right(launch_ids, c.correlation)
        if j < len(launch_ids) and launch_ids[j] < sync.correlation:
            continue  # a kernel was launched before the synchronize: the host did not wait for this copy
        n = bisect.bisect_right(starts, c.end_ns)
        idle = starts[n] - c.end_ns if n < len(starts) else 0
        out.append(ReadBack(c, sync, max(idle, 0)))
    return out


def _in_loop(trace: Trace, found: list[ReadBack]) -> bool:
    """At least MIN_REPEATS read-backs, with kernel launches between consecutive ones: a loop with work."""
    if len(found) < MIN_REPEATS:
        return False
    launch_ids = sorted(k.correlation for k in trace.kernels)
    ids = sorted(r.copy.correlation for r in found)
    separated = sum(1 for a, b in zip(ids, ids[1:])
                    if bisect.bisect_right(launch_ids, a) < bisect.bisect_left(launch_ids, b))
    return separated + 1 >= MIN_REPEATS


def loop_read_backs(trace: Trace) -> tuple[ReadBack, ...]:
    """The read-backs of ``trace`` when they repeat between kernel launches (a loop); else none.
    The X4 rule reports them (rules/transfers/x4_async_copy_without_overlap.py)."""
    found = read_backs(trace)
    return tuple(found) if _in_loop(trace, found) else ()
