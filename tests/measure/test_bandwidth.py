"""Bandwidth test without a GPU: sizes, sample arithmetic, the measurement plan with a fake
copier, the copy kernel compiling, cuda_util status checks, and `cudalens bandwidth` errors."""

import json

import pytest

from cudalens.cli import main
from cudalens.errors import InputError, NoDeviceError
from cudalens.hardware import cuda_driver as cuda_util
from cudalens.hardware import live
from cudalens.hardware.fakes import FakeCuda, FakeNvml
from cudalens.measure import bandwidth as bw

_REAL_QUERY = live.query_device


class FakeCopier:
    """Copies take latency + bytes / rate (a simple link model), with the rate per test."""

    LATENCY_MS = 0.01
    RATES_GBS = {"h2d_pageable": 20, "h2d_pinned": 55, "d2h_pageable": 18, "d2h_pinned": 52,
                 "d2d_memcpy": 2800, "d2d_kernel": 3000}  # of counted bytes

    def __init__(self):
        self.calls = []

    def time_copies(self, test, nbytes, copies):
        self.calls.append((test, nbytes, copies))
        counted = nbytes * bw.spec(test).bytes_factor
        return copies * (self.LATENCY_MS + counted / (self.RATES_GBS[test] * 1e9) * 1e3)


# ------------------------------------------------------------------ sizes

@pytest.mark.parametrize("text,expected", [("4096", 4096), ("4KiB", 4096), ("1KB", 1000),
                                           ("1 MiB", 2**20), ("2GB", 2 * 10**9), ("1g", 2**30)])
def test_parse_size(text, expected):
    assert bw.parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "abc", "1XB", "0", "-5", "1.5B"])
def test_parse_size_rejects(text):
    with pytest.raises(InputError):
        bw.parse_size(text)


def test_parse_sizes_sorted_unique():
    assert bw.parse_sizes("1MiB,4KiB,4096") == (4096, 2**20)


def test_default_shmoo_spans_1kib_to_1gib():
    sizes = bw.default_sizes()
    assert sizes[0] == 1024 and sizes[-1] == 1024**3
    assert all(b == 4 * a for a, b in zip(sizes, sizes[1:]))
    assert bw.size_text(sizes[-1]) == "1 GiB" and bw.size_text(1000) == "1000 B"


def test_copies_per_sample_batches_small_copies_only():
    assert bw.copies_per_sample(1024) == 64  # capped
    assert bw.copies_per_sample(4 * 2**20) == 4
    assert bw.copies_per_sample(2**30) == 1


# ------------------------------------------------------------------ sample arithmetic

def test_sample_counts_read_plus_write_for_device_copies():
    d2d = bw.make_sample("d2d_kernel", 10**9, [1.0, 2.0, 3.0], reference_gb_per_s=4000.0)
    assert d2d.bytes_counted == 2 * 10**9 and d2d.median_ms == 2.0
    assert d2d.gb_per_s == pytest.approx(2e9 / 2e-3 / 1e9)  # 1000 GB/s
    assert d2d.percent_of_reference == pytest.approx(25.0)
    h2d = bw.make_sample("h2d_pinned", 10**9, [20.0])
    assert h2d.bytes_counted == 10**9 and h2d.gb_per_s == pytest.approx(50.0)
    assert h2d.percent_of_reference is None


def test_sample_rejects_empty_and_unknown():
    with pytest.raises(InputError):
        bw.make_sample("d2d_kernel", 1024, [])
    with pytest.raises(InputError):
        bw.make_sample("teleport", 1024, [1.0])
    with pytest.raises(InputError):
        bw.gb_per_s(100, 0.0)


# ------------------------------------------------------------------ the plan, with a fake copier

