import numpy as np
import pytest

from cudalens.errors import InputError
from cudalens.measure.argspec import byte_counts, materialize, parse_arg, parse_args, parse_dims
from cudalens.measure.throughput import Ceilings, assess_throughput, effective_bandwidth_gbs


def test_array_and_scalar_specs():
    a = parse_arg("float32[1048576]:rand")
    assert (a.kind, a.dtype, a.count, a.init, a.role, a.nbytes) == ("array", "float32", 1 << 20, "rand", "in", 4 << 20)
    z = parse_arg("float32[1024*1024]:zeros")
    assert z.count == 1 << 20 and z.role == "out"
    io = parse_arg("float64[2^10]:ones@inout")
    assert io.count == 1024 and io.role == "inout"
    s = parse_arg("int32=1048576")
    assert s.kind == "scalar" and s.value == 1048576
    assert parse_arg("float32=2.5").value == 2.5


@pytest.mark.parametrize("bad,word", [
    ("float33[10]", "float33"), ("float32[ten]", "ten"), ("float32[10]:randn", "randn"),
    ("float32[10]@sideways", "sideways"), ("int8=300", "300"), ("int32=abc", "abc"),
    ("nonsense", "nonsense"), ("float32[0]", "float32[0]"),
])
def test_errors_name_the_bad_argument(bad, word):
    with pytest.raises(InputError) as exc:
        parse_arg(bad)
    assert bad in str(exc.value) and word in str(exc.value)


def test_materialize_types_and_values():
    rng = np.random.default_rng(0)
    x = materialize(parse_arg("float32[100]:rand"), rng)
    assert x.dtype == np.float32 and x.shape == (100,) and 0 <= x.min() and x.max() < 1
    assert materialize(parse_arg("int32[5]:arange"), rng).tolist() == [0, 1, 2, 3, 4]
    assert materialize(parse_arg("float32[3]:7.5"), rng).tolist() == [7.5] * 3
    n = materialize(parse_arg("uint64=5"), rng)
    assert isinstance(n, np.uint64) and n == 5


def test_byte_counts_follow_roles():
    specs = parse_args(["float32[100]:rand", "float32[100]:zeros", "float64[10]:ones@inout", "int32=100"])
    assert byte_counts(specs) == (400 + 80, 400 + 80)


def test_dims():
    assert parse_dims("256", "block") == (256, 1, 1)
    assert parse_dims("64,4", "block") == (64, 4, 1)
    with pytest.raises(InputError, match="--grid"):
        parse_dims("0", "grid")
    with pytest.raises(InputError, match="--grid"):
        parse_dims("1,2,3,4", "grid")


def test_effective_bandwidth_is_bpg_formula():
    # 2048x2048 floats read and written once in 1 ms (the guide's example size)
    nbytes = 2048 * 2048 * 4
    assert effective_bandwidth_gbs(nbytes, nbytes, 1e-3) == pytest.approx(2 * nbytes / 1e9 / 1e-3)


def test_throughput_percentages_and_warnings():
    c = Ceilings(theoretical_bandwidth_gbs=3352.0, measured_bandwidth_gbs=3000.0, l2_bytes=50 << 20)
    ok = assess_throughput(1e-3, 1_000_000_000, 1_000_000_000, 0, c, hot=False)
    assert ok.bandwidth_gbs == pytest.approx(2000.0)
    assert ok.pct_theoretical_bandwidth == pytest.approx(100 * 2000 / 3352)
    assert ok.pct_measured_bandwidth == pytest.approx(100 * 2000 / 3000)
    assert ok.warnings == ()
    cached = assess_throughput(1e-6, 4_000_000, 4_000_000, 0, c, hot=True)
    assert len(cached.warnings) == 2
    assert "exceeds the DRAM ceiling" in cached.warnings[0] and "fits in L2" in cached.warnings[1]
    f = assess_throughput(2e-3, 0, 0, 2e12, Ceilings(theoretical_gflops=60000.0), hot=False)
    assert f.gflops == pytest.approx(1e6) and f.bandwidth_gbs is None
    assert f.pct_theoretical_flops == pytest.approx(100 * 1e6 / 6e4)
