"""Child process for tracing a Python program: enable CUPTI activity, run the program, write records.

Run as ``PYTHON -m cudalens.trace._pyrun OUT LAUNCH_LIMIT -- (SCRIPT | -m MODULE | -c CODE) ARGS...``
in the user's own interpreter (so the program sees its own packages). CUPTI activity is enabled
*before* the program's first CUDA call; the program then runs through :mod:`runpy` as ``__main__``
with its own ``sys.argv``. Records are written in the format of :mod:`cudalens.trace.records`.

Processes the program starts are counted (:class:`ChildWatch`, an audit hook) and written as
``I children N`` and ``I child_commands ...``: they are not traced, and the report says so.

The program's exit status becomes this process's exit status: an uncaught exception prints its
traceback (as Python would) and exits 1; ``sys.exit(n)`` exits n. Only the standard library and
``cupti`` are imported here, so tracing adds nothing else to the program's process.
"""

from __future__ import annotations

import os
import runpy
import signal
import sys
import threading
import traceback


class _Writer:
    def __init__(self, path: str, launch_limit: int) -> None:
        self.fh = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed in close()
        self.lock = threading.Lock()
        self.limit = launch_limit
        self.kernels = 0
        self.dropped = 0
        self.names: dict[int, str | None] = {}
        self.fh.write("#cudalens-trace\t1\tcupti-python\n")
        self.fh.write(f"I\tpid\t{os.getpid()}\n")
        self.fh.flush()

    def info(self, key: str, value: object) -> None:
        with self.lock:
            self.fh.write(f"I\t{key}\t{_clean(str(value))}\n")
            self.fh.flush()

    def close(self) -> None:
        with self.lock:
            self.fh.write(f"I\tkernels_seen\t{self.kernels}\n")
            if self.dropped:
                self.fh.write(f"I\tlaunch_limit_dropped\t{self.dropped}\n")
            self.fh.write("I\tend\t1\n")
            self.fh.close()


_WANTED_API = ("ynchronize", "Malloc", "Free", "Memcpy", "Memset", "HostAlloc", "HostRegister",
               "StreamWaitEvent", "DeviceReset")


def _clean(text: str) -> str:
    return text.replace("\t", " ").replace("\n", " ").replace("\r", " ")


def _lines(cupti, w: _Writer, activities) -> list[str]:
    kinds = cupti.ActivityKind
    out = []
    for a in activities:
        k = a.kind
        if k == kinds.CONCURRENT_KERNEL or k == kinds.KERNEL:
            w.kernels += 1
            if w.limit and w.kernels > w.limit:
                w.dropped += 1
                continue
            out.append("K\t" + "\t".join(str(int(x)) for x in (
                a.start, a.end, a.device_id, a.stream_id, a.correlation_id, a.grid_x, a.grid_y, a.grid_z,
                a.block_x, a.block_y, a.block_z, a.registers_per_thread, a.static_shared_memory,
                a.dynamic_shared_memory, a.local_memory_per_thread, a.graph_id)) + "\t" + _clean(str(a.name)))
        elif k == kinds.MEMCPY:
            out.append("C\t" + "\t".join(str(int(x)) for x in (
                a.start, a.end, a.device_id, a.stream_id, a.correlation_id, a.copy_kind, a.src_kind, a.dst_kind,
                a.bytes, a.flags_)))
        elif k == kinds.MEMSET:
            out.append("S\t" + "\t".join(str(int(x)) for x in (
                a.start, a.end, a.device_id, a.stream_id, a.correlation_id, a.bytes, a.memory_kind, a.flags_)))
        elif k == kinds.RUNTIME:
            cbid = int(a.cbid)
            if cbid not in w.names:
                try:
                    name = cupti.get_callback_name(cupti.CallbackDomain.RUNTIME_API, cbid)
                except Exception:  # noqa: BLE001 - an id this CUPTI cannot name
                    name = None
                w.names[cbid] = name if name and any(key in name for key in _WANTED_API) else None
            name = w.names[cbid]
            if name:
                out.append(f"A\t{int(a.start)}\t{int(a.end)}\t{int(a.correlation_id)}\t{cbid}\t"
                           f"{int(a.return_value)}\t{name}")
        elif k == kinds.SYNCHRONIZATION:
            out.append(f"Y\t{int(a.start)}\t{int(a.end)}\t{int(a.stream_id)}\t{int(a.correlation_id)}\t{int(a.type)}")
        elif k == kinds.MARKER:
            out.append(f"M\t{int(a.timestamp)}\t{int(a.id)}\t{int(a.flags_)}\t{_clean(str(a.domain or ''))}\t"
                       f"{_clean(str(a.name or ''))}")
    return out


_KINDS = ("CONCURRENT_KERNEL", "MEMCPY", "MEMSET", "RUNTIME", "SYNCHRONIZATION", "MARKER")


