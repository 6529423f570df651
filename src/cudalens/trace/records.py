"""Trace facts: what CUPTI's activity records say a program did on the GPU.

Both collectors (the in-process one for Python programs, :mod:`cudalens.trace._pyrun`, and the
injection library for native programs, ``inject.c``) write the same plain text, one record a line,
fields separated by tabs, the free-text field (a kernel or API name) last::

    #cudalens-trace <version> <collector>
    K start end device stream correlation gx gy gz bx by bz registers static_smem dynamic_smem local_per_thread graph name
    C start end device stream correlation copy_kind src_kind dst_kind bytes flags      (memory copy)
    S start end device stream correlation bytes memory_kind flags                      (memory set)
    A start end correlation cbid return_value name                                     (runtime API call)
    Y start end stream correlation type                                                (synchronization)
    M timestamp id flags domain name                                                   (NVTX marker)
    I key value                                                                        (run information)
    F path                                                                             (a Python source file the program imported)

Times are CUPTI timestamps in nanoseconds. :func:`parse` turns the text into a :class:`Trace` of
frozen records; a trace saved on a GPU machine parses the same anywhere (the test fixtures are such
files, captured on an H100).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cudalens.errors import InputError, read_text

FORMAT_VERSION = 1

#: CUPTI_ACTIVITY_MEMCPY_KIND_* (cupti_activity.h)
COPY_KINDS = {0: "unknown", 1: "HtoD", 2: "DtoH", 3: "HtoA", 4: "AtoH", 5: "AtoA", 6: "AtoD", 7: "DtoA",
              8: "DtoD", 9: "HtoH", 10: "PtoP"}
#: CUPTI_ACTIVITY_MEMORY_KIND_*
MEMORY_KINDS = {0: "unknown", 1: "pageable", 2: "pinned", 3: "device", 4: "array", 5: "managed",
                6: "device_static", 7: "managed_static"}
#: CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_*
SYNC_TYPES = {0: "unknown", 1: "event_synchronize", 2: "stream_wait_event", 3: "stream_synchronize",
              4: "context_synchronize"}
_ASYNC_FLAG = 1  # CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC / MEMSET_ASYNC
_MARKER_START, _MARKER_END = 1 << 1, 1 << 2


@dataclass(frozen=True)
class KernelRecord:
    name: str  # as CUPTI gives it (mangled for C++ kernels)
    start_ns: int
    end_ns: int
    device: int
    stream: int
    correlation: int
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    registers: int
    static_shared: int
    dynamic_shared: int
    local_per_thread: int
    graph: int = 0

    @property
    def duration_ns(self) -> int:
        return self.end_ns - self.start_ns

    @property
    def threads_per_block(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]


@dataclass(frozen=True)
class CopyRecord:
    start_ns: int
    end_ns: int
    device: int
    stream: int
    correlation: int
    kind: str  # HtoD, DtoH, DtoD, ...
    src: str  # pageable, pinned, device, ...
    dst: str
    bytes: int
    is_async: bool

    @property
    def duration_ns(self) -> int:
        return self.end_ns - self.start_ns

    @property
    def host_side(self) -> str | None:
        """The host buffer's kind (pageable or pinned) for a host<->device copy, else None."""
        if self.kind in ("HtoD", "HtoA"):
            return self.src
        if self.kind in ("DtoH", "AtoH"):
            return self.dst
        return None


@dataclass(frozen=True)
class SetRecord:
    start_ns: int
    end_ns: int
    device: int
    stream: int
    correlation: int
    bytes: int
    memory: str
    is_async: bool

    @property
    def duration_ns(self) -> int:
        return self.end_ns - self.start_ns


@dataclass(frozen=True)
class ApiRecord:
    """One runtime API call the collectors keep (synchronizing, allocating, copying, setting)."""

    name: str
    start_ns: int
    end_ns: int
    correlation: int
    return_value: int = 0

    @property
    def duration_ns(self) -> int:
        return self.end_ns - self.start_ns


@dataclass(frozen=True)
class SyncRecord:
    start_ns: int
    end_ns: int
    stream: int
    correlation: int
    type: str


@dataclass(frozen=True)
class NvtxRange:
    name: str
    start_ns: int
    end_ns: int
    domain: str = ""