def test_plan_recovers_the_modelled_rates():
    copier, seen = FakeCopier(), []
    refs = {"pcie": 63.0, "memory": 3352.0}
    samples = bw.measure_plan(copier, bw.TEST_KEYS, [4096, 2**30], repeats=5, warmup=2,
                              budget_ms=1e9, references=refs,
                              progress=lambda d, t, label: seen.append((d, t)))
    assert len(samples) == 2 * len(bw.TEST_KEYS)
    for s in samples:
        rate = FakeCopier.RATES_GBS[s.test]
        model_ms = FakeCopier.LATENCY_MS + s.bytes_counted / (rate * 1e9) * 1e3
        assert s.median_ms == pytest.approx(model_ms)  # per copy, whatever the batching
        assert s.gb_per_s == pytest.approx(s.bytes_counted / (model_ms * 1e-3) / 1e9)
        if s.nbytes == 2**30:  # latency nearly negligible: about the model's rate comes back
            assert s.gb_per_s == pytest.approx(rate, rel=0.02)
            ref = refs[bw.spec(s.test).reference]
            assert s.percent_of_reference == pytest.approx(100 * s.gb_per_s / ref)
        else:  # small copies are latency-bound
            assert s.gb_per_s < 0.5 * rate
        assert len(s.times_ms) == 5
    # 2 warm-up + 5 timed calls per point; progress ends at total
    assert len(copier.calls) == 7 * len(samples)
    assert seen[-1] == (len(samples), len(samples))


def test_plan_budget_limits_repeats_but_keeps_three():
    copier = FakeCopier()
    (s,) = bw.measure_plan(copier, ["h2d_pageable"], [2**30], repeats=10, warmup=1, budget_ms=1.0)
    assert len(s.times_ms) == 3


def test_plan_rejects_bad_arguments():
    with pytest.raises(InputError):
        bw.measure_plan(FakeCopier(), ["h2d_pinned"], [4096], repeats=0)
    with pytest.raises(InputError):
        bw.measure_plan(FakeCopier(), ["nope"], [4096])


def _fake_result(sizes=(4096, 2**26)):
    report = _REAL_QUERY(0, cuda=FakeCuda(), nvml=FakeNvml())
    mem, pcie, link = bw._references(report)
    samples = bw.measure_plan(FakeCopier(), bw.TEST_KEYS, sizes, repeats=3,
                              references={"memory": mem, "pcie": pcie})
    return bw.BandwidthResult(0, report.name, report.cc, mem, pcie, link, samples, 3, 2,
                              {"grid": 264, "block": 256, "blocks_per_sm": 2, "sms": 132,
                               "compiler": "fake", "verified": True})


def test_references_come_from_the_report():
    mem, pcie, link = bw._references(_REAL_QUERY(0, cuda=FakeCuda(), nvml=FakeNvml()))
    assert round(mem) == 3352 and pcie == pytest.approx(32 * 128 / 130 * 2)
    assert link == "PCIe gen5 x16 (max link)"


def test_result_best_and_json():
    result = _fake_result()
    best = result.best("d2d_kernel")
    assert best.nbytes == 2**26 and best is max(result.for_test("d2d_kernel"), key=lambda s: s.gb_per_s)
    d = json.loads(json.dumps(result.to_dict()))
    assert "read + bytes written" in d["counting"] and len(d["samples"]) == len(result.samples)


# ------------------------------------------------------------------ the command

