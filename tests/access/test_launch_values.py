"""Launch-site arguments as values of a kernel's scalar parameters (the access model's precedence).

Expected sector counts are computed here from the addresses the 32 lanes of a warp touch.
"""

from __future__ import annotations

from cudalens.access.model import analyze_model, launch_values
from cudalens.project.resolve import resolve_models
from cudalens.source.parse import parse_source

KERNEL = """
#define S 2
const int FOUR = 4;
__global__ void k(float *a, int n) { a[threadIdx.x * n] = 0.0f; }
"""


def sectors(stride: int, width: int = 4) -> int:
    """Distinct 32-byte sectors touched by lanes 0..31 writing ``width`` bytes at ``lane * stride`` elements."""
    return len({(lane * stride * width + b) // 32 for lane in range(32) for b in (0, width - 1)})


def store(host: str, **kw):
    model = analyze_model(parse_source(KERNEL + host, "lv.cu"), **kw)
    (k,) = model.kernels
    (a,) = k.accesses
    return a


def test_first_principles_helper():
    assert [sectors(s) for s in (1, 2, 4, 8, 2048)] == [4, 8, 16, 32, 32]


def test_literal_argument_gives_the_parameter_value():
    a = store("int main() { k<<<1, 32>>>(0, 4); }")
    assert a.lane_stride == 4 and a.sectors_per_request == sectors(4) == 16
    assert a.pattern == "strided-4"
    assert any("n = 4" in s and "line 5" in s for s in a.assumptions)


def test_define_const_and_host_local_arguments():
    assert store("int main() { k<<<1, 32>>>(0, S); }").sectors_per_request == sectors(2)
    assert store("int main() { k<<<1, 32>>>(0, FOUR * S); }").sectors_per_request == sectors(8)
    assert store("int main() { int s = S + 1; k<<<1, 32>>>(0, s - 2); }").lane_stride == 1


def test_without_a_launch_the_fallback_trials_remain():
    a = store("")
    # tried at 2048 and 3136: both give 32 sectors but different strides, so no figures are claimed
    assert a.pattern == "parameter-dependent" and a.sectors_per_request is None
    assert any("depends on n" in s for s in a.assumptions)


def test_user_define_wins_over_the_launch():
    a = store("int main() { k<<<1, 32>>>(0, 4); }", defines={"n": 1})
    assert a.lane_stride == 1 and a.sectors_per_request == 4 and a.pattern == "coalesced"
    assert not any("launch" in s for s in a.assumptions)


def test_several_launches_use_the_first_and_say_so():
    a = store("int main() {\n k<<<1, 32>>>(0, 2);\n k<<<1, 32>>>(0, 8);\n}")
    assert a.lane_stride == 2 and a.sectors_per_request == sectors(2)
    (note,) = [s for s in a.assumptions if "launch" in s]
    assert "line 6" in note and "7" in note  # the first launch and the one that disagrees


def test_a_counted_loop_gives_each_value_and_the_first_is_evaluated():
    a = store("int main() { for (int s = 1; s < 8; s *= 2) k<<<1, 32>>>(0, s); }")
    assert a.lane_stride == 1 and a.sectors_per_request == sectors(1)
    (note,) = [s for s in a.assumptions if "launch" in s]
    assert note.startswith("n = 1 as passed by the launch at line 5") and "also passes 2, 4" in note


def test_values_that_change_at_run_time_are_not_followed():
    runtime = "#include <cstdlib>\nint main(int c, char **v) { int s = atoi(v[1]); k<<<1, 32>>>(0, s); }"
    assert store(runtime).pattern == "parameter-dependent"
    twice = "int main() { int s = 1; s = 2; k<<<1, 32>>>(0, s); }"  # two definitions: not followed
    assert store(twice).pattern == "parameter-dependent"
    address = "void read(int*); int main() { int s = 2; read(&s); k<<<1, 32>>>(0, s); }"
    assert store(address).pattern == "parameter-dependent"


def test_launch_values_skips_pointers_and_defined_names():
    model = parse_source(KERNEL + "int main() { k<<<1, 32>>>(0, 4); k<<<1, 32>>>(0, 4); }", "lv.cu")
    (k,) = model.kernels
    launch = resolve_models([model]).resolve(k)
    values, notes = launch_values(launch, {})
    assert values == {"n": 4}  # a (a pointer, passed 0) is not a value the model uses
    assert "another" not in notes["n"]  # both launches agree
    assert launch_values(launch, {"n": 3}) == ({}, {})
