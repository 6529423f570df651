"""Nsight Compute: one fixed metric set, run on one launch, CSV parsed into counter facts.

cudalens asks ncu for the counters that can check its own predictions (sectors per request, shared
wavefronts and bank conflicts, branch uniformity) and for the guide's legacy metrics (load/store
efficiency, achieved occupancy, warp execution efficiency), plus time, DRAM traffic and cache hit
rates. ``ncu --csv --page raw`` prints one header row, one row of units, then one row per profiled
launch; :func:`parse_csv` reads that, and a CSV saved on another machine imports the same way.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import statistics
import subprocess
import tempfile
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from cudalens.compiled.names import base_name_from_demangled as base_kernel_name
from cudalens.errors import CudalensError, InputError, read_text

#: The metric set (ncu names). Grouped by what they establish.
METRICS: tuple[str, ...] = (
    # time and clocks
    "gpu__time_duration.sum",
    "sm__cycles_elapsed.avg.per_second",
    # global memory: sectors and requests (G1-G3), the guide's load/store efficiency (T4)
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct",
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct",
    # shared memory: wavefronts, requests (instructions) and bank conflicts (SH1). The smsp__sass_
    # wavefronts are counted per instruction from the addresses it accessed; the l1tex__ ones are
    # the L1 data stage's own count, which also rises with global traffic sharing that stage (on
    # an H100 a conflict-free tile store read 1.10 wavefronts per request at 16,384 blocks and
    # 1.00 at 16: benchmarks/results/h100/shared_store_probe.json)
    "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "smsp__sass_inst_executed_op_shared_ld.sum",
    "smsp__sass_inst_executed_op_shared_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    # control flow (D1): the uniform share is only meaningful where branch targets were executed
    "smsp__sass_average_branch_targets_threads_uniform.pct",
    "smsp__sass_branch_targets.sum",
    "smsp__sass_branch_targets_threads_divergent.sum",
    "smsp__thread_inst_executed_per_inst_executed.ratio",
    # occupancy (E1)
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__maximum_warps_per_active_cycle_pct",
    "launch__registers_per_thread",
    "launch__occupancy_limit_warps",
    "launch__occupancy_limit_registers",
    "launch__occupancy_limit_shared_mem",
    "launch__occupancy_limit_blocks",
    "launch__occupancy_limit_barriers",
    "launch__block_size",
    "launch__grid_size",
    # DRAM and caches
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "l1tex__t_sector_hit_rate.pct",
    "lts__t_sector_hit_rate.pct",
    # floating-point work, for FLOP/s and the roofline point
    "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum",
)

_PERMISSION_MARKERS = ("ERR_NVGPUCTRPERM", "permission to access NVIDIA GPU Performance Counters")

PERMISSION_HINT = (
    "the GPU's performance counters are not readable by this user (ERR_NVGPUCTRPERM): run as root, or "
    "load the driver with NVreg_RestrictProfilingToAdminUsers=0, or save a CSV with "
    "`ncu --csv --page raw` where counters are allowed and pass it with --counters FILE.csv"
)


class CountersUnavailable(CudalensError):
    """ncu is missing, refused (no permission) or failed; the message says what the user can do."""


@dataclass(frozen=True)
class LaunchCounters:
    """The counters of one profiled launch, keyed by metric name (None where ncu gave no value)."""

    launch_id: int
    kernel: str  # the name as ncu printed it (demangled, may include the parameter list)
    block: str | None
    grid: str | None
    metrics: dict[str, float | None] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)

    @property
    def base_name(self) -> str:
        """The kernel's name without template arguments, parameter list or return type."""
        return base_kernel_name(self.kernel)


def find_ncu() -> str | None:
    """ncu on PATH, or in the usual CUDA locations; ``CUDALENS_NCU`` names one (``none``: act as if absent)."""
    chosen = os.environ.get("CUDALENS_NCU")
    if chosen:
        return None if chosen.lower() == "none" else (shutil.which(chosen) or None)
    found = shutil.which("ncu")
    if found:
        return found
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and os.path.exists(os.path.join(root, "bin", "ncu")):
            return os.path.join(root, "bin", "ncu")
    return None


