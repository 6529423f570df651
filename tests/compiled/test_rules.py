"""Each C-layer rule on a bad and a good compiled example."""

from __future__ import annotations

from cudalens.compiled.fatbin import FatbinContents, parse_listing
from cudalens.rules.context import RuleContext
from cudalens.rules.deployment.y3_fatbinary_targets import fatbinary_targets
from cudalens.rules.execution.e1_low_occupancy import low_occupancy
from cudalens.rules.global_memory.g4_split_narrow_loads import split_narrow_loads
from cudalens.rules.global_memory.g6_scalar_memory_access import scalar_memory_access
from cudalens.rules.instructions.i6_accurate_math_slow_paths import accurate_math_in_sass
from cudalens.rules.instructions.i12_integer_division import integer_division
from cudalens.rules.instructions.i16_precision_flags import precision_flags
from cudalens.rules.local_memory.l1_local_memory import local_memory
from cudalens.rules.local_memory.l2_register_pressure import register_pressure
from cudalens.rules.local_memory.l3_register_cliff import register_cliff
from cudalens.rules.shared_memory.sh6_shared_memory_limits_occupancy import shared_memory_limits_occupancy
from cudalens.source.model import SourceModel

NO_SOURCE = SourceModel(path="", text="", kernels=(), device_functions=(), defines={}, host_calls=(), launch_sites=())


def _ctx(kernels, launch=None, **kw):
    """``launch``: kernel name -> {"block": threads}, given as the kernel's resolved launch (what
    the launch table sets on the source model's kernels; occupancy reads it)."""
    from dataclasses import replace

    from cudalens.project.launches import ResolvedLaunch
    from cudalens.source.model import Kernel

    source = replace(NO_SOURCE, kernels=tuple(
        Kernel(name, "k.cu", 1, 1, (), False, None, launch=ResolvedLaunch(name, "user", block=(f["block"], 1, 1)))
        for name, f in (launch or {}).items()))
    return RuleContext(source=source, compiled=kernels, **kw)


def _flagged(check, ctx):
    return sorted({f.kernel for f in check(ctx)})


def test_g4_split_narrow_loads(compiled):
    ks = compiled["mixed"].kernels
    assert _flagged(split_narrow_loads, _ctx(ks)) == ["gray_rgb"]


def test_g6_scalar_access_in_memory_bound_kernel(compiled):
    from cudalens.rules.global_memory.g6_scalar_memory_access import measured_finding

    ks = compiled["mixed"].kernels
    # static instruction counts never establish memory-boundness (#16): no finding without a measurement
    assert _flagged(scalar_memory_access, _ctx(ks)) == []
    # measured at 80 % of the DRAM ceiling: the scalar copy is flagged, the float4 copy is not
    flagged = [n for n in ("copy_scalar", "copy_vector")
               if measured_finding(n, "k.cu", 1, dict(ks[n].sass_counts), 0.8) is not None]
    assert flagged == ["copy_scalar"]


def test_i12_integer_division(compiled):
    ks = compiled["mixed"].kernels
    assert _flagged(integer_division, _ctx(ks)) == ["bucket"]


def test_i6_accurate_math_and_fast_math(compiled):
    assert "wave_accurate" in _flagged(accurate_math_in_sass, _ctx(compiled["mixed"].kernels))
    assert "wave_fast" not in _flagged(accurate_math_in_sass, _ctx(compiled["mixed"].kernels))
    assert _flagged(accurate_math_in_sass, _ctx(compiled["mixed_fast"].kernels)) == []


def test_i16_precision_flags(compiled):
    assert _flagged(precision_flags, _ctx(compiled["mixed"].kernels)) == ["wave_accurate"]
    assert _flagged(precision_flags, _ctx(compiled["mixed_fast"].kernels)) == []


def test_e1_and_sh6_on_the_48k_tile(compiled):
    ks = compiled["smem48k"].kernels
    e1 = list(low_occupancy(_ctx(ks, {"big_tile": {"block": 128}})))
    assert len(e1) == 1 and "shared_memory" in e1[0].message
    assert len(list(shared_memory_limits_occupancy(_ctx(ks, {"big_tile": {"block": 128}})))) == 1
    # good: without the tile (a small block of registers-only code) nothing is limited by shared memory
    small = compiled["mixed"].kernels
    assert list(shared_memory_limits_occupancy(_ctx(small, {k: {"block": 256} for k in small}))) == []
    assert list(low_occupancy(_ctx(small, {k: {"block": 256} for k in small}))) == []