def test_cli_renders_fake_run_with_summary_last(capsys, monkeypatch):
    monkeypatch.setattr(live, "query_device", lambda index=0, **kw: _REAL_QUERY(
        0, cuda=FakeCuda(), nvml=FakeNvml()))
    calls = {}

    def fake_run(index, sizes, tests, **kw):
        calls.update(index=index, sizes=sizes, tests=tests, repeats=kw["repeats"])
        kw["progress"](0, 1, "x")
        return _fake_result()

    monkeypatch.setattr(bw, "run_bandwidth", fake_run)
    assert main(["bandwidth", "--quick"]) == 0
    out = capsys.readouterr().out
    assert calls["sizes"] == bw.quick_sizes() and calls["repeats"] == 5
    assert out.rstrip().splitlines()[-1].startswith("└")  # the summary table is last
    assert out.index("Summary") > out.index("All measurements")
    best = _fake_result().best("d2d_kernel")
    assert f"{best.gb_per_s:,.2f}" in out and f"{best.percent_of_reference:.1f} %" in out
    assert main(["bandwidth", "--sizes", "1MiB", "--tests", "d2d_kernel", "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert calls["sizes"] == (2**20,) and calls["tests"] == ("d2d_kernel",)
    assert d["pcie_link"] == "PCIe gen5 x16 (max link)"


@pytest.mark.parametrize("args", [["bandwidth", "--sizes", "3XB"], ["bandwidth", "--tests", "foo"],
                                  ["bandwidth", "--quick", "--sizes", "1MiB"],
                                  ["bandwidth", "--repeats", "0"]])
def test_cli_bad_input_one_line_exit_2(capsys, args):
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("cudalens: error")


def test_cli_without_gpu_one_line_exit_2(capsys, monkeypatch):
    def no_gpu(index=0, **kw):
        raise NoDeviceError("no NVIDIA driver found; this command needs a GPU")

    monkeypatch.setattr(live, "query_device", no_gpu)
    assert main(["bandwidth", "--quick"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "GPU" in err[0]


def test_real_driver_absent_gives_no_device_error():
    try:
        if cuda_util.device_count() > 0:
            pytest.skip("a GPU is present")
    except NoDeviceError as exc:
        assert "GPU" in str(exc) or "driver" in str(exc)
    with pytest.raises(NoDeviceError):
        bw.run_bandwidth(0, (4096,), ("d2d_memcpy",))


# ------------------------------------------------------------------ cuda_util and the kernel source

def test_check_returns_values_and_raises_with_the_name():
    driver = pytest.importorskip("cuda.bindings.driver")
    ok, bad = driver.CUresult.CUDA_SUCCESS, driver.CUresult.CUDA_ERROR_INVALID_VALUE
    assert cuda_util.check((ok,)) is None
    assert cuda_util.check((ok, 7)) == 7
    assert cuda_util.check((ok, 1, 2)) == (1, 2)
    with pytest.raises(cuda_util.CudaCallError, match="CUDA_ERROR_INVALID_VALUE") as info:
        cuda_util.check((bad, None), "cuMemAlloc")
    assert info.value.call == "cuMemAlloc" and info.value.code == int(bad)


def test_copy_kernel_compiles_with_nvcc():
    from cudalens.compiled import runtime_compile

    if runtime_compile.find_nvcc() is None:
        pytest.skip("no nvcc here")
    cubin, nvcc = runtime_compile._nvcc_cubin(bw.COPY_KERNEL_SOURCE, "cudalens_copy", "sm_90", ["-O3"])
    assert cubin[:4] == b"\x7fELF" and b"cudalens_copy" in cubin


def test_nvcc_takes_over_when_nvrtc_cannot_compile_the_file(monkeypatch):
    """A whole program with host headers: NVRTC fails to compile it, nvcc is asked next."""
    from cudalens.compiled import runtime_compile as cu
    from cudalens.errors import ToolchainError

    def nvrtc(*_a):
        raise ToolchainError('NVRTC could not compile k: could not open source file "cstdio"')

    monkeypatch.setattr(cu, "_nvrtc_cubin", nvrtc)
    monkeypatch.setattr(cu, "_nvcc_cubin", lambda *_a: (b"cubin", "nvcc"))
    assert cu.compile_cubin("src", "k", (9, 0)) == (b"cubin", "nvcc")

    def nvcc(*_a):
        raise ToolchainError("nvcc could not compile k: syntax error")

    monkeypatch.setattr(cu, "_nvcc_cubin", nvcc)
    with pytest.raises(ToolchainError, match="cstdio.*nvcc: nvcc could not compile k: syntax error"):
        cu.compile_cubin("src", "k", (9, 0))
