"""`cudalens analyze`: JSON contract, exit codes, the Quick-start example, robustness and speed."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cudalens.access.model import analyze_model
from cudalens.cli import main
from cudalens.source.parse import parse_source

ROOT = Path(__file__).resolve().parents[2]
EX = ROOT / "examples"


def run_json(capsys, *args):
    rc = main(["analyze", "--no-compile", "--format", "json", *args])
    out = capsys.readouterr().out
    return rc, json.loads(out)


def test_json_contract(capsys):
    rc, d = run_json(capsys, str(EX / "access" / "offset_copy.cu"), "--define", "offset=1")
    assert rc == 0 and d["schema"] == "cudalens/analysis-1"
    (k,) = d["kernels"]
    assert {"name", "file", "line", "accesses", "branches"} <= set(k)
    for a in k["accesses"]:
        assert {"line", "array", "space", "op", "bytes_per_thread", "sectors_per_request",
                "ideal_sectors_per_request", "bank_conflict_ways", "pattern"} <= set(a)
    for f in d["findings"]:
        assert list(f)[:8] == ["rule", "priority", "section", "kernel", "file", "line", "message", "fix"]
    g2 = [f for f in d["findings"] if f["rule"] == "G2"]
    assert g2 and g2[0]["priority"] == "high"
    assert abs(g2[0]["impact"] - (1 - 4 / 5)) < 1e-6


def test_saxpy_has_no_high_or_medium_finding(capsys):
    rc, d = run_json(capsys, str(EX / "saxpy.cu"), "--fail-on", "medium")
    assert rc == 0
    assert not [f for f in d["findings"] if f["priority"] in ("high", "medium")]
    (k,) = d["kernels"]
    assert all(a["pattern"] == "coalesced" for a in k["accesses"])


def test_fail_on_exits_1_for_high_findings(capsys):
    rc = main(["analyze", "--no-compile", str(EX / "access" / "divergence.cu"), "--fail-on", "high"])
    capsys.readouterr()
    assert rc == 1


@pytest.mark.parametrize("content", [b"import os\nprint(1)\n", b'{"a": 1}\n', bytes(range(256))])
def test_non_cuda_file_exits_2_with_one_line(tmp_path, capsys, content):
    f = tmp_path / "x.cu"
    f.write_bytes(content)
    rc = main(["analyze", "--no-compile", str(f)])
    err = capsys.readouterr().err
    assert rc == 2 and "x.cu" in err and len(err.strip().splitlines()) == 1


def test_bad_block_is_a_user_error(capsys):
    rc = main(["analyze", "--no-compile", str(EX / "saxpy.cu"), "--block", "0"])
    assert rc == 2 and "block" in capsys.readouterr().err


def test_text_report_renders(capsys):
    rc = main(["analyze", "--no-compile", str(EX / "access" / "transpose.cu")])
    out = capsys.readouterr().out
    assert rc == 0 and "transpose_tile" in out and "SH1" in out


CORPUS = sorted((ROOT / "tests" / "analyze" / "corpus").glob("*.cu")) + sorted((EX / "access").glob("*.cu"))


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_corpus_never_crashes(path, capsys):
    rc = main(["analyze", "--no-compile", "--format", "json", str(path)])
    out = capsys.readouterr()
    assert rc == 0, out.err
    json.loads(out.out)


LINES = [ln for p in CORPUS for ln in p.read_text().splitlines()]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False), st.sampled_from(CORPUS))
def test_mutations_never_raise(rnd: random.Random, path: Path):
    lines = path.read_text().splitlines()
    for _ in range(rnd.randint(1, 6)):
        op = rnd.choice(["del", "dup", "tok", "insert"])
        i = rnd.randrange(max(len(lines), 1)) if lines else 0
        if op == "del" and lines:
            del lines[i]
        elif op == "dup" and lines:
            lines.insert(i, lines[i])
        elif op == "tok" and lines:
            toks = lines[i].split(" ")
            if toks:
                del toks[rnd.randrange(len(toks))]
            lines[i] = " ".join(toks)
        else:
            lines.insert(i, rnd.choice(LINES) if LINES else "")
    text = "\n".join(lines)
    try:
        m = parse_source(text, "mut.cu")
    except Exception as exc:  # noqa: BLE001 - only InputError is allowed, for text that no longer looks like C
        from cudalens.errors import InputError

        assert isinstance(exc, InputError)
        return
    analyze_model(m, defines={"n": 1000})


def generated_file(n_kernels: int) -> str:
    parts = ["#define TILE 32", "#define W 1024"]
    for i in range(n_kernels):
        parts.append(f"""
__global__ void k{i}(const float *a, float *b, int n, int s) {{
  __shared__ float t[TILE][TILE + 1];
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  float acc = 0.0f;
  for (int q = 0; q < TILE; ++q) {{
    acc += a[y * W + q] * a[q * W + x + {i % 7}];
  }}
  t[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.x % {1 + i % 3} == 0) {{
    b[x * s] = t[threadIdx.x][threadIdx.y];
  }}
  b[y * W + x] += acc;
}}""")
    return "\n".join(parts) + "\n"


def test_2000_line_file_is_analysed(tmp_path, capsys):
    """Front end + warp access model and the whole `analyze` on a generated 2,000-line file.

    Its speed is a benchmark (`benchmarks/check/frontend_speed.py`, results under benchmarks/results/cpu/),
    not an assertion here: a timed unit test fails on a loaded machine and proves nothing on a fast one.
    """
    from cudalens.source.parse import parse_file

    text = generated_file(125)
    assert len(text.splitlines()) >= 2000
    f = tmp_path / "big.cu"
    f.write_text(text)
    m = analyze_model(parse_file(f), block=(32, 8, 1))
    assert len(m.kernels) == 125 and all(k.accesses for k in m.kernels)
    rc = main(["analyze", "--no-compile", "--format", "json", "--block", "32,8", str(f)])
    assert rc == 0 and len(json.loads(capsys.readouterr().out)["kernels"]) == 125


def test_unknown_compute_capability_is_one_line_exit_2(capsys):
    from cudalens.cli import main

    assert main(["analyze", "examples/saxpy.cu", "--no-compile", "--cc", "4.0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown compute capability 4.0" in err[0]


def test_occupancy_at_the_launch_site_in_json_and_text(capsys, monkeypatch, tmp_path, nvcc_toolchain):
    """examples/compiled/smem48k.cu: 48 KB of static shared memory, launched with 128 threads:
    4 blocks/SM on CC 9.0, limited by shared memory ((227 KB + 1 KB) / (48 KB + 1 KB reserved))."""
    import json

    from cudalens.cli import main

    monkeypatch.setenv("CUDALENS_CACHE_DIR", str(tmp_path))
    assert main(["analyze", "examples/compiled/smem48k.cu", "--format", "json"]) == 0
    kernels = {k["name"]: k for k in json.loads(capsys.readouterr().out)["kernels"]}
    occ = kernels["big_tile"]["occupancy"]
    assert (occ["threads_per_block"], occ["active_blocks_per_sm"], occ["limiters"]) == (128, 4, ["shared_memory"])
    assert occ["block_from"].startswith("launch: ") and occ["block_from"].endswith("smem48k.cu:16")
    assert main(["analyze", "examples/compiled/smem48k.cu"]) == 0
    assert "4 blocks of 128 threads per SM, limited by shared_memory" in " ".join(capsys.readouterr().out.split())
