"""Issue #25 acceptance: `check` on a folder holding each reproducer beside good files finishes within
the deadline + 10 s, writes the good files' SARIF and reports each bad file in one line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from cudalens.source.limits import MAX_FILE_BYTES

GOOD = "__global__ void g{n}(float *a, int n) {{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i * 2] = 1; }}\n"
MACROS = "\n".join(f"#define M{i} (M{i + 1} + M{i + 1})" for i in range(31)) + "\n#define M31 1\n" \
    "__global__ void km(float *a) { a[threadIdx.x + M0] = 1.0f; }\n"
PARSE_LOOP = "int main() { float *p; (p q) = 0; return 0; }\n"
HUGE_LAUNCH = ("__global__ void kh(float *a) { a[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f; }\n"
               "int main() { float *d; dim3 g(65535, 65535, 64); dim3 b(1024, 1024, 64); kh<<<g, b>>>(d); return 0; }\n")


def _cli(args, cwd, timeout, env=None):
    return subprocess.run([sys.executable, "-m", "cudalens", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, check=False, env=env)


@pytest.fixture
def folder(tmp_path):
    d = tmp_path / "repo"
    d.mkdir()
    for n in (1, 2):
        (d / f"good{n}.cu").write_text(GOOD.format(n=n))
    (d / "macro.cu").write_text(MACROS)
    (d / "parseloop.cu").write_text(PARSE_LOOP)
    (d / "huge_launch.cu").write_text(HUGE_LAUNCH)
    os.mkfifo(d / "x.cu")
    (d / "zero.cu").symlink_to("/dev/zero")
    (d / "self.cu").symlink_to(d / "self.cu")
    (d / "big.cu").write_text("// x\n" * (MAX_FILE_BYTES // 5 + 10))
    return d


@pytest.mark.parametrize("cache", [False, True], ids=["no-cache", "result-cache"])
def test_check_on_the_reproducers(folder, tmp_path, cache):
    """With the result cache on too: its digests once read every project file, and a FIFO named x.cu
    blocked the whole run there (found by the fuzz harness on the merged code)."""
    deadline = 20
    out = tmp_path / "out.sarif"
    env = {k: v for k, v in os.environ.items() if not (cache and k == "CUDALENS_NO_CACHE")}
    t0 = time.monotonic()
    # (with the cache, run from inside the folder as `check .`, the way the fuzz harness found it, and
    # without the symlink loop, whose unreadable digest made the cache give up before it reached x.cu)
    target, cwd = (".", folder) if cache else (str(folder), tmp_path)
    bad = ("x.cu", "zero.cu", "big.cu") if cache else ("x.cu", "zero.cu", "self.cu", "big.cu")
    if cache:
        (folder / "self.cu").unlink()
    p = _cli(["check", target, "--no-compile", "--format", "sarif", "-o", str(out), "--deadline", str(deadline)],
             cwd, timeout=deadline + 60, env=env)
    assert time.monotonic() - t0 < deadline + 10, "check overran the deadline"
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    for name in bad:
        assert len([ln for ln in lines if f"/{name}:" in ln]) == 1, p.stderr
    assert len(lines) == len(bad), p.stderr
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].rsplit("/", 1)[-1]
            for r in json.loads(out.read_text())["runs"][0]["results"]}
    assert {"good1.cu", "good2.cu"} <= uris


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_a_huge_launch_compiled_is_bounded(tmp_path):
    (tmp_path / "h.cu").write_text(HUGE_LAUNCH)
    t0 = time.monotonic()
    p = _cli(["check", "h.cu", "--format", "json", "-o", "r.json", "--deadline", "120", "--memory-cap", "1024"],
             tmp_path, timeout=300)
    assert time.monotonic() - t0 < 130 and p.returncode in (0, 1), p.stderr
    f = json.loads((tmp_path / "r.json").read_text())["files"][0]
    assert f["compiled"] is True  # analysed with its compiled facts, neither stopped nor out of memory