@dataclass(frozen=True)
class Trace:
    """Everything one traced run recorded, in start order within each kind."""

    collector: str
    kernels: tuple[KernelRecord, ...] = ()
    copies: tuple[CopyRecord, ...] = ()
    sets: tuple[SetRecord, ...] = ()
    api: tuple[ApiRecord, ...] = ()
    syncs: tuple[SyncRecord, ...] = ()
    ranges: tuple[NvtxRange, ...] = ()
    info: dict[str, str] = field(default_factory=dict)
    files: tuple[str, ...] = ()

    @property
    def gpu_records(self) -> list[tuple[int, int]]:
        """(start, end) of every piece of GPU work: kernels, copies and sets."""
        return ([(k.start_ns, k.end_ns) for k in self.kernels] + [(c.start_ns, c.end_ns) for c in self.copies]
                + [(s.start_ns, s.end_ns) for s in self.sets])

    @property
    def complete(self) -> bool:
        """True when the collector reached its end (the program exited through exit handlers)."""
        return self.info.get("end") == "1"


def _ints(fields: list[str], n: int, where: str) -> list[int]:
    try:
        return [int(x) for x in fields[:n]]
    except ValueError:
        raise InputError(f"{where}: expected {n} integers, got {fields[:n]!r}") from None


def parse(text: str, source: str = "<trace>") -> Trace:
    """Parse a collector's output; InputError names the line that is not a record."""
    lines = text.splitlines()
    if not lines or not lines[0].startswith("#cudalens-trace"):
        raise InputError(f"{source}: not a cudalens trace (no '#cudalens-trace' header)")
    head = lines[0].split("\t")
    if len(head) < 3 or head[1] != str(FORMAT_VERSION):
        raise InputError(f"{source}: trace format {head[1:2]} unsupported (this cudalens reads {FORMAT_VERSION})")
    kernels, copies, sets, api, syncs, files = [], [], [], [], [], []
    markers: dict[int, tuple[int, str, str]] = {}
    ranges = []
    info: dict[str, str] = {}
    for n, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        f = line.split("\t")
        tag, rest = f[0], f[1:]
        where = f"{source}:{n}"
        if tag == "K" and len(rest) >= 17:
            v = _ints(rest, 16, where)
            kernels.append(KernelRecord(rest[16], v[0], v[1], v[2], v[3], v[4], (v[5], v[6], v[7]),
                                        (v[8], v[9], v[10]), v[11], v[12], v[13], v[14], v[15]))
        elif tag == "C" and len(rest) >= 10:
            v = _ints(rest, 10, where)
            copies.append(CopyRecord(v[0], v[1], v[2], v[3], v[4], COPY_KINDS.get(v[5], "unknown"),
                                     MEMORY_KINDS.get(v[6], "unknown"), MEMORY_KINDS.get(v[7], "unknown"), v[8],
                                     bool(v[9] & _ASYNC_FLAG)))
        elif tag == "S" and len(rest) >= 8:
            v = _ints(rest, 8, where)
            sets.append(SetRecord(v[0], v[1], v[2], v[3], v[4], v[5], MEMORY_KINDS.get(v[6], "unknown"),
                                  bool(v[7] & _ASYNC_FLAG)))
        elif tag == "A" and len(rest) >= 6:
            v = _ints(rest, 5, where)
            api.append(ApiRecord(rest[5], v[0], v[1], v[2], v[4]))
        elif tag == "Y" and len(rest) >= 5:
            v = _ints(rest, 5, where)
            syncs.append(SyncRecord(v[0], v[1], v[2], v[3], SYNC_TYPES.get(v[4], "unknown")))
        elif tag == "M" and len(rest) >= 5:
            ts, mid, flags = _ints(rest, 3, where)
            if flags & _MARKER_START:
                markers[mid] = (ts, rest[4], rest[3])
            elif flags & _MARKER_END and mid in markers:
                start, name, domain = markers.pop(mid)
                ranges.append(NvtxRange(name, start, ts, domain))
        elif tag == "I" and len(rest) >= 2:
            key, value = rest[0], rest[1]
            if key == "dropped_records" and key in info:
                value = str(int(info[key]) + int(value))
            info[key] = value
        elif tag == "F" and rest:
            files.append(rest[0])
        else:
            raise InputError(f"{where}: not a trace record ({line[:60]!r})")
    return Trace(
        collector=head[2],
        kernels=tuple(sorted(kernels, key=lambda r: r.start_ns)),
        copies=tuple(sorted(copies, key=lambda r: r.start_ns)),
        sets=tuple(sorted(sets, key=lambda r: r.start_ns)),
        api=tuple(sorted(api, key=lambda r: r.start_ns)),
        syncs=tuple(sorted(syncs, key=lambda r: r.start_ns)),
        ranges=tuple(sorted(ranges, key=lambda r: r.start_ns)),
        info=info,
        files=tuple(dict.fromkeys(files)),
    )


def parse_file(path: str) -> Trace:
    return parse(read_text(path, "trace"), source=path)