def ncu_command(
    program: Sequence[str],
    *,
    kernel: str | None = None,
    launch_skip: int = 0,
    launch_count: int | None = 1,
    metrics: Iterable[str] = METRICS,
    ncu: str = "ncu",
    report: str | None = None,
    mangled: bool = False,
) -> list[str]:
    """The ncu command line that profiles ``program`` with the fixed metric set.

    ``--clock-control none``: ncu's default locks the GPU's clocks to their base values while it
    profiles; we leave the clocks as the user has them, so counters and timings describe the same
    GPU the harness measures. ``report``: write a report there (``-o``) with the ``SourceCounters``
    section too, instead of printing the raw page; ``mangled``: match ``kernel`` by its mangled name.
    """
    out = (["--section", "SourceCounters", "-o", report, "-f"] if report
           else ["--csv", "--page", "raw", "--print-units", "base"])
    cmd = [ncu, *out, *(["--kernel-name-base", "mangled"] if mangled else []), "--clock-control", "none",
           "--metrics", ",".join(metrics)]
    if kernel:
        cmd += ["-k", f"regex:^{kernel}$" if not kernel.startswith("regex:") else kernel]
    if launch_skip:
        cmd += ["--launch-skip", str(launch_skip)]
    if launch_count is not None:
        cmd += ["--launch-count", str(launch_count)]
    return cmd + list(program)


#: What a user without ncu can do (the end of the "not found" line).
MISSING_HINT = "or pass a CSV saved elsewhere with --counters FILE.csv"


def _find_ncu_or_say(hint: str) -> str:
    ncu = find_ncu()
    if ncu is None:
        raise CountersUnavailable(f"Nsight Compute (ncu) was not found: install Nsight Compute (it ships with the "
                                  f"CUDA toolkit) {hint}")
    return ncu


def _run(cmd: list[str], timeout: float) -> subprocess.CompletedProcess:
    """Run ncu; CountersUnavailable when it times out, cannot start, or is refused the counters."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise CountersUnavailable(f"ncu did not finish within {timeout:.0f} s") from None
    except OSError as exc:
        raise CountersUnavailable(f"ncu could not run ({exc.strerror})") from None
    if any(marker in proc.stdout + proc.stderr for marker in _PERMISSION_MARKERS):
        raise CountersUnavailable(PERMISSION_HINT)
    return proc


def _last_line(text: str, default: str = "no output") -> str:
    return next((ln for ln in reversed(text.strip().splitlines()) if ln.strip()), default)


def run_ncu(program: Sequence[str], *, timeout: float = 300.0, **kwargs) -> str:
    """Profile ``program`` and return ncu's CSV text; CountersUnavailable says why it could not."""
    proc = _run(ncu_command(program, ncu=_find_ncu_or_say(MISSING_HINT), **kwargs), timeout)
    text = proc.stdout + proc.stderr
    csv_text = _csv_part(proc.stdout)
    if not csv_text:
        raise CountersUnavailable(f"ncu produced no counters (exit {proc.returncode}): {_last_line(text)}")
    return csv_text


@dataclass(frozen=True)
class Pages:
    """The two pages of one profiled launch's report: ``raw`` (the metric set, for :func:`parse_csv`)
    and ``source`` (``--page source --print-source cuda,sass`` with mangled names, for
    :func:`cudalens.profile.ncu_source.parse_source_csv`; per line when built with ``-lineinfo``)."""

    raw: str
    source: str


def profile_pages(program: Sequence[str], *, kernel: str, launch_skip: int = 0, mangled: bool = False,
                  timeout: float = 300.0, hint: str = MISSING_HINT) -> Pages:
    """One ncu run on one launch of ``kernel``: the metric set and the SourceCounters section into a
    report, whose raw and source pages are imported. CountersUnavailable says why there are none
    (``hint``: what to do when ncu is missing)."""
    ncu = _find_ncu_or_say(hint)
    with tempfile.TemporaryDirectory(prefix="cudalens-ncu-") as tmp:
        rep = os.path.join(tmp, "launch")
        proc = _run(ncu_command(program, kernel=kernel, launch_skip=launch_skip, launch_count=1, ncu=ncu,
                                report=rep, mangled=mangled), timeout)
        path = rep + ".ncu-rep"
        if not os.path.exists(path):
            raise CountersUnavailable(f"ncu profiled nothing (exit {proc.returncode}): "
                                      f"{_last_line(proc.stdout + proc.stderr)[:200]}")
        raw = _run([ncu, "--import", path, "--csv", "--page", "raw", "--print-units", "base"], timeout)
        src = _run([ncu, "--import", path, "--csv", "--page", "source", "--print-source", "cuda,sass",
                    "--print-kernel-base", "mangled"], timeout)
    return Pages(raw.stdout, src.stdout)