def _start(w: _Writer):
    """Enable CUPTI activity; returns the cupti module, or None after writing why not."""
    try:
        from cupti import cupti
    except Exception as exc:  # noqa: BLE001 - not installed, or libcupti does not load
        w.info("error", f"no-cupti: CUPTI for Python (cupti-python) does not load: {type(exc).__name__}: {exc}")
        return None

    def requested():
        return 8 << 20, 0

    def completed(activities) -> None:
        lines = _lines(cupti, w, activities)
        if lines:
            with w.lock:
                w.fh.write("\n".join(lines) + "\n")

    try:
        cupti.activity_register_callbacks(requested, completed)
        for name in _KINDS:
            try:
                cupti.activity_enable(getattr(cupti.ActivityKind, name))
            except Exception as exc:
                if name in ("CONCURRENT_KERNEL", "MEMCPY"):
                    raise
                w.info("note", f"activity {name} not enabled ({type(exc).__name__})")
    except Exception as exc:  # noqa: BLE001 - no driver, no device, CUPTI held by another tool
        w.info("error", f"cupti: CUPTI could not enable activity tracing: {type(exc).__name__}: {exc}")
        return None
    return cupti


#: audit events (sys.addaudithook) that start another process
_SPAWN_EVENTS = {"subprocess.Popen": 1, "os.system": 0, "os.posix_spawn": 1, "os.exec": 1, "os.spawn": 2,
                 "os.fork": None, "os.forkpty": None}


class ChildWatch:
    """Counts the processes the program starts (an audit hook): they are not traced, and the report says so.

    multiprocessing's spawn and forkserver start methods start processes without an audit event, so
    ``multiprocessing.util.spawnv_passfds`` (a standard-library module, imported here) is wrapped to count.
    Waiting for the program to import it is not enough: the audit event of an import comes before the
    module exists, and the program's last import before it spawns may be the very one that loads it.
    """

    def __init__(self) -> None:
        self.count = 0
        self.commands: list[str] = []  # the first few distinct ones
        import multiprocessing.util  # noqa: F401  (light; wrapped before the program can spawn)

        self._wrap_multiprocessing()

    def _seen(self, what: object, event: str) -> None:
        self.count += 1
        if isinstance(what, (list, tuple)):
            what = " ".join(os.fsdecode(a) if isinstance(a, bytes) else str(a) for a in what)
        text = _clean(str(what))[:120] if what is not None else event
        if len(self.commands) < 3 and text not in self.commands:
            self.commands.append(text)

    def _wrap_multiprocessing(self) -> None:
        util = sys.modules["multiprocessing.util"]
        spawn = getattr(util, "spawnv_passfds", None)
        if spawn is None:
            return

        def spawnv_passfds(path, args, passfds):
            self._seen(args, "multiprocessing")
            return spawn(path, args, passfds)

        util.spawnv_passfds = spawnv_passfds  # type: ignore[attr-defined]

    def __call__(self, event: str, args: tuple) -> None:
        if event == "import":
            return
        if event in _SPAWN_EVENTS:
            i = _SPAWN_EVENTS[event]
            self._seen(args[i] if i is not None and len(args) > i else None, event)

    def write(self, w: _Writer) -> None:
        if self.count:
            w.info("children", self.count)
            w.info("child_commands", " ; ".join(self.commands) or "?")


def _program_files(base: str) -> list[str]:
    """Source files of modules the program imported from its own directory tree (not installed packages)."""
    base = os.path.abspath(base)
    out = []
    for mod in list(sys.modules.values()):
        path = getattr(mod, "__file__", None)
        if not path or not path.endswith(".py"):
            continue
        path = os.path.abspath(path)
        if path.startswith(base + os.sep) and "site-packages" not in path and "cudalens" + os.sep + "trace" not in path:
            out.append(path)
    return out


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        sys.stderr.write("usage: python -m cudalens.trace._pyrun OUT LAUNCH_LIMIT -- PROGRAM ARGS...\n")
        return 2
    out, limit, program = argv[0], int(argv[1]), argv[3:]
    w = _Writer(out, limit)
    cupti = _start(w)
    if cupti is None:
        w.close()
        return 0
    status = 0

    def on_term(signum, frame):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_term)
    children = ChildWatch()
    sys.addaudithook(children)
    base = os.getcwd()
    try:
        if program[0] == "-m" and len(program) > 1:
            sys.argv = [program[1], *program[2:]]
            runpy.run_module(program[1], run_name="__main__", alter_sys=True)
        elif program[0] == "-c" and len(program) > 1:
            sys.argv = ["-c", *program[2:]]
            exec(compile(program[1], "<string>", "exec"), {"__name__": "__main__"})  # noqa: S102 - the user's own code
        else:
            script = program[0]
            base = os.path.dirname(os.path.abspath(script))
            sys.argv = list(program)
            sys.path.insert(0, base)
            runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        code = exc.code
        status = code if isinstance(code, int) else (0 if code is None else 1)
        if code is not None and not isinstance(code, int):
            sys.stderr.write(f"{code}\n")
    except KeyboardInterrupt:
        status = 130
    except BaseException:  # noqa: BLE001 - the program's own error: report it as Python would
        traceback.print_exc()
        status = 1
    finally:
        try:
            cupti.activity_flush_all(1)
        except Exception as exc:  # noqa: BLE001
            w.info("note", f"flush failed ({type(exc).__name__})")
        with w.lock:
            for path in _program_files(base):
                w.fh.write(f"F\t{path}\n")
        children.write(w)
        w.info("exit_status", status)
        w.close()
    return status


if __name__ == "__main__":
    sys.stdout.flush()
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    sys.exit(code)
