"""Safe formulas and the offload model (catalog A4, BPG 2.2) and the `offload` command."""

from __future__ import annotations

import json
import math

import pytest

from cudalens.assess import offload as ol
from cudalens.assess.offload import parse
from cudalens.cli import main
from cudalens.errors import InputError

# Stated inputs for the guide's two examples: float32 elements, a host at 100 GFLOP/s, a device
# at 10 TFLOP/s and a PCIe gen 3 x16 link: 16 lanes * 8 GT/s * 128/130 / 8 bits = 15.75 GB/s.
HOST = 100e9
DEVICE = 10e12
LINK = 16 * 8e9 * (128 / 130) / 8
BYTES = 4


def test_pcie_theoretical_rate_from_lanes_and_encoding():
    assert ol.pcie_bytes_per_s(3, 16) == pytest.approx(LINK)
    assert ol.pcie_bytes_per_s(1, 1) == pytest.approx(2.5e9 * 0.8 / 8)
    assert ol.pcie_bytes_per_s(5, 16) == pytest.approx(4 * ol.pcie_bytes_per_s(3, 16))
    with pytest.raises(InputError):
        ol.pcie_bytes_per_s(9, 16)
    with pytest.raises(InputError):
        ol.pcie_bytes_per_s(4, 3)


def model(ops: str, elements: str) -> ol.OffloadModel:
    return ol.OffloadModel.from_text(ops, elements, BYTES, host_ops_per_s=HOST, device_ops_per_s=DEVICE,
                                     link_bytes_per_s=LINK)


def test_matrix_add_never_pays_at_pcie_speed():
    # n^2 additions for 3n^2 elements: GPU wins iff n^2/HOST > n^2/DEVICE + 12 n^2/LINK,
    # i.e. iff 1/HOST - 1/DEVICE > 12/LINK, independent of n.
    gpu_could_win = (1 / HOST - 1 / DEVICE) > 3 * BYTES / LINK
    assert not gpu_could_win  # the inputs above are the guide's situation
    cross = ol.crossover(model("n**2", "3*n**2"), n_max=2**24)
    assert cross.n is None and not cross.wins_at_n_max
    for n in (16, 1024, 65536):
        pt = model("n**2", "3*n**2").point(n)
        assert pt.transfer_s > pt.host_s  # transfers alone outlast the host's whole sum


def test_matrix_multiply_pays_above_a_size():
    # n^3 ops for 3n^2 elements: GPU wins iff n^3 (1/HOST - 1/DEVICE) > 12 n^2 / LINK,
    # i.e. iff n > 12 / (LINK (1/HOST - 1/DEVICE)); the crossover is the next whole number.
    threshold = 3 * BYTES / (LINK * (1 / HOST - 1 / DEVICE))
    expected = math.floor(threshold) + 1
    m = model("n**3", "3*n**2")
    cross = ol.crossover(m)
    assert cross.n == expected and cross.wins_at_n_max
    assert not m.point(expected - 1).device_wins and m.point(expected).device_wins
    # counting a multiply-add as 2 flops halves the threshold
    assert ol.crossover(model("2*n**3", "3*n**2")).n == math.floor(threshold / 2) + 1


def test_fixed_overhead_moves_the_crossover_up():
    base = ol.crossover(model("n**3", "3*n**2")).n
    slow = ol.OffloadModel.from_text("n**3", "3*n**2", BYTES, host_ops_per_s=HOST, device_ops_per_s=DEVICE,
                                     link_bytes_per_s=LINK, overhead_s=1e-3)
    n = ol.crossover(slow).n
    assert n > base
    # at the crossover the host time exceeds device compute + transfers + 1 ms
    assert n**3 / HOST > n**3 / DEVICE + 3 * n**2 * BYTES / LINK + 1e-3


def test_device_not_faster_never_pays():
    m = ol.OffloadModel.from_text("n**3", "n", 4, host_ops_per_s=1e12, device_ops_per_s=1e11)
    assert math.isinf(m.required_ops_per_byte) and ol.crossover(m, n_max=2**20).n is None


def test_offload_cli_json_matches_formula(capsys):
    args = ["offload", "--ops", "n**3", "--elements", "3*n**2", "--bytes-per-element", "4",
            "--host-gflops", "100", "--device-gflops", "10000", "--pcie-gen", "3", "--pcie-lanes", "16",
            "--sizes", "16,1024", "--format", "json"]
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)
    threshold = 12 / (LINK * (1 / HOST - 1 / DEVICE))
    assert data["crossover"]["n"] == math.floor(threshold) + 1
    row = data["table"][1]
    assert row["n"] == 1024
    assert row["host_s"] == pytest.approx(1024**3 / HOST)
    assert row["transfer_s"] == pytest.approx(3 * 1024**2 * 4 / LINK)


def test_offload_cli_text_add_says_never(capsys):
    assert main(["offload", "--ops", "n**2", "--elements", "3*n**2", "--pcie-gbps", "25"]) == 0
    assert "never" in capsys.readouterr().out


@pytest.mark.parametrize(
    "text,part",
    [
        ("__import__('os')", "__import__"),
        ("n.__class__", "__class__"),
        ("open('x')", "open"),
        ("(lambda: 1)()", "lambda"),
        ("n if n else 1", "if"),
        ("[n][0]", "["),
        ("'a' * 3", "'a'"),
        ("x + 1", "'x'"),
        ("n // 2", "n // 2"),
        ("log2", "log2"),
        ("n +", "syntax"),
    ],
)
def test_unsafe_or_bad_expressions_rejected(text, part):
    with pytest.raises(InputError) as info:
        parse(text)
    assert part in str(info.value)


def test_expression_values():
    e = parse("3*n**2 + n*log2(n) - sqrt(n)/2")
    assert e.value({"n": 16.0}) == pytest.approx(3 * 256 + 16 * 4 - 2)


@pytest.mark.parametrize("ops", ["__import__('os').system('true')", "n.__class__", "open('/etc/passwd')", "2**n**n**n"])
def test_offload_cli_rejects_bad_expression_one_line(ops, capsys):
    assert main(["offload", "--ops", ops, "--elements", "3*n**2"]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("cudalens: error") and "expression" in err[0]
    assert captured.out == ""
