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

Pure functions on a :class:`~cudalens.trace.records.Trace`. The copies already flagged by the
synchronous-copy form of X4 (``cudaMemcpy`` without the async flag) are not counted again.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from cudalens.findings import Evidence, Finding, Layer, Priority
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


def _us(s: float) -> str:
    return f"{s * 1e6:.1f} us" if s < 1e-3 else f"{s * 1e3:.2f} ms"


def readback_findings(trace: Trace, span_s: float, program: str) -> list[Finding]:
    """The X4 read-back finding of a trace, with its measured cost (GPU idle after the read-backs)."""
    found = read_backs(trace)
    if not span_s or not _in_loop(trace, found):
        return []
    idle = sum(r.gpu_idle_ns for r in found) * 1e-9
    wait = sum(r.sync.duration_ns for r in found) * 1e-9
    sizes = sorted(r.copy.bytes for r in found)
    calls = sorted({r.sync.name.split("_v")[0] for r in found})
    per = idle / len(found)
    message = (f"{len(found)} read-backs of {sizes[len(sizes) // 2]} B (device-to-host copy, then "
               f"{', '.join(calls)}) between kernel launches (as PyTorch's .item() or CuPy's .get() of a small array does "
               "in a loop): each drains the GPU's queue, and the GPU "
               f"then idles {_us(per)} on average until the host launches again ({_us(idle)} in all, "
               f"{idle / span_s:.1%} of the assessed span); the host waits {_us(wait)} in the synchronizing calls")
    fix = ("read the value back less often (every N steps), keep running metrics on the device and read them "
           "once, or copy into pinned memory with non_blocking=True and read it an iteration later "
           "(an event instead of a stream synchronize)")
    evidence = (Evidence(Layer.RUNTIME, "read_backs", len(found)), Evidence(Layer.RUNTIME, "bytes_each", sizes[0]),
                Evidence(Layer.RUNTIME, "gpu_idle_after_s", idle), Evidence(Layer.RUNTIME, "host_wait_s", wait),
                Evidence(Layer.RUNTIME, "sync_calls", ", ".join(calls)))
    return [Finding(rule="X4", priority=Priority.INFO, section="BPG 9.1.2", kernel=None, file=program, line=None,
                    message=message, fix=fix, impact=min(idle / span_s, 1.0),
                    impact_text="of the assessed span (measured: GPU idle after the read-backs)",
                    evidence=evidence, status="confirmed")]
