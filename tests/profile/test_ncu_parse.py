"""Parsing of ncu raw CSV. A real H100 capture is tested in test_ncu_fixture.py; here, synthetic
files check unit handling and errors (the numbers are chosen, then derived metrics recomputed)."""

import pytest

from cudalens.errors import InputError
from cudalens.profile.ncu import METRICS, base_kernel_name, by_kernel, ncu_command, parse_csv


def _csv(rows, units):
    header = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
              "Block Size", "Grid Size", "Device", "CC"] + list(units)
    lines = [",".join(f'"{h}"' for h in header),
             ",".join(['""'] * 11 + [f'"{u}"' for u in units.values()])]
    for i, (name, values) in enumerate(rows):
        fixed = [str(i), "1", "python3", "h", name, "1", "7", "(256, 1, 1)", "(1024, 1, 1)", "0", "9.0"]
        lines.append(",".join(f'"{v}"' for v in fixed + [values[m] for m in units]))
    return "\n".join(lines) + "\n"


def test_units_are_normalized_and_metrics_derived():
    units = {"gpu__time_duration.sum": "usecond",
             "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": "sector",
             "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": "request",
             "dram__bytes_read.sum": "Mbyte", "dram__bytes_write.sum": "Kbyte"}
    rows = [("void copy<float>(float *, const float *, int)",
             {"gpu__time_duration.sum": "10", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": "1,600",
              "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": "400",
              "dram__bytes_read.sum": "4", "dram__bytes_write.sum": "4000"}),
            ("void copy<float>(float *, const float *, int)",
             {"gpu__time_duration.sum": "30", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": "1600",
              "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": "400",
              "dram__bytes_read.sum": "4", "dram__bytes_write.sum": "4000"})]
    launches = parse_csv(_csv(rows, units))
    assert [lc.metrics["gpu__time_duration.sum"] for lc in launches] == [10_000.0, 30_000.0]
    legacy = by_kernel(launches)["copy"]
    assert legacy.launches == 2
    assert legacy.duration_s == pytest.approx(20e-6)
    assert legacy.global_ld_sectors_per_request == 4.0
    assert legacy.dram_bytes == pytest.approx(8e6)
    assert legacy.dram_bandwidth_gbps == pytest.approx(8e6 / 20e-6 / 1e9)
    assert legacy.gld_efficiency is None  # not in the file: not established


def test_not_a_csv_is_one_clear_error():
    with pytest.raises(InputError, match="not an Nsight Compute raw CSV"):
        parse_csv("hello,world\n1,2\n", source="x.csv")


@pytest.mark.parametrize("name,base", [
    ("void transpose<32>(float *, const float *)", "transpose"),
    ("copy_offset(float *, const float *, int)", "copy_offset"),
    ("ns::k(int)", "k"),
    ("saxpy", "saxpy"),
])
def test_base_kernel_name(name, base):
    assert base_kernel_name(name) == base


def test_command_asks_for_base_units_and_every_metric():
    cmd = ncu_command(["python3", "x.py"], kernel="copy", launch_skip=2, launch_count=3)
    assert cmd[cmd.index("--print-units") + 1] == "base"
    assert cmd[cmd.index("--metrics") + 1].split(",") == list(METRICS)
    assert cmd[cmd.index("-k") + 1] == "regex:^copy$"
    assert cmd[-2:] == ["python3", "x.py"]


def test_shared_wavefronts_come_from_the_per_instruction_counters_when_captured():
    from cudalens.profile.ncu import LaunchCounters, legacy_metrics

    base = {"smsp__sass_inst_executed_op_shared_st.sum": 1000.0,
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": 1096.0}
    old = legacy_metrics([LaunchCounters(1, "k", None, None, dict(base))])
    assert old.shared_wavefronts_source == "l1tex" and old.shared_st_wavefronts_per_request == 1.096
    new = legacy_metrics([LaunchCounters(1, "k", None, None, dict(
        base, **{"smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum": 1000.0}))])
    assert new.shared_wavefronts_source == "sass" and new.shared_st_wavefronts_per_request == 1.0
    assert new.shared_st_wavefronts_per_request_l1tex == 1.096
    assert legacy_metrics([LaunchCounters(1, "k", None, None, {})]).shared_wavefronts_source is None
