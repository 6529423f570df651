"""A5: Keep data resident on the device between kernels."""

from __future__ import annotations

from typing import Iterator

from cudalens.findings import Finding
from cudalens.rules import _host as host
from cudalens.rules._common import host_functions
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule
from cudalens.source import syntax as syn


@rule("A5", name="device-host-device-round-trip", layers="S")
def device_host_device_round_trip(ctx: RuleContext) -> Iterator[Finding]:
    """A buffer copied to the host and back between kernel launches.

    What it does:
        Flags a device-to-host copy of a device buffer that is later copied back from the same host
        buffer into the same device buffer, when kernels run before the first copy and after the
        second (or the pair sits in a loop that launches kernels).

    Why it matters:
        The round trip pays the bus twice to do some host-side step in between. Even a step that
        runs poorly on the GPU (a serial fix-up, a small scan) is often cheaper as a kernel than two
        transfers, and keeping the data resident also removes the synchronization the copies imply.

    Example:
        ```cuda
        step1<<<g, b>>>(d_x);
        cudaMemcpy(h_x, d_x, bytes, cudaMemcpyDeviceToHost);
        clamp_on_host(h_x, n);
        cudaMemcpy(d_x, h_x, bytes, cudaMemcpyHostToDevice);
        step2<<<g, b>>>(d_x);
        ```

    Fix:
        ```cuda
        step1<<<g, b>>>(d_x);
        clamp<<<g, b>>>(d_x, n);   // the host step as a kernel, however simple
        step2<<<g, b>>>(d_x);
        ```
    """
    src = ctx.source
    for fn in host_functions(src):
        cps = host.copies(fn.node)
        launch_lines = [syn.line(lc) for lc in syn.launches(fn.node)]
        for i, down in enumerate(cps):
            if down.kind != "DeviceToHost":
                continue
            d, h = syn.base_name(down.src), syn.base_name(down.dst)
            if not d or not h:
                continue
            for up in cps[i + 1 :]:
                if up.kind != "HostToDevice" or syn.base_name(up.dst) != d or syn.base_name(up.src) != h:
                    continue
                loop = next(
                    (
                        lp
                        for lp in syn.enclosing_loops(down.node)
                        if syn.contains(lp, up.node) and host.loop_has_launch(lp)
                    ),
                    None,
                )
                before = any(ln < down.line for ln in launch_lines)
                after = any(ln > up.line for ln in launch_lines)
                if loop is None and not (before and after):
                    continue
                yield ctx.finding(
                    down.line,
                    f"`{d}` goes to the host (`{h}`) here and back to the device at line {up.line},"
                    " between kernel launches",
                    "do the host-side step between the two copies in a kernel and keep the buffer on the device",
                    facts=(("device_buffer", d), ("host_buffer", h), ("return_line", up.line)),
                )
                break
