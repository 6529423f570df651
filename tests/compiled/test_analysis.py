"""Resources, SASS facts, occupancy, confirmation, errors and the cache, on our examples."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import pytest

from cudalens.compiled import CompileError, compile_file
from cudalens.compiled.launch import occupancy, occupancy_block
from cudalens.compiled.reports import parse_ptxas_verbose
from cudalens.findings import Finding, Layer, Priority
from cudalens.pipeline.confirm import confirm_source_findings

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "compiled"


def test_resources_equal_the_compilers_own_report(compiled, wheel_toolchain, tmp_path):
    """Run ptxas on its own (nvcc -ptx, then ptxas -v) and compare every reported number."""
    nvcc, ptxas = wheel_toolchain.get("nvcc").path, wheel_toolchain.get("ptxas").path
    for name in ("local_array", "smem48k", "mixed"):
        src = EXAMPLES / f"{name}.cu"
        ptx = tmp_path / f"{name}.ptx"
        subprocess.run([nvcc, "-ptx", "-arch=sm_90", "-lineinfo", str(src), "-o", str(ptx)], check=True, env=wheel_toolchain.env())
        out = subprocess.run([ptxas, "-v", "-arch=sm_90", str(ptx), "-o", str(tmp_path / "x.cubin")], capture_output=True, text=True, check=True)
        report = parse_ptxas_verbose(out.stderr + out.stdout)
        assert report, out.stderr
        by_mangled = {k.mangled: k for k in compiled[name].kernels.values()}
        assert set(report) == set(by_mangled)
        for mangled, rec in report.items():
            res = by_mangled[mangled].resources_dict()
            for key, value in rec.items():
                if key in res:
                    assert res[key] == value, (name, mangled, key)
            assert by_mangled[mangled].cross_check == ()  # cuobjdump agrees


def test_dynamic_local_array_reported_and_flagged_l1(compiled):
    from cudalens.rules.context import RuleContext
    from cudalens.rules.local_memory.l1_local_memory import local_memory
    from cudalens.source.model import SourceModel

    ks = compiled["local_array"].kernels
    assert ks["dynamic_index"].resources.local_bytes >= 64  # 16 floats on the stack
    assert ks["dynamic_index"].count("ldl", "stl") > 0
    assert ks["constant_index"].resources.local_bytes == 0
    no_source = SourceModel(path="", text="", kernels=(), device_functions=(), defines={}, host_calls=(),
                            launch_sites=())
    found = list(local_memory(RuleContext(source=no_source, compiled=ks)))
    assert [f.kernel for f in found] == ["dynamic_index"]
    assert found[0].evidence[0].value == ks["dynamic_index"].resources.local_bytes
    text = (EXAMPLES / "local_array.cu").read_text().splitlines()
    assert "idx[" in text[found[0].line - 1]  # the line with the run-time index


def test_48k_static_shared_at_128_threads_gives_4_blocks_limited_by_shared(compiled):
    k = compiled["smem48k"].kernels["big_tile"]
    assert k.resources.static_shared_bytes == 48 * 1024
    occ = occupancy_block(occupancy(k, "9.0", 128))
    assert occ["active_blocks_per_sm"] == 4
    assert occ["limiters"] == ["shared_memory"]
    assert occ["active_warps_per_sm"] == 16


def _i4(kernel: str, line: int) -> Finding:
    return Finding("I4", Priority.LOW, "BPG 11.1.4", kernel, str(EXAMPLES / "double_literal.cu"), line,
                   "double literal in float expression", "add the f suffix")


def _line_of(path: Path, kernel: str, needle: str) -> int:
    lines = path.read_text().splitlines()
    start = next(i for i, t in enumerate(lines) if f"void {kernel}(" in t)
    return next(i + 1 for i in range(start, len(lines)) if needle in lines[i])


def test_double_literal_confirmed_where_sass_has_fp64_and_downgraded_where_folded(compiled):
    src = EXAMPLES / "double_literal.cu"
    result = compiled["double_literal"]
    line_bad = _line_of(src, "scale_double", "1.1 +")
    assert result.kernels["scale_double"].sass_by_line[line_bad].get("f2f", 0) >= 1
    assert result.kernels["scale_double"].sass_by_line[line_bad].get("fp64", 0) >= 1
    findings = [
        _i4("scale_double", line_bad),
        _i4("times_two", _line_of(src, "times_two", "2.0")),
        _i4("third", _line_of(src, "third", "1.0 / 3.0")),
        _i4("not_compiled", 1),
    ]
    out = confirm_source_findings(findings, result)
    assert [f.status for f in out] == ["confirmed", "downgraded", "downgraded", "flagged"]
    assert out[0].evidence[-1].layer is Layer.COMPILED and out[0].evidence[-1].value >= 2
    for k in ("times_two", "third"):
        assert result.kernels[k].count("fp64", "f2f") == 0


def test_compile_error_carries_file_and_line(tmp_path, wheel_toolchain):
    bad = tmp_path / "broken.cu"
    bad.write_text("__global__ void k(float* x) {\n    x[0] = not_declared;\n}\n")
    with pytest.raises(CompileError) as info:
        compile_file(bad, use_cache=False, toolchain=wheel_toolchain)
    msg = info.value.messages[0]
    assert (Path(msg.file).name, msg.line, msg.severity) == ("broken.cu", 2, "error")
    assert "not_declared" in msg.message
    assert re.search(r"broken\.cu:2: error", str(info.value))


def test_cache_hit_is_ten_times_faster_and_equal(tmp_path, monkeypatch, wheel_toolchain):
    monkeypatch.setenv("CUDALENS_CACHE_DIR", str(tmp_path / "cache"))
    src = tmp_path / "k.cu"
    src.write_text((EXAMPLES / "mixed.cu").read_text())
    t0 = time.perf_counter()
    cold = compile_file(src, toolchain=wheel_toolchain)
    t_cold = time.perf_counter() - t0
    t0 = time.perf_counter()
    warm = compile_file(src, toolchain=wheel_toolchain)
    t_warm = time.perf_counter() - t0
    assert not cold.cache_hit and warm.cache_hit
    assert t_cold >= 10 * t_warm, (t_cold, t_warm)
    assert {k: v.to_dict() for k, v in cold.kernels.items()} == {k: v.to_dict() for k, v in warm.kernels.items()}
    # a change to the file, a define or an included header is a miss
    inc = tmp_path / "extra.h"
    inc.write_text("#define SCALE 2\n")
    src.write_text('#include "extra.h"\n' + src.read_text())
    assert not compile_file(src, toolchain=wheel_toolchain).cache_hit
    assert compile_file(src, toolchain=wheel_toolchain).cache_hit
    inc.write_text("#define SCALE 3\n")
    assert not compile_file(src, toolchain=wheel_toolchain).cache_hit
    assert not compile_file(src, defines={"X": "1"}, toolchain=wheel_toolchain).cache_hit
    # no stray temporary files, and a corrupt entry is a miss, then rewritten
    entries = list((tmp_path / "cache").rglob("*"))
    assert not [p for p in entries if p.name.endswith(".tmp")]
    for p in entries:
        if p.suffix == ".json":
            p.write_text("{half")
    again = compile_file(src, defines={"X": "1"}, toolchain=wheel_toolchain)
    assert not again.cache_hit and again.kernels


def test_compile_time_is_reported(compiled):
    for name, result in compiled.items():
        assert 0 < result.seconds < 60, name
