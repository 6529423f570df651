"""Y2: Check CUDA availability and fall back."""

from __future__ import annotations

from typing import Iterator

from cudalens.findings import Finding
from cudalens.rules import _host as host
from cudalens.rules._common import host_functions
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule
from cudalens.source import syntax as syn


@rule("Y2", name="no-device-count-check", layers="S", advisory=True)
def no_device_count_check(ctx: RuleContext) -> Iterator[Finding]:
    """A program that uses CUDA without checking that a device exists.

    What it does:
        Flags the `main` function of a file that calls the CUDA API or launches kernels when the
        file never calls `cudaGetDeviceCount` (or the driver's `cuDeviceGetCount`). Files without
        `main` (libraries) are not judged.

    Why it matters:
        On a machine without a usable GPU or driver, the first CUDA call fails and the program
        crashes or, with unchecked calls, computes nothing. Querying the device count first lets the
        program report the problem clearly or fall back to a CPU path.

    Example:
        ```cuda
        int main() { float *d; cudaMalloc(&d, bytes); ... }
        ```

    Fix:
        ```cuda
        int count = 0;
        if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) { run_on_cpu(); return 0; }
        ```
    """
    src = ctx.source
    fns = list(host_functions(src))
    main = next((f for f in fns if f.name == "main"), None)
    if main is None:
        return
    uses_cuda = False
    for fn in fns:
        for c in syn.calls(fn.node):
            name = syn.call_name(c)
            if name in {"cudaGetDeviceCount", "cuDeviceGetCount"}:
                return
            if syn.is_launch(c) or host.CUDA_API.match(name):
                uses_cuda = True
    if uses_cuda:
        yield ctx.finding(
            syn.line(main.node),
            "the program uses CUDA but never calls cudaGetDeviceCount: without a GPU it fails at an arbitrary call",
            "call cudaGetDeviceCount() first; report clearly (or fall back to the CPU) when it fails or returns 0",
            facts=(("main_line", syn.line(main.node)),),
        )
