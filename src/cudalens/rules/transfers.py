"""Host-device transfers, data residency and timing (BPG 2.2, 8.1, 9.1).

These rules read host functions from the kept syntax tree (see ``_host``): copies with direction and
stream, launches, and how host buffers were allocated.
"""

from __future__ import annotations

from typing import Any, Iterator

from cudalens.findings import Finding, Priority
from cudalens.rules import _host as host
from cudalens.rules import _syntax as syn
from cudalens.rules._common import finding, host_functions
from cudalens.rules.registry import rule

_LARGE_COPY = 1 << 20  # bytes; a copy at least this large is not "small"


def _deliberate_overlap(c: host.Copy) -> bool:
    """An async copy on a named stream: the staged copy/compute pattern, not a problem here."""
    return c.is_async and not c.on_default_stream


@rule(id="X1", name="copies-in-launch-loop", priority=Priority.HIGH, section="BPG 9.1", layers="S R L")
def check_x1(ctx: Any) -> Iterator[Finding]:
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
        for c in host.copies(fn.node):
            if c.kind in {"DeviceToDevice", "HostToHost"} or _deliberate_overlap(c):
                continue
            loop = next((lp for lp in syn.enclosing_loops(c.node) if host.loop_has_launch(lp)), None)
            if loop is None:
                continue
            direction = c.kind or "host-device"
            yield finding(
                "X1", src, c.line,
                f"`{c.func}` ({direction}) runs on every iteration of the loop at line {syn.line(loop)},"
                " which also launches kernels: the data crosses the bus each time",
                "keep the data on the device across iterations; copy once before and once after the loop",
                kernel=None, facts=(("copy_kind", c.kind), ("loop_line", syn.line(loop))),
            )


@rule(id="X2", name="small-copies-in-loop", priority=Priority.INFO, section="BPG 9.1", layers="S L")
def check_x2(ctx: Any) -> Iterator[Finding]:
    """Many separate copies in a loop instead of one batched copy.

    What it does:
        Flags host-device copies inside a loop that launches no kernel (loops that do launch are
        X1), unless the copy is known to move at least 1 MiB or is an asynchronous copy on a named
        stream. Typical cases: a row-by-row or element-by-element copy of a host structure.

    Why it matters:
        Each copy carries a fixed overhead of several microseconds (driver call, DMA set-up,
        synchronization) that dominates for small sizes; one large copy reaches the bus bandwidth.
        Packing the pieces into one contiguous staging buffer, or using `cudaMemcpy2D` for strided
        rows, replaces N overheads by one.

    Example:
        ```cuda
        for (int r = 0; r < rows; ++r)
            cudaMemcpy(d + r * cols, h[r], cols * sizeof(float), cudaMemcpyHostToDevice);
        ```

    Fix:
        ```cuda
        // pack into one contiguous host buffer (pinned), then one copy
        cudaMemcpy(d, h_packed, rows * cols * sizeof(float), cudaMemcpyHostToDevice);
        ```
    """
    src = ctx.source
    for fn in host_functions(src):
        for c in host.copies(fn.node):
            if c.kind in {"DeviceToDevice", "HostToHost"} or _deliberate_overlap(c):
                continue
            loops = syn.enclosing_loops(c.node)
            if not loops or any(host.loop_has_launch(lp) for lp in loops):
                continue
            size = syn.const_eval(c.size)
            if size is not None and size.value >= _LARGE_COPY:
                continue
            size_text = f"{int(size.value)} bytes" if size is not None else f"`{syn.text(c.size)}` bytes"
            yield finding(
                "X2", src, c.line,
                f"`{c.func}` of {size_text} is issued once per iteration of the loop at line"
                f" {syn.line(loops[0])}: each copy pays the fixed per-transfer overhead",
                "gather the pieces into one contiguous (pinned) buffer and copy once, or use cudaMemcpy2D"
                " for strided rows",
                facts=(("copy_size", syn.text(c.size)), ("loop_line", syn.line(loops[0]))),
            )