def test_l2_register_pressure(compiled):
    bad = compiled["regs64"].kernels
    found = list(register_pressure(_ctx(bad, {"many_accumulators": {"block": 256}})))
    assert len(found) == 1
    regs = bad["many_accumulators"].resources.registers
    assert "-maxrregcount=" in found[0].fix and "__launch_bounds__(256," in found[0].fix
    assert found[0].evidence[2].value < regs
    good = compiled["regs24"].kernels  # 38 registers: 6 blocks, 75 %
    assert list(register_pressure(_ctx(good, {"many_accumulators": {"block": 256}}))) == []


def test_l3_register_cliff(compiled):
    capped = compiled["regs64_capped"].kernels
    assert capped["many_accumulators"].resources.registers == 64
    found = list(register_cliff(_ctx(capped, {"many_accumulators": {"block": 256}})))
    assert len(found) == 1 and found[0].evidence[1].value == 65
    far = compiled["regs24"].kernels  # 38 registers: the next step is 3 registers away
    assert list(register_cliff(_ctx(far, {"many_accumulators": {"block": 256}}))) == []
    # the capped build spills: L1 sees it
    assert _flagged(local_memory, _ctx(capped)) == ["many_accumulators"]


def test_y3_fatbinary_targets():
    listing = parse_listing("ELF file    1: a.1.sm_80.cubin\n")
    old = FatbinContents("app", listing, ())
    msgs = [f.message for f in fatbinary_targets(_ctx({}, cc="9.0", binary=old))]
    assert len(msgs) == 2 and "no SASS for CC 9.0" in msgs[0] and "no PTX" in msgs[1]
    good = FatbinContents("app", parse_listing("ELF file 1: a.sm_90.cubin"), parse_listing("PTX file 1: a.sm_90.ptx"))
    assert list(fatbinary_targets(_ctx({}, cc="9.0", binary=good))) == []


def test_y3_on_a_real_object(tmp_path, wheel_toolchain):
    import subprocess

    from tests.compiled.conftest import EXAMPLES

    from cudalens.compiled.fatbin import inspect_binary

    obj = tmp_path / "m.o"
    subprocess.run([wheel_toolchain.get("nvcc").path, "-c", "-gencode", "arch=compute_80,code=sm_80",
                    str(EXAMPLES / "double_literal.cu"), "-o", str(obj)], check=True, env=wheel_toolchain.env())
    contents = inspect_binary(obj, wheel_toolchain)
    assert contents.cubin_archs == (80,) and contents.ptx_archs == ()
    assert len(list(fatbinary_targets(_ctx({}, cc="9.0", binary=contents)))) == 2
    on_80 = list(fatbinary_targets(_ctx({}, cc="8.0", binary=contents)))
    assert len(on_80) == 1 and "no PTX" in on_80[0].message


def test_y3_reaches_analyze_through_binary(tmp_path, wheel_toolchain, capsys):
    """`cudalens analyze --binary FILE` judges the built object's targets (Y3 was unreachable
    before: nothing set the rule context's binary)."""
    import json
    import subprocess

    from click.testing import CliRunner
    from tests.compiled.conftest import EXAMPLES

    from cudalens.cli import cli

    obj = tmp_path / "m.o"
    src = EXAMPLES / "double_literal.cu"
    subprocess.run([wheel_toolchain.get("nvcc").path, "-c", "-gencode", "arch=compute_80,code=sm_80",
                    str(src), "-o", str(obj)], check=True, env=wheel_toolchain.env())
    out = CliRunner().invoke(cli, ["analyze", str(src), "--no-compile", "--binary", str(obj), "--cc", "9.0",
                                   "--format", "json"])
    assert out.exit_code == 0, out.output
    y3 = [f for f in json.loads(out.output)["findings"] if f["rule"] == "Y3"]
    assert [f["file"] for f in y3] == [str(obj), str(obj)]
    assert "no SASS for CC 9.0" in y3[0]["message"] and "no PTX" in y3[1]["message"]
    from cudalens.cli import main

    capsys.readouterr()
    assert main(["analyze", str(src), "--no-compile", "--binary", str(tmp_path / "nope.o")]) == 2
    err = capsys.readouterr().err
    assert "nope.o" in err and "Traceback" not in err