def _csv_part(text: str) -> str:
    """ncu mixes its own '==PROF==' lines and the program's output with the CSV; keep the CSV."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith('"ID"'):
            return "\n".join(ln for ln in lines[i:] if ln.startswith('"'))
    return ""


def _number(text: str) -> float | None:
    text = text.strip().replace(",", "")
    if text in ("", "n/a", "N/A", "-"):
        return None
    try:
        return float(text)
    except ValueError:
        return None


# ncu scales units unless asked for base units (--print-units base); a CSV saved by a user may carry
# either. Values are normalized to base units: nanoseconds, bytes, cycles per second, plain counts.
_PREFIX = {"n": 1e-9, "u": 1e-6, "m": 1e-3, "": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_TIME_TO_NS = {"nsecond": 1.0, "usecond": 1e3, "msecond": 1e6, "second": 1e9}


def _unit_scale(unit: str) -> float:
    """Factor that brings a value in ``unit`` to cudalens' base unit for that quantity."""
    unit = unit.strip()
    if unit in _TIME_TO_NS:
        return _TIME_TO_NS[unit]
    if unit.endswith("byte") and unit[:-4] in _PREFIX:
        return _PREFIX[unit[:-4]]
    if "/" in unit:  # rates such as cycle/nsecond, byte/second, Gbyte/second
        num, den = unit.split("/", 1)
        num_scale = _PREFIX.get(num[:-4], 1.0) if num.endswith("byte") else 1.0
        den_seconds = _TIME_TO_NS.get(den, 1e9) / 1e9
        return num_scale / den_seconds
    return 1.0


def parse_csv(text: str, source: str = "<csv>") -> tuple[LaunchCounters, ...]:
    """Parse ``ncu --csv --page raw`` output (header, units row, one row per launch)."""
    body = _csv_part(text) or text
    rows = list(csv.reader(io.StringIO(body)))
    if not rows or "Kernel Name" not in rows[0]:
        raise InputError(f"{source}: not an Nsight Compute raw CSV (no 'Kernel Name' column in the header)")
    header = rows[0]
    col = {name: i for i, name in enumerate(header)}
    data = rows[1:]
    units: dict[str, str] = {}
    if data and (not data[0][col["ID"]].strip().isdigit()):
        units = {header[i]: u for i, u in enumerate(data[0]) if "__" in header[i]}
        data = data[1:]
    metric_cols = [name for name in header if "__" in name]
    out = []
    for lineno, row in enumerate(data, start=2):
        if len(row) < len(header):
            raise InputError(f"{source}: row {lineno + 1} has {len(row)} fields, the header has {len(header)}")
        out.append(
            LaunchCounters(
                launch_id=int(_number(row[col["ID"]]) or 0),
                kernel=row[col["Kernel Name"]],
                block=row[col["Block Size"]] if "Block Size" in col else None,
                grid=row[col["Grid Size"]] if "Grid Size" in col else None,
                metrics={name: _scaled(_number(row[col[name]]), units.get(name, "")) for name in metric_cols},
                units=units,
            )
        )
    return tuple(out)


def _scaled(value: float | None, unit: str) -> float | None:
    return None if value is None else value * _unit_scale(unit)


def parse_csv_file(path: str) -> tuple[LaunchCounters, ...]:
    return parse_csv(read_text(path, "counters file"), source=path)


@dataclass(frozen=True)
class LegacyMetrics:
    """The guide's (nvprof-era) metrics, derived from ncu counters. None where not established."""

    kernel: str
    launches: int
    duration_s: float | None
    global_ld_sectors_per_request: float | None
    global_st_sectors_per_request: float | None
    shared_ld_wavefronts_per_request: float | None  # per instruction from addresses (sass); else hardware
    shared_st_wavefronts_per_request: float | None
    shared_ld_bank_conflicts_per_request: float | None
    shared_st_bank_conflicts_per_request: float | None
    gld_efficiency: float | None  # percent: requested bytes / transferred bytes (BPG 8.2.3)
    gst_efficiency: float | None
    branch_efficiency: float | None  # percent of branch targets uniform across the warp; None if no branch ran
    warp_execution_efficiency: float | None  # percent: average active threads per instruction / 32
    achieved_occupancy: float | None  # fraction 0..1
    theoretical_occupancy: float | None  # fraction 0..1
    dram_bytes: float | None
    dram_bandwidth_gbps: float | None  # 10^9 B/s
    flops: float | None  # FP32 + FP64 operations (an FMA counts 2)
    l1_hit_rate: float | None  # percent
    l2_hit_rate: float | None  # percent
    occupancy_limits: dict[str, float | None] | None = None  # ncu's blocks/SM allowed by each limit
    registers_per_thread: float | None = None
    #: where the shared wavefronts come from: "sass" (addresses per instruction) or "l1tex" (the L1
    #: data stage's count, for captures without the sass metrics)
    shared_wavefronts_source: str | None = None
    shared_ld_wavefronts_per_request_l1tex: float | None = None
    shared_st_wavefronts_per_request_l1tex: float | None = None

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def _ratio(num: float | None, den: float | None) -> float | None:
    if num is None or den is None or den == 0:
        return None
    return num / den


