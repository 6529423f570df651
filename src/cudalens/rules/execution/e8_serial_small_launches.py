"""E8: Independent kernels in separate streams."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any, Iterator

from cudalens.compiled.names import kernel_base_name
from cudalens.findings import Finding
from cudalens.rules import _trace as tr
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule


@rule("E8", name="serial-small-launches", layers="R", requires=("trace",))
def serial_small_launches(ctx: RuleContext) -> Iterator[Finding]:
    """Back-to-back launches on one stream that each leave multiprocessors without work.

    What it does:
        From a traced run of a program that launches on one stream only, finds runs of two or more
        consecutive launches whose grids have fewer blocks than the device has SMs; four or more
        such launches in all are reported, with their kernel time.

    Why it matters:
        Launches on one stream run one after the other: a grid that fills a quarter of the SMs
        leaves three quarters idle for its whole duration. Independent kernels on separate streams
        may run concurrently and fill the device together.

    Example:
        ```cuda
        for (int i = 0; i < 16; ++i)
            small_kernel<<<8, 256>>>(part[i]);   // 8 blocks on a 132-SM H100, one after another
        ```

    Fix:
        Launch independent kernels on separate non-default streams, or merge them into one launch
        that covers all the parts.
    """
    assert ctx.trace is not None
    trace, sm_count = ctx.trace.records, ctx.trace.sm_count
    if not sm_count or len(trace.kernels) < 2:
        return
    by_stream: dict[int, list[Any]] = defaultdict(list)
    for k in trace.kernels:
        by_stream[k.stream].append(k)
    if len(by_stream) > 1:
        return  # the program already uses several streams
    runs, cur = [], []
    for k in trace.kernels:
        blocks = k.grid[0] * k.grid[1] * k.grid[2]
        if blocks < sm_count:
            cur.append(k)
        else:
            if len(cur) >= 2:
                runs.append(cur)
            cur = []
    if len(cur) >= 2:
        runs.append(cur)
    serial = [k for run in runs for k in run]
    if len(serial) < 4:
        return
    t = sum(k.duration_ns for k in serial) * 1e-9
    names = Counter(kernel_base_name(k.name) for k in serial).most_common(3)
    yield tr.measured(ctx, f"{len(serial)} launches in {len(runs)} back-to-back runs on one stream each fill fewer "
                      f"blocks than the {sm_count} multiprocessors ({tr.fmt_us(t)}; mostly "
                      f"{', '.join(n for n, _ in names)}): where they are independent they could run concurrently",
                      "launch independent kernels on separate non-default streams (or merge them into one launch)",
                      t / 2, (("launches", len(serial)), ("kernel_time_s", t), ("sm_count", sm_count)))
