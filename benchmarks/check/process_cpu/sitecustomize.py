"""Put this folder first on PYTHONPATH with CPULOG=FILE: each Python process of a run appends, at its exit
(os._exit or atexit), one line: pid, parent pid, how it ended, its user and system CPU seconds, its waited-for
children's, its cycle collector's seconds/collections/gen-2 collections, and argv[1] (benchmarks/check/process_cpu.sh).
Nothing is read or changed otherwise."""

import atexit
import gc
import os
import sys
import time

_LOG = os.environ.get("CPULOG")
_GC = {"t": 0.0, "n": 0, "t0": 0.0, "g2": 0}


def _collector(phase: str, info: dict) -> None:
    if phase == "start":
        _GC["t0"] = time.process_time()
        return
    _GC["t"] += time.process_time() - _GC["t0"]
    _GC["n"] += 1
    _GC["g2"] += info.get("generation") == 2


def _record(event: str) -> None:
    t = os.times()
    try:
        with open(_LOG or os.devnull, "a") as fh:
            fh.write(f"{os.getpid()} {os.getppid()} {event} {t.user:.3f} {t.system:.3f} {t.children_user:.3f} "
                     f"{t.children_system:.3f} gc={_GC['t']:.3f}/{_GC['n']}/g2={_GC['g2']} "
                     f"{sys.argv[1] if len(sys.argv) > 1 else ''}\n")
    except OSError:
        pass


def _forked() -> None:
    _GC.update(t=0.0, n=0, g2=0)


if _LOG:
    gc.callbacks.append(_collector)
    _real_exit = os._exit

    def _exit(code: int) -> None:
        _record("exit")
        _real_exit(code)

    os._exit = _exit
    atexit.register(_record, "atexit")
    os.register_at_fork(after_in_child=_forked)
