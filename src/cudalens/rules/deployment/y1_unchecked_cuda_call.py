"""Y1: Check every CUDA return code and launch."""

from __future__ import annotations

from typing import Any, Iterator

from cudalens.findings import Finding
from cudalens.rules import _host as host
from cudalens.rules._common import host_functions
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule
from cudalens.source import syntax as syn
from cudalens.source.callers import CallSite

# Calls whose return value is not an error to check (or which read the error state itself).
_NOT_CHECKED = {
    "cudaGetLastError",
    "cudaPeekAtLastError",
    "cudaGetErrorString",
    "cudaGetErrorName",
    "cuGetErrorString",
    "cuGetErrorName",
}


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


#: Library functions that are not error checks (a call of one after a launch proves nothing).
_NOT_WRAPPERS = frozenset({
    "printf", "fprintf", "sprintf", "snprintf", "puts", "fputs", "putchar", "fflush", "exit", "abort",
    "malloc", "calloc", "realloc", "free", "memcpy", "memset", "memcmp", "strcmp", "strlen", "assert",
    "rand", "srand", "sqrt", "fabs", "min", "max", "std::min", "std::max", "std::cout", "std::endl",
    "clock", "time", "gettimeofday", "dim3",
})


def _unseen_wrapper(call: Any, own: set[str]) -> bool:
    """A call of a function or macro whose definition this file does not show (a project's error
    check such as ``getLastCudaError("...")`` from a header), which is not a CUDA API call nor a
    C library or C++ standard library function: whether it checks the launch is not established,
    so no finding."""
    name = syn.call_name(call)
    standard = syn.norm(call.child_by_field_name("function")).startswith("std::")
    return bool(name) and name not in own and not host.CUDA_API.match(name) and name not in _NOT_WRAPPERS and not standard


def _checked_by_callers(sites: tuple[CallSite, ...], checks: set[str], own: set[str]) -> bool:
    """True when a caller checks the function's launches: after one of its calls, a later call of
    the calling function reads the error state (a reader, or a function or macro the sources show
    reading it: a launch error stays until read), or the call right after it is a function or
    macro whose definition is not visible (a project's ``getLastCudaError``), as for a launch. The
    launch wrapper then belongs to a program that checks its launches where it calls them (the
    cuda-samples' ``reduce()`` in ``reduction_kernel.cu``, checked in ``reduction.cpp``)."""
    def checked(site: CallSite) -> bool:
        if any(n in checks for n in site.later + site.following):
            return True
        first = site.following[0] if site.following else ""
        return bool(first) and first not in own and not host.CUDA_API.match(first) and first not in _NOT_WRAPPERS \
            and not first.startswith("std::")

    return any(checked(s) for s in sites)


def _discarded(call: Any) -> bool:
    """True when the call is a statement of its own, its result thrown away."""
    parent = call.parent
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    return parent is not None and parent.type == "expression_statement"


@rule("Y1", name="unchecked-cuda-call", layers="S", advisory=True)
def unchecked_cuda_call(ctx: RuleContext) -> Iterator[Finding]:
    """CUDA API calls and kernel launches whose errors nobody checks.

    What it does:
        Flags runtime/driver API calls (`cuda*`, `cu*`) in host code whose return value is thrown
        away: not assigned, tested, returned, passed to a checking macro or function, nor
        explicitly discarded with `(void)`. Flags kernel launches not followed, before the next
        launch in the same function, by `cudaGetLastError()`/`cudaPeekAtLastError()` (directly or
        through a macro or helper of the file that calls them). Wrappers are recognised by their
        shape, not their name: a macro or function of the file that reads the error state, or that
        receives the code of a CUDA call (`ANY_NAME(cudaMalloc(...))` uses the result). When the
        call right after a launch is a function or macro whose definition the file does not show
        (a project's `getLastCudaError("...")` from a header), whether it checks is not
        established and the launch is not reported. A launch inside a host function that a caller
        checks after calling it (in this file or another source of its folder:
        `reduce(...); getLastCudaError(...)` in the `.cpp`) is checked. A call that receives the
        code of a CUDA call (`cudaCheck(cudaMalloc(...))`, a macro around a void function that
        checks it) is a wrapper, whatever its name.

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
                # calls after the launch, not those inside its own configuration or arguments (dim3(...))
                later = [d for d in cs[i + 1 :] if d.start_byte >= c.end_byte]
                nxt = next((j for j, d in enumerate(later) if syn.is_launch(d)), len(later))
                if any(syn.call_name(d) in readers for d in later[:nxt]):
                    continue
                if later[:nxt] and _unseen_wrapper(later[0], own):
                    continue  # the next call may check the launch: its definition is not visible here
                if _checked_by_callers(ctx.callers.sites.get(fn.name, ()), readers | ctx.callers.checks, own):
                    continue  # every caller of this function checks right after calling it
                yield ctx.finding(
                    syn.line(c),
                    f"launch of `{syn.launch_kernel_name(c)}` is not followed by cudaGetLastError():"
                    " a failed launch goes unnoticed",
                    "check cudaGetLastError() (or cudaPeekAtLastError()) right after the launch",
                    facts=(("launch", syn.launch_kernel_name(c)),),
                )
                continue
            if not host.CUDA_API.match(name) or name in _NOT_CHECKED or name in own or not _discarded(c):
                continue
            if any(host.CUDA_API.match(syn.call_name(a)) for a in syn.calls(c) if a != c):
                continue  # it receives a CUDA call's code: an error-check wrapper (`cudaCheck(cudaMalloc(...))`)
            yield ctx.finding(
                syn.line(c),
                f"the error code returned by `{name}` is ignored",
                f"wrap the call in an error-checking macro (e.g. CUDA_CHECK({name}(...))) or test its result",
                facts=(("call", name),),
            )
