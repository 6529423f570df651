"""X1: Move as little data between host and device as possible."""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any, Iterator

from cudalens.findings import Finding, Priority
from cudalens.rules import _host as host
from cudalens.rules import _trace as tr
from cudalens.rules._common import host_functions
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule
from cudalens.source import syntax as syn


@rule("X1", name="copies-in-launch-loop", layers="S R L")
def copies_in_launch_loop(ctx: RuleContext) -> Iterator[Finding]:
    """Host-device copies repeated in a loop that launches kernels.

    What it does:
        Flags `cudaMemcpy`-family copies between host and device that sit inside a loop which also
        launches a kernel, so data goes over the bus on every iteration. Device-to-device copies
        and asynchronous copies on a named stream (the deliberate copy/compute overlap pattern) are
        not flagged.

    Why it matters:
        The bus between host and device (PCIe or C2C) is one to two orders of magnitude slower than
        device memory. Data that shuttles back and forth every iteration usually costs more than the
        kernels; keeping it resident on the device and copying once before and after the loop
        removes that cost, even if some steps run less efficiently on the GPU.

        A device-to-host copy whose host buffer nothing in the loop sends back to the device (results
        read out each iteration for verification or output) is reported at low priority: the data
        does not shuttle.

    Example:
        ```cuda
        for (int step = 0; step < steps; ++step) {
            cudaMemcpy(d_u, h_u, bytes, cudaMemcpyHostToDevice);
            diffuse<<<grid, block>>>(d_u, d_v, n);
            cudaMemcpy(h_u, d_v, bytes, cudaMemcpyDeviceToHost);
        }
        ```

    Fix:
        ```cuda
        cudaMemcpy(d_u, h_u, bytes, cudaMemcpyHostToDevice);
        for (int step = 0; step < steps; ++step) { diffuse<<<grid, block>>>(d_u, d_v, n); std::swap(d_u, d_v); }
        cudaMemcpy(h_u, d_u, bytes, cudaMemcpyDeviceToHost);
        ```
    """
    src = ctx.source
    for fn in host_functions(src):
        for c in host.bus_copies(fn.node):
            loop = next((lp for lp in syn.enclosing_loops(c.node) if host.loop_has_launch(lp)), None)
            if loop is None:
                continue
            direction = c.kind or "host-device"
            if _read_out_only(c, loop):
                yield dataclasses.replace(ctx.finding(
                    c.line,
                    f"`{c.func}` copies `{syn.norm(c.dst)}` to the host on every iteration of the loop at line "
                    f"{syn.line(loop)} and nothing in the loop sends it back: results read out (for checking or "
                    "output), not data shuttled for the device",
                    "if the loop is timed, copy the results out once after it; otherwise nothing to change",
                    kernel=None,
                    facts=(("copy_kind", c.kind), ("loop_line", syn.line(loop)), ("read_out_only", True)),
                ), priority=Priority.LOW)
                continue
            yield ctx.finding(
                c.line,
                f"`{c.func}` ({direction}) runs on every iteration of the loop at line {syn.line(loop)},"
                " which also launches kernels: the data crosses the bus each time",
                "keep the data on the device across iterations; copy once before and once after the loop",
                kernel=None,
                facts=(("copy_kind", c.kind), ("loop_line", syn.line(loop))),
            )


def _read_out_only(c: host.Copy, loop: Any) -> bool:
    """A device-to-host copy whose destination no host-to-device copy of the loop reads."""
    if c.kind != "DeviceToHost" or c.dst is None:
        return False
    dst = syn.norm(c.dst).lstrip("&")
    return not any(d.kind in ("HostToDevice", "Default", "") and d.src is not None
                   and syn.norm(d.src).lstrip("&") == dst for d in host.copies(loop))


@rule("X1", name="copies-in-launch-loop", layers="R", requires=("trace",))
def traced_copies_in_launch_loop(ctx: RuleContext) -> Iterator[Finding]:
    """Host-device copies of repeated sizes between the kernel launches of a traced run."""
    assert ctx.trace is not None
    trace = ctx.trace.records
    in_loop = [c for c in tr.host_device(trace) if tr.between_launches(trace, [c.start_ns])]
    sizes = Counter((c.kind, c.bytes) for c in in_loop)
    repeated = [c for c in in_loop if sizes[(c.kind, c.bytes)] >= tr.REPEAT]
    t = sum(c.duration_ns for c in repeated) * 1e-9
    b = sum(c.bytes for c in repeated)
    if repeated and (b >= tr.X1_MIN_BYTES or t >= 0.01 * ctx.trace.facts.span_s):
        yield tr.measured(ctx, f"{len(repeated)} host-device copies of repeated sizes run between kernel launches "
                          f"({tr.fmt_bytes(b)}, {tr.fmt_us(t)} of copy time): data crosses the bus on every iteration",
                          "keep the data on the device across iterations; copy once before and once after the loop",
                          t, (("copies", len(repeated)), ("bytes", b), ("copy_time_s", t)))
