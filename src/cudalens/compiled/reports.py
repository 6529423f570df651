"""Parsers for what the tools print: ptxas -v, cuobjdump --dump-resource-usage, diagnostics.

Formats (CUDA 13), for reference:

ptxas -v, per entry function::

    ptxas info    : Compiling entry function '_Z5saxpyifPKfPf' for 'sm_90'
    ptxas info    : Function properties for _Z5saxpyifPKfPf
        0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
    ptxas info    : Used 16 registers, used 1 barriers, 49152 bytes smem, 64 bytes cumulative stack size

(older releases add "380 bytes cmem[0]"; CUDA 13 no longer does, so constant memory comes from
cuobjdump). ``Function properties`` also appears for non-inlined device functions, which are not
entries and are skipped.

cuobjdump --dump-resource-usage::

     Function _Z5saxpyifPKfPf:
      REG:12 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:552 TEXTURE:0 SURFACE:0 SAMPLER:0

Diagnostics: the front end writes ``file(line): error: text``; the host compiler
``file:line:col: error: text``; ptxas ``ptxas error   : text`` or ``ptxas file, line N; error : text``;
the driver ``nvcc fatal   : text``.
"""

from __future__ import annotations

import re

from cudalens.compiled.model import CompilerMessage

_ENTRY_RE = re.compile(r"Compiling entry function '([^']+)'")
_PROPS_RE = re.compile(r"Function properties for (\S+)")
_FRAME_RE = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED_RE = re.compile(r"Used (\d+) registers")
_BAR_RE = re.compile(r"used (\d+) barriers")
_SMEM_RE = re.compile(r"(\d+) bytes smem")
_CMEM_RE = re.compile(r"(\d+) bytes cmem\[0\]")
_CUMUL_RE = re.compile(r"(\d+) bytes cumulative stack size")


def parse_ptxas_verbose(text: str) -> dict[str, dict[str, int]]:
    """Mangled entry name -> {registers, static_shared_bytes, local_bytes, spill_stores,
    spill_loads, barriers[, constant_bytes][, cumulative_stack_bytes]} from ``ptxas -v`` output."""
    entries: dict[str, dict[str, int]] = {}
    current_entry: str | None = None  # set by "Compiling entry function"
    props_for: str | None = None  # set by "Function properties for"
    for line in text.splitlines():
        if m := _ENTRY_RE.search(line):
            current_entry = m.group(1)
            entries.setdefault(current_entry, {})
            props_for = None
            continue
        if m := _PROPS_RE.search(line):
            props_for = m.group(1)
            continue
        if m := _FRAME_RE.search(line):
            if props_for is not None and props_for in entries:
                entries[props_for].update(
                    local_bytes=int(m.group(1)), spill_stores=int(m.group(2)), spill_loads=int(m.group(3))
                )
            continue
        if m := _USED_RE.search(line):
            if current_entry is None:
                continue
            rec = entries[current_entry]
            rec["registers"] = int(m.group(1))
            rec["barriers"] = int(b.group(1)) if (b := _BAR_RE.search(line)) else 0
            rec["static_shared_bytes"] = int(s.group(1)) if (s := _SMEM_RE.search(line)) else 0
            if c := _CMEM_RE.search(line):
                rec["constant_bytes"] = int(c.group(1))
            if c := _CUMUL_RE.search(line):
                rec["cumulative_stack_bytes"] = int(c.group(1))
            current_entry = None
    return entries


_RES_FUNC_RE = re.compile(r"^\s*Function (\S+):\s*$")
_RES_KV_RE = re.compile(r"([A-Z]+(?:\[\d+\])?):(\d+)")


def parse_resource_usage(text: str) -> dict[str, dict[str, int]]:
    """Mangled function name -> {"REG": .., "STACK": .., "SHARED": .., "LOCAL": .., "CONSTANT[0]": ..}
    from ``cuobjdump --dump-resource-usage``."""
    out: dict[str, dict[str, int]] = {}
    current: str | None = None
    for line in text.splitlines():
        if m := _RES_FUNC_RE.match(line):
            current = m.group(1)
            out[current] = {}
        elif current is not None and "REG:" in line:
            out[current].update({k: int(v) for k, v in _RES_KV_RE.findall(line)})
            current = None
    return out


_FRONTEND_RE = re.compile(r"^(?P<file>\S.*?)\((?P<line>\d+)\): (?P<sev>error|warning|remark)[^:]*: (?P<msg>.*)$")
_GCC_RE = re.compile(r"^(?P<file>\S.*?):(?P<line>\d+):(?:\d+:)? (?P<sev>error|warning|fatal error): (?P<msg>.*)$")
_PTXAS_FILE_RE = re.compile(r"^ptxas (?P<file>\S+), line (?P<line>\d+); (?P<sev>error|warning)\s*: (?P<msg>.*)$")
_TOOL_RE = re.compile(r"^(?P<tool>ptxas|nvcc|nvlink|fatbinary|cicc)\s+(?P<sev>error|warning|fatal)\s*: (?P<msg>.*)$")


def parse_diagnostics(text: str) -> tuple[CompilerMessage, ...]:
    """Every diagnostic line in compiler output (the echoed source lines and carets are skipped)."""
    out: list[CompilerMessage] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if m := _FRONTEND_RE.match(line):
            out.append(CompilerMessage(m["file"], int(m["line"]), m["msg"].strip(), m["sev"]))
        elif m := _PTXAS_FILE_RE.match(line):
            out.append(CompilerMessage(m["file"], int(m["line"]), m["msg"].strip(), m["sev"]))
        elif m := _GCC_RE.match(line):
            sev = "error" if "error" in m["sev"] else m["sev"]
            out.append(CompilerMessage(m["file"], int(m["line"]), m["msg"].strip(), sev))
        elif m := _TOOL_RE.match(line):
            sev = "error" if m["sev"] in ("error", "fatal") else "warning"
            out.append(CompilerMessage(None, None, f"{m['tool']}: {m['msg'].strip()}", sev))
    return tuple(out)
