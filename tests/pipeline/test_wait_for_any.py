"""pipeline.isolated.wait_for_any: the parent of the file workers wakes when one of them ends (not at
its next look), and sleeps no longer than it is told while they all run."""

from __future__ import annotations

import os
import time

import pytest

from cudalens.pipeline.isolated import wait_for_any

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="workers are forked processes")


def _child(seconds: float) -> int:
    pid = os.fork()
    if pid == 0:
        time.sleep(seconds)
        os._exit(0)
    return pid


def test_wakes_when_one_of_the_processes_ends() -> None:
    quick, slow = _child(0.3), _child(30.0)
    try:
        t0 = time.monotonic()
        wait_for_any((slow, quick), 20.0)
        waited = time.monotonic() - t0
        assert os.waitpid(quick, os.WNOHANG)[0] == quick  # it has ended
        assert waited < 10.0  # woken by its end, far before the 20 s timeout
        assert os.waitpid(slow, os.WNOHANG)[0] == 0  # the other still runs
    finally:
        os.kill(slow, 9)
        os.waitpid(slow, 0)


def test_returns_at_the_timeout_while_every_process_runs() -> None:
    slow = _child(30.0)
    try:
        t0 = time.monotonic()
        wait_for_any((slow,), 0.2)
        assert time.monotonic() - t0 < 10.0
        assert os.waitpid(slow, os.WNOHANG)[0] == 0
    finally:
        os.kill(slow, 9)
        os.waitpid(slow, 0)


def test_a_process_that_has_already_ended_wakes_at_once() -> None:
    done = _child(0.0)
    time.sleep(0.2)  # ended, not yet reaped
    t0 = time.monotonic()
    wait_for_any((done,), 20.0)
    assert time.monotonic() - t0 < 10.0
    assert os.waitpid(done, 0)[0] == done


def test_an_unbounded_deadline_is_no_error() -> None:
    done = _child(0.0)
    time.sleep(0.2)
    wait_for_any((done,), float("inf"))  # (FileLimits(seconds=inf) through the Python API): select refuses inf
    assert os.waitpid(done, 0)[0] == done


def test_without_pidfd_a_readable_descriptor_is_still_watched(monkeypatch) -> None:
    """Where os.pidfd_open is missing (macOS, Linux before 5.3) it waits at most 0.02 s for the process,
    and a worker's answer (a readable descriptor) still wakes it: select is given that descriptor."""
    import select as select_module

    def no_pidfd(pid: int) -> int:
        raise OSError("pidfd_open not available")

    seen: list[tuple[list[int], float | None]] = []
    real_select = select_module.select

    def recording(r, w, x, timeout=None):
        seen.append((list(r), timeout))
        return real_select(r, w, x, timeout)

    monkeypatch.setattr(os, "pidfd_open", no_pidfd, raising=False)
    monkeypatch.setattr(select_module, "select", recording)
    slow = _child(30.0)
    r, w = os.pipe()
    try:
        os.write(w, b"0 next\n")
        wait_for_any((slow,), 20.0, readable=[r])
        assert seen and seen[0][0] == [r] and seen[0][1] is not None and seen[0][1] <= 0.02
        assert real_select([r], [], [], 0)[0] == [r]  # the answer is there for the caller to read
    finally:
        os.kill(slow, 9)
        os.waitpid(slow, 0)
        os.close(r)
        os.close(w)
