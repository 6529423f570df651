"""Child supervision with fake workers: one that sleeps past the timeout, one that crashes."""

import os
import sys
import time

import pytest

from cudalens.measure import isolate
from cudalens.measure.isolate import BenchTimeout, KernelFault, supervise


def _worker(tmp_path, body):
    script = tmp_path / "fake_worker.py"
    script.write_text("import json, os, sys, time, subprocess\nout = sys.argv[1]\n" + body)
    res = str(tmp_path / "result.json")
    return [sys.executable, str(script), res], res


def test_hanging_worker_and_its_children_are_killed(tmp_path):
    pidfile = tmp_path / "grandchild.pid"
    argv, res = _worker(tmp_path, f"""
p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])
open({str(pidfile)!r}, 'w').write(str(p.pid))
time.sleep(60)
""")
    t0 = time.monotonic()
    out = supervise(argv, res, timeout_s=1.5)
    assert out.status == "timeout" and "timed out after 1.5 s" in out.message
    assert time.monotonic() - t0 < 10
    gpid = int(pidfile.read_text())
    for _ in range(50):  # the grandchild was in the same process group: it must be gone too
        try:
            os.kill(gpid, 0)
        except ProcessLookupError:
            break
        try:
            os.waitpid(gpid, os.WNOHANG)
        except ChildProcessError:
            pass
        time.sleep(0.1)
    else:
        pytest.fail("grandchild survived the process-group kill")


def test_crashing_worker_is_reported_with_signal(tmp_path):
    argv, res = _worker(tmp_path, "sys.stderr.write('segfault-ish\\n'); sys.stderr.flush(); os.kill(os.getpid(), 11)\n")
    out = supervise(argv, res, timeout_s=20)
    assert out.status == "crashed" and "signal 11" in out.message and "segfault-ish" in out.message


def test_worker_reporting_an_error(tmp_path):
    argv, res = _worker(tmp_path, """
json.dump({'ok': False, 'error_type': 'CudaCallError',
           'message': 'cuStreamSynchronize failed with CUDA_ERROR_ILLEGAL_ADDRESS (700)'}, open(out, 'w'))
sys.exit(3)
""")
    out = supervise(argv, res, timeout_s=20)
    assert out.status == "error" and "ILLEGAL_ADDRESS" in out.message and out.returncode == 3


def test_worker_success(tmp_path):
    argv, res = _worker(tmp_path, "json.dump({'ok': True, 'result': {'x': 1}}, open(out, 'w'))\n")
    out = supervise(argv, res, timeout_s=20)
    assert out.status == "ok" and out.payload["result"] == {"x": 1}


def test_run_isolated_maps_outcomes_to_errors(monkeypatch):
    def fake(status, payload=None, message=""):
        return lambda *a, **k: isolate.Outcome(status, payload, message, 0, 0.1)

    monkeypatch.setattr(isolate, "supervise", fake("timeout", message="timed out after 2 s; the worker was killed"))
    with pytest.raises(BenchTimeout, match="timed out after 2 s"):
        isolate.run_isolated({"kernel": "spin"}, timeout_s=2)
    monkeypatch.setattr(isolate, "supervise", fake("error", {"ok": False, "error_type": "CudaCallError"},
                                                   "CUDA_ERROR_ILLEGAL_ADDRESS"))
    with pytest.raises(KernelFault, match="ILLEGAL_ADDRESS"):
        isolate.run_isolated({"kernel": "bad"})


def test_real_worker_without_gpu_reports_no_device(tmp_path):
    from ._factory import has_gpu

    if has_gpu():
        pytest.skip("a GPU is present")
    from cudalens.errors import NoDeviceError

    req = {"source": 'extern "C" __global__ void k(float* a) {}', "kernel": "k", "grid": [1, 1, 1],
           "block": [32, 1, 1], "args": ["float32[32]"], "mode": "cold"}
    with pytest.raises(NoDeviceError):
        isolate.run_isolated(req, timeout_s=60)