@rule(id="X3", name="pageable-host-buffer", priority=Priority.INFO, section="BPG 9.1.1", layers="S L")
def check_x3(ctx: Any) -> Iterator[Finding]:
    """Synchronous copies from or to pageable host memory.

    What it does:
        Flags host buffers allocated with `malloc`/`calloc`/`new`, held in a `std::vector`, or
        declared as arrays, that are the host side of a `cudaMemcpy`/`cudaMemcpy2D`. Buffers
        allocated with `cudaMallocHost`/`cudaHostAlloc` or registered with `cudaHostRegister` are
        pinned and not flagged. One finding per buffer, at its first copy.

    Why it matters:
        The DMA engines can only read page-locked memory. A copy from pageable memory is staged by
        the driver through an internal pinned buffer, chunk by chunk, which lowers the achieved
        bandwidth (often by half or more) and makes asynchronous copies synchronous. Pinned memory
        is a scarce system resource, so pin the buffers that are copied repeatedly, not everything.

    Example:
        ```cuda
        float *h = (float *)malloc(bytes);
        cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice);
        ```

    Fix:
        ```cuda
        float *h; cudaMallocHost(&h, bytes);   // ... cudaFreeHost(h);
        cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice);
        ```
    """
    src = ctx.source
    for fn in host_functions(src):
        bufs = host.host_buffers(fn.node)
        first: dict[str, tuple[host.Copy, int]] = {}
        for c in host.copies(fn.node):
            if c.is_async:
                continue  # X4 covers asynchronous copies
            name = syn.base_name(c.host_operand)
            if name in bufs.pageable:
                prev = first.get(name)
                first[name] = (prev[0], prev[1] + 1) if prev else (c, 1)
        for name, (c, count) in sorted(first.items(), key=lambda kv: kv[1][0].line):
            how = bufs.pageable[name]
            yield finding(
                "X3", src, c.line,
                f"host buffer `{name}` ({how}) is pageable and is copied {count} time(s): the driver stages"
                " each copy through a pinned bounce buffer",
                f"allocate `{name}` with cudaMallocHost/cudaHostAlloc (or cudaHostRegister it) if it is"
                " copied often or in bulk",
                facts=(("buffer", name), ("allocation", how), ("copies", count)),
            )


@rule(id="X4", name="async-copy-without-overlap", priority=Priority.INFO, section="BPG 9.1.2", layers="S L")
def check_x4(ctx: Any) -> Iterator[Finding]:
    """`cudaMemcpyAsync` that cannot overlap anything.

    What it does:
        Flags `cudaMemcpyAsync`/`cudaMemcpy2DAsync` calls issued on the default stream (stream
        argument omitted, `0`, `NULL`, `nullptr` or `cudaStreamLegacy`) or whose host side is a
        pageable buffer (see X3).

    Why it matters:
        Overlapping transfers with kernels needs three things: an asynchronous copy, a non-default
        stream (the legacy default stream synchronizes with all other streams), and pinned host
        memory (a pageable copy is staged and returns only when done). Missing any one of them
        makes the "async" copy behave like a plain `cudaMemcpy`.

    Example:
        ```cuda
        float *h = (float *)malloc(bytes);
        cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, 0);
        ```

    Fix:
        ```cuda
        float *h; cudaMallocHost(&h, bytes);
        cudaStream_t s; cudaStreamCreate(&s);
        cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, s);
        ```
    """
    src = ctx.source
    for fn in host_functions(src):
        bufs = host.host_buffers(fn.node)
        for c in host.copies(fn.node):
            if not c.is_async:
                continue
            reasons = []
            if c.on_default_stream:
                reasons.append("on the default stream" if c.stream is None else f"on stream `{syn.text(c.stream)}`"
                               " (the default stream)")
            name = syn.base_name(c.host_operand)
            if name in bufs.pageable:
                reasons.append(f"from pageable host memory `{name}` ({bufs.pageable[name]})")
            if not reasons:
                continue
            yield finding(
                "X4", src, c.line,
                f"`{c.func}` {' and '.join(reasons)}: it cannot overlap with kernels or other copies",
                "issue it on a created stream, with a pinned host buffer (cudaMallocHost/cudaHostAlloc)",
                facts=(("default_stream", c.on_default_stream), ("pageable", name in bufs.pageable)),
            )