def _median(values: list[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


def legacy_metrics(launches: Sequence[LaunchCounters]) -> LegacyMetrics:
    """Derive the guide's metrics for one kernel from its launches (medians across launches)."""
    if not launches:
        raise ValueError("no launches")

    def m(name: str) -> float | None:
        return _median([lc.metrics.get(name) for lc in launches])

    def pct_to_fraction(value: float | None) -> float | None:
        return None if value is None else value / 100.0

    duration_ns = m("gpu__time_duration.sum")
    duration = None if duration_ns is None else duration_ns * 1e-9  # ncu reports nanoseconds
    dram = None
    if m("dram__bytes_read.sum") is not None and m("dram__bytes_write.sum") is not None:
        dram = m("dram__bytes_read.sum") + m("dram__bytes_write.sum")
    flops = None
    parts = [m(f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum") for op in ("fadd", "fmul", "ffma", "dadd", "dmul", "dfma")]
    if all(p is not None for p in parts):
        fadd, fmul, ffma, dadd, dmul, dfma = parts
        flops = fadd + fmul + 2 * ffma + dadd + dmul + 2 * dfma
    thread_ratio = m("smsp__thread_inst_executed_per_inst_executed.ratio")
    branch_eff = m("smsp__sass_average_branch_targets_threads_uniform.pct")
    if m("smsp__sass_branch_targets.sum") == 0:
        branch_eff = None  # no branch executed: ncu prints 0, but nothing was measured
    limits = {name: m(f"launch__occupancy_limit_{name}") for name in ("warps", "registers", "shared_mem", "blocks", "barriers")}
    n_ld, n_st = m("smsp__sass_inst_executed_op_shared_ld.sum"), m("smsp__sass_inst_executed_op_shared_st.sum")
    hw_ld = _ratio(m("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"), n_ld)
    hw_st = _ratio(m("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"), n_st)
    sass_ld_total = m("smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")
    sass_st_total = m("smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum")
    sass_ld, sass_st = _ratio(sass_ld_total, n_ld), _ratio(sass_st_total, n_st)
    sass_known = sass_ld_total is not None or sass_st_total is not None
    source = "sass" if sass_known else ("l1tex" if hw_ld is not None or hw_st is not None else None)
    return LegacyMetrics(
        kernel=launches[0].base_name,
        launches=len(launches),
        duration_s=duration,
        global_ld_sectors_per_request=_ratio(m("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), m("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")),
        global_st_sectors_per_request=_ratio(m("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"), m("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum")),
        shared_ld_wavefronts_per_request=sass_ld if sass_known else hw_ld,
        shared_st_wavefronts_per_request=sass_st if sass_known else hw_st,
        shared_ld_bank_conflicts_per_request=_ratio(m("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"), m("smsp__sass_inst_executed_op_shared_ld.sum")),
        shared_st_bank_conflicts_per_request=_ratio(m("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"), m("smsp__sass_inst_executed_op_shared_st.sum")),
        gld_efficiency=m("smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct"),
        gst_efficiency=m("smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct"),
        branch_efficiency=branch_eff,
        warp_execution_efficiency=None if thread_ratio is None else 100.0 * thread_ratio / 32.0,
        achieved_occupancy=pct_to_fraction(m("sm__warps_active.avg.pct_of_peak_sustained_active")),
        theoretical_occupancy=pct_to_fraction(m("sm__maximum_warps_per_active_cycle_pct")),
        dram_bytes=dram,
        dram_bandwidth_gbps=None if dram is None or not duration else dram / duration / 1e9,
        flops=flops,
        l1_hit_rate=m("l1tex__t_sector_hit_rate.pct"),
        l2_hit_rate=m("lts__t_sector_hit_rate.pct"),
        occupancy_limits=limits if any(v is not None for v in limits.values()) else None,
        registers_per_thread=m("launch__registers_per_thread"),
        shared_wavefronts_source=source,
        shared_ld_wavefronts_per_request_l1tex=hw_ld,
        shared_st_wavefronts_per_request_l1tex=hw_st,
    )


def by_kernel(launches: Iterable[LaunchCounters]) -> dict[str, LegacyMetrics]:
    """Group launches by kernel base name and derive the legacy metrics of each."""
    groups: dict[str, list[LaunchCounters]] = {}
    for lc in launches:
        groups.setdefault(lc.base_name, []).append(lc)
    return {name: legacy_metrics(group) for name, group in groups.items()}
