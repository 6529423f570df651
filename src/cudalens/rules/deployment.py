"""Deployment and correctness checks in host code (BPG 16.1, 16.2)."""

from __future__ import annotations

import re
from typing import Any, Iterator

from cudalens.findings import Finding, Priority
from cudalens.rules import _syntax as syn
from cudalens.rules._common import finding, host_functions
from cudalens.rules.registry import rule

_API = re.compile(r"^cu(da)?[A-Z]\w*$")
# Calls whose return value is not an error to check (or which read the error state itself).
_NOT_CHECKED = {"cudaGetLastError", "cudaPeekAtLastError", "cudaGetErrorString", "cudaGetErrorName",
                "cuGetErrorString", "cuGetErrorName"}
_ERROR_READERS = {"cudaGetLastError", "cudaPeekAtLastError"}


def _error_macros(source: Any) -> set[str]:
    """Function-like macros of the file whose body reads the launch error state."""
    out = set()
    root = syn.source_root(source)
    for n in syn.nodes_of(root, "preproc_function_def"):
        if n.type == "preproc_function_def":
            body = syn.text(n.child_by_field_name("value"))
            if any(r in body for r in _ERROR_READERS):
                out.add(syn.text(n.child_by_field_name("name")))
    for name, body in (getattr(source, "defines", None) or {}).items():
        if any(r in str(body) for r in _ERROR_READERS):
            out.add(name)
    return out


def _macro_names(source: Any) -> set[str]:
    """Every function-like macro of the file (a user's wrapper is not an API call)."""
    root = syn.source_root(source)
    names = {syn.text(n.child_by_field_name("name")) for n in syn.nodes_of(root, "preproc_function_def")}
    return names | set(getattr(source, "defines", None) or {})


def _error_functions(source: Any) -> set[str]:
    """Host functions of the file that read the launch error state (helpers like `check_launch()`)."""
    out = set()
    for fn in host_functions(source):
        if any(syn.call_name(c) in _ERROR_READERS for c in syn.calls(fn.body)):
            out.add(fn.name)
    return out


def _discarded(call: Any) -> bool:
    """True when the call is a statement of its own, its result thrown away."""
    parent = call.parent
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    return parent is not None and parent.type == "expression_statement"


@rule(id="Y1", name="unchecked-cuda-call", priority=Priority.INFO, section="BPG 16.2", layers="S")
def check_y1(ctx: Any) -> Iterator[Finding]:
    """CUDA API calls and kernel launches whose errors nobody checks.

    What it does:
        Flags runtime/driver API calls (`cuda*`, `cu*`) in host code whose return value is thrown
        away: not assigned, tested, returned, passed to a checking macro or function, nor
        explicitly discarded with `(void)`. Flags kernel launches not followed, before the next
        launch in the same function, by `cudaGetLastError()`/`cudaPeekAtLastError()` (directly or
        through a macro or helper of the file that calls them).

    Why it matters:
        Every runtime call returns an error code, and a launch reports configuration errors
        (too many threads, too much shared memory) only through `cudaGetLastError`. Unchecked,
        a failure passes silently: the program goes on with garbage, and the error surfaces later
        at an unrelated call, or never. Benchmarks of a kernel that did not run are fast and wrong.

    Example:
        ```cuda
        cudaMalloc(&d, bytes);
        kernel<<<g, b>>>(d);
        ```

    Fix:
        ```cuda
        CUDA_CHECK(cudaMalloc(&d, bytes));   // a macro that tests the code and reports file/line
        kernel<<<g, b>>>(d);
        CUDA_CHECK(cudaGetLastError());
        ```
    """
    src = ctx.source
    macros = _error_macros(src)
    helpers = _error_functions(src)
    readers = _ERROR_READERS | macros | helpers
    own = {f.name for f in syn.functions(getattr(src, "tree", None))} | _macro_names(src)
    for fn in host_functions(src):
        cs = sorted(syn.calls(fn.node), key=lambda c: c.start_byte)
        for i, c in enumerate(cs):
            name = syn.call_name(c)
            if syn.is_launch(c):
                later = cs[i + 1:]
                nxt = next((j for j, d in enumerate(later) if syn.is_launch(d)), len(later))
                if any(syn.call_name(d) in readers for d in later[:nxt]):
                    continue
                yield finding(
                    "Y1", src, syn.line(c),
                    f"launch of `{syn.launch_kernel_name(c)}` is not followed by cudaGetLastError():"
                    " a failed launch goes unnoticed",
                    "check cudaGetLastError() (or cudaPeekAtLastError()) right after the launch",
                    facts=(("launch", syn.launch_kernel_name(c)),),
                )
                continue
            if not _API.match(name) or name in _NOT_CHECKED or name in own or not _discarded(c):
                continue
            yield finding(
                "Y1", src, syn.line(c),
                f"the error code returned by `{name}` is ignored",
                f"wrap the call in an error-checking macro (e.g. CUDA_CHECK({name}(...))) or test its result",
                facts=(("call", name),),
            )


@rule(id="Y2", name="no-device-count-check", priority=Priority.INFO, section="BPG 16.1", layers="S")
def check_y2(ctx: Any) -> Iterator[Finding]:
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
            if syn.is_launch(c) or _API.match(name):
                uses_cuda = True
    if uses_cuda:
        yield finding(
            "Y2", src, syn.line(main.node),
            "the program uses CUDA but never calls cudaGetDeviceCount: without a GPU it fails at an"
            " arbitrary call",
            "call cudaGetDeviceCount() first; report clearly (or fall back to the CPU) when it fails or returns 0",
            facts=(("main_line", syn.line(main.node)),),
        )