@rule(id="A5", name="device-host-device-round-trip", priority=Priority.INFO, section="BPG 2.2", layers="S")
def check_a5(ctx: Any) -> Iterator[Finding]:
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
            for up in cps[i + 1:]:
                if up.kind != "HostToDevice" or syn.base_name(up.dst) != d or syn.base_name(up.src) != h:
                    continue
                loop = next((lp for lp in syn.enclosing_loops(down.node)
                             if syn.contains(lp, up.node) and host.loop_has_launch(lp)), None)
                before = any(ln < down.line for ln in launch_lines)
                after = any(ln > up.line for ln in launch_lines)
                if loop is None and not (before and after):
                    continue
                yield finding(
                    "A5", src, down.line,
                    f"`{d}` goes to the host (`{h}`) here and back to the device at line {up.line},"
                    " between kernel launches",
                    "do the host-side step between the two copies in a kernel and keep the buffer on the device",
                    facts=(("device_buffer", d), ("host_buffer", h), ("return_line", up.line)),
                )
                break


_TIMERS = {"now", "clock", "gettimeofday", "clock_gettime", "omp_get_wtime", "QueryPerformanceCounter",
           "MPI_Wtime", "timespec_get"}
_SYNCS = {"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize", "cudaThreadSynchronize",
          "cudaMemcpy", "cudaMemcpy2D", "cuCtxSynchronize", "cuStreamSynchronize", "synchronize"}
_ASYNC_WORK = {"cudaLaunchKernel", "cudaLaunchCooperativeKernel", "cudaMemcpyAsync", "cudaMemsetAsync",
               "cudaGraphLaunch", "cuLaunchKernel"}


@rule(id="T1", name="host-timer-without-sync", priority=Priority.INFO, section="BPG 8.1", layers="S R")
def check_t1(ctx: Any) -> Iterator[Finding]:
    """A host timer read before the timed GPU work has finished.

    What it does:
        Flags host timer reads (`std::chrono::...::now()`, `clock()`, `gettimeofday`,
        `clock_gettime`, `omp_get_wtime`) that close an interval containing a kernel launch (or
        another asynchronous call) when no synchronizing call (`cudaDeviceSynchronize`,
        `cudaStreamSynchronize`, `cudaEventSynchronize`, a blocking `cudaMemcpy`) comes between
        the last launch and the read.

    Why it matters:
        Launches return to the host as soon as the work is queued. The host timer then measures the
        launch overhead, not the kernel: results look impossibly fast and change with whatever
        happens to synchronize later. Either synchronize before reading the timer, or time on the
        GPU with CUDA events recorded in the same stream.

    Example:
        ```cuda
        auto t0 = std::chrono::steady_clock::now();
        saxpy<<<g, b>>>(n, a, x, y);
        auto t1 = std::chrono::steady_clock::now();
        ```

    Fix:
        ```cuda
        cudaEventRecord(start); saxpy<<<g, b>>>(n, a, x, y); cudaEventRecord(stop);
        cudaEventSynchronize(stop); cudaEventElapsedTime(&ms, start, stop);
        ```
    """
    src = ctx.source
    for fn in host_functions(src):
        events: list[tuple[int, str, Any]] = []
        for c in syn.calls(fn.node):
            name = syn.call_name(c)
            if syn.is_launch(c) or name in _ASYNC_WORK:
                events.append((c.start_byte, "work", c))
            elif name in _TIMERS:
                events.append((c.start_byte, "timer", c))
            elif name in _SYNCS:
                events.append((c.start_byte, "sync", c))
        events.sort(key=lambda e: e[0])
        started = False
        pending: Any = None  # last unsynchronized launch since the last timer read
        for _, kind, node in events:
            if kind == "work":
                pending = node
            elif kind == "sync":
                pending = None
            elif kind == "timer":
                if started and pending is not None:
                    yield finding(
                        "T1", src, syn.line(node),
                        f"the host timer `{syn.text(node)}` is read while the launch at line {syn.line(pending)}"
                        " may still be running: it measures queuing, not execution",
                        "call cudaDeviceSynchronize() (or cudaEventSynchronize on an event after the launch)"
                        " before reading the timer, or time with CUDA events",
                        facts=(("launch_line", syn.line(pending)),),
                    )
                started = True
                pending = None
