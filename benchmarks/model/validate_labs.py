#!/usr/bin/env python3
"""Issue 7's GPU acceptance: every lab kernel's static predictions against Nsight Compute.

For each lab kernel file that has device kernels (the host-transfer labs 5-8, 17 and 18 are left
out and listed as such), this script

1. runs the static analyzer on the file with the lab's block and values: the access model with the
   scalar parameters set to the values launched (``analyze_model``), and ``analyze_file`` (compiled,
   rules, findings) with the file's macros only, exactly as tests/labs/test_lab_analyzer.py does;
2. compiles the file once with the same nvcc and flags as the compiled layer, and launches every
   kernel of the plan once under one ``ncu`` session per file (benchmarks/model/_validate_driver.py, via
   cuda.core; ``--cache-control all --clock-control none``, the metric set of
   ``cudalens.profile.ncu.METRICS``);
3. compares per kernel: global load/store sectors per request, shared load/store wavefronts per
   request, divergence (branch efficiency < 99 % iff a branch is predicted divergent, and the count of
   divergent branch targets > 0 iff so), theoretical occupancy and registers per thread;
4. ranks each bad kernel's findings with the measured impacts (``guided.rank``) and checks that the
   top one names the rule the lab pairs it with;
5. compares the bad and good kernels' ``gpu__time_duration``;
6. writes OUT/validation.json and OUT/validation.md and prints the summary table last.

"Agree" is the issue's strict criterion: per-request ratios equal within 0.02 (they are integers per
request for affine accesses, so the kernel-wide average is exact), occupancy within 0.1 percentage
point, registers equal, divergence classes equal. The cross-check tolerance of guided.crosscheck is
recorded next to it (``within_tolerance``).

Never changes clocks or power settings (ncu runs with --clock-control none).

Usage (from the repo root):  PYTHONPATH=src python benchmarks/model/validate_labs.py [OUT_DIR] [--only FILE.cu ...]
                             PYTHONPATH=src python benchmarks/model/validate_labs.py --dry-run   (no GPU: predictions)
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))

from cudalens.findings import Finding, sort_findings  # noqa: E402
from cudalens.guided.crosscheck import CrossCheck, cross_check, divergence_class, shared_wavefronts_prediction  # noqa: E402
from cudalens.profile.ncu import LegacyMetrics  # noqa: E402
from cudalens.quantities import BRANCH_EFFICIENCY, PER_REQUEST  # noqa: E402

DRIVER = Path(__file__).resolve().parent / "_validate_driver.py"
#: ncu's launch__registers_per_thread is never below 16 on the H100, whatever ptxas allocated (8-15
#: in the labs, 4 for an empty kernel: shared_store_probe.json); the driver's NUM_REGS attribute
#: and the occupancy calculator use ptxas's count. With at most 64 warps per SM and 64K registers,
#: a floor of 16 never limits occupancy (16 x 32 x 64 = 32K).
NCU_REGISTER_FLOOR = 16
SCHEMA = "cudalens.validate-labs/1"

#: Strict ("exact") agreement: per-request ratios, occupancy in percentage points.
EXACT_RATIO_TOL = 0.02
EXACT_OCCUPANCY_PP = 0.1
BRANCH_UNIFORM_PCT = BRANCH_EFFICIENCY.tolerance.threshold

#: Labs with no device-kernel pair of the bad/good kind: host transfers, streams, allocation.
SKIPPED_LABS = {5: "host transfer (pinned vs pageable)", 6: "host transfer (batching copies)",
                7: "host transfer overlap over streams", 8: "zero-copy host memory",
                17: "stream concurrency of one kernel", 18: "allocation API cost"}


# ---- the plan: what each lab file launches -----------------------------------------------------

@dataclass(frozen=True)
class Launch:
    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    smem: int = 0


@dataclass(frozen=True)
class FilePlan:
    file: str
    labs: tuple[int, ...]
    block: tuple[int, int, int]  # the block the analyzer assumes (every launch of the file uses it)
    values: Mapping[str, Any]  # scalar kernel parameters by name (launch args, and access-model defines)
    buffer_bytes: int  # each pointer parameter gets its own zeroed buffer of this size
    launches: tuple[Launch, ...]
    macros: Mapping[str, Any] = field(default_factory=dict)  # -D for the compile and the analyzer
    note: str = ""


def _g(n: int) -> tuple[int, int, int]:
    return (n, 1, 1)


B256 = (256, 1, 1)
MB = 1 << 20


def _plan() -> tuple[FilePlan, ...]:
    t_copy = 1 << 23          # threads of the copies
    t_work = 1 << 18          # threads of the arithmetic loops (about 2048 per SM on an H100)
    t_loop = 128 * 256        # the loop-counter pair: about one block per SM
    t_div = 1 << 22
    n_big = 1 << 24
    m = 4096
    return (
        FilePlan("coalescing.cu", (1, 2), B256, {"offset": 1, "stride": 4}, t_copy * 4 * 4 + MB,
                 tuple(Launch(k, _g(t_copy // 256), B256) for k in
                       ("offset_copy", "stride_copy", "copy_aligned", "copy_misaligned", "copy_stride2"))),
        FilePlan("matmul.cu", (3, 4), (32, 32, 1), {"N": m, "M": m}, m * m * 4 + MB,
                 tuple(Launch(k, (m // 32, m // 32, 1), (32, 32, 1)) for k in
                       ("ab_simple", "ab_tile_a", "ab_tile_ab", "aat_simple", "aat_shared", "aat_padded"))),
        FilePlan("divergence.cu", (11,), B256, {"n": 64}, t_div * 4 + MB,
                 tuple(Launch(k, _g(t_div // 256), B256) for k in ("branch_lanes", "branch_warps", "branch_select")),
                 note="chain length 64: long enough for the divergent branch to dominate the time, short enough "
                      "that the loop branches do not dilute branch efficiency above 99 %"),
        FilePlan("intrinsics.cu", (12,), B256, {"base": 0.0, "step": 1.0e-5, "iters": 64}, t_work * 4 + MB,
                 tuple(Launch(k, _g(t_work // 256), B256) for k in
                       ("sin_accurate", "sin_intrinsic", "exp_accurate", "exp_intrinsic")),
                 note="compiled as written (the lab's -use_fast_math variant is not launched here)"),
        FilePlan("mathfuncs.cu", (13,), B256, {"base": 1.0, "step": 1.0e-6, "iters": 64}, t_work * 4 + MB,
                 tuple(Launch(k, _g(t_work // 256), B256) for k in
                       ("pow_square", "square_mul", "pow_third", "cbrt_call", "pow_base2", "exp2_call",
                        "sin_of_pi_x", "sinpi_call", "sin_plus_cos", "sincos_call", "recip_sqrt", "rsqrt_call"))),
        FilePlan("intops.cu", (14,), B256, {"log2n": 6, "iters": 128},
                 t_work * 4 + MB, tuple(Launch(k, _g(t_work // 256), B256) for k in ("divmod_var", "shift_mask"))),
        FilePlan("intops.cu", (14,), B256, {"n": 512, "stride": t_loop}, t_loop * 512 * 4 + MB,
                 tuple(Launch(k, _g(t_loop // 256), B256) for k in ("loop_unsigned", "loop_signed")),
                 note="the loop-counter pair runs one 256-thread block per SM (128 blocks), as lab 14 does: "
                      "latency-bound, where the loads each thread keeps in flight decide the time"),
        FilePlan("constant.cu", (19,), B256, {"iters": 256, "spread": 32}, t_work * 4 + MB,
                 tuple(Launch(k, _g(t_work // 256), B256) for k in ("const_read", "const_uniform", "const_divergent"))),
        FilePlan("localmem.cu", (20,), B256, {"words": 32, "iters": 64}, t_work * 4 + MB,
                 tuple(Launch(k, _g(t_work // 256), B256) for k in ("local_dynamic", "local_registers"))),
        FilePlan("occupancy.cu", (15,), B256, {"n": n_big}, n_big * 4 + MB,
                 (Launch("occ_copy", _g(132 * 8), B256, 32 * 1024), Launch("reg_heavy", _g(132 * 8), B256),
                  Launch("reg_bounded", _g(132 * 8), B256)),
                 note="occ_copy with 32 KiB of dynamic shared memory per block (a shared-memory-limited occupancy)"),
        FilePlan("blocksize.cu", (16,), B256, {"n": n_big}, n_big * 4 + MB,
                 (Launch("block_copy", _g(n_big // 256), B256), Launch("grid_copy", _g(132), B256))),
        FilePlan("l2persist.cu", (9,), B256, {"stream_words": n_big, "freq_words": 1 << 20}, n_big * 4 + MB,
                 (Launch("sliding_window", _g(n_big // 256), B256),),
                 note="launched without an access-policy window"),
        FilePlan("asynccopy.cu", (10,), (128, 1, 1), {"copy_count": 32}, 132 * 8 * 128 * 32 * 4 + MB,
                 tuple(Launch(k, _g(132 * 8), (128, 1, 1), 128 * 32 * 4) for k in ("stage_sync", "stage_async")),
                 macros={"ELEM_BYTES": 4}, note="4-byte elements, 16 KiB staged per block"),
    )


_TYPES = {"int": "i32", "signed": "i32", "signed int": "i32", "unsigned": "u32", "unsigned int": "u32",
          "long long": "i64", "long long int": "i64", "long": "i64", "int64_t": "i64",
          "unsigned long long": "u64", "size_t": "u64", "uint64_t": "u64", "float": "f32", "double": "f64"}


def scalar_kind(type_text: str) -> str:
    """The driver's scalar code for a kernel parameter type ("const int" -> "i32")."""
    words = [w for w in type_text.replace("__restrict__", " ").split() if w not in ("const", "volatile")]
    kind = _TYPES.get(" ".join(words))
    if kind is None:
        raise ValueError(f"no launch type for a parameter of type {type_text!r}")
    return kind


def launch_args(params: Sequence[Any], values: Mapping[str, Any]) -> list[list]:
    """Driver argument specs: each pointer its own buffer (in parameter order), scalars by name."""
    out, nptr = [], 0
    for p in params:
        if p.is_pointer:
            out.append(["ptr", nptr])
            nptr += 1
        else:
            if p.name not in values:
                raise ValueError(f"no value for scalar parameter {p.name!r}")
            out.append([scalar_kind(p.type), values[p.name]])
    return out


# ---- predictions (pure over dicts) -------------------------------------------------------------


def _access_value(a: Mapping[str, Any]) -> float | None:
    if a.get("space") == "global":
        return a.get("sectors_per_request")
    return shared_wavefronts_prediction(*_access_and_load(a))


def _access_and_load(a: Mapping[str, Any]) -> tuple[Any, Any]:
    """The Access (and CompiledLoad, or None) of an access in this script's kernel form."""
    from cudalens.evidence.join import CompiledLoad
    from cudalens.source.model import Access

    access = Access(a.get("line") or 0, a.get("array") or "", a.get("space") or "", a.get("op") or "",
                    a.get("bytes_per_thread"), a.get("index") or "", sectors_per_request=a.get("sectors_per_request"),
                    ideal_sectors_per_request=a.get("ideal_sectors_per_request"),
                    bank_conflict_ways=a.get("bank_conflict_ways"), pattern=a.get("pattern"),
                    wavefronts_per_request=a.get("wavefronts_per_request"))
    load = None
    if a.get("compiled_wavefronts_per_request") is not None:
        load = CompiledLoad(a.get("compiled_load_bytes") or 0, a["compiled_wavefronts_per_request"],
                            a.get("compiled_requests_per_access") or 1.0)
    return access, load


def kernel_record(kernel: Mapping[str, Any]) -> Any:
    """The pipeline's KernelRecord (what cudalens.guided reads) of a kernel in this script's form."""
    from cudalens.evidence.join import KernelRecord
    from cudalens.source.model import Branch, Kernel

    pairs = [_access_and_load(a) for a in kernel.get("accesses", [])]
    branches = kernel.get("branches", [])
    compiled = "unmodelled_branch_lines" in kernel or any("predicated" in b for b in branches)
    k = Kernel(kernel["name"], kernel.get("file") or "", kernel.get("line") or 0, kernel.get("line") or 0, (), False,
               None, accesses=tuple(a for a, _ in pairs),
               branches=tuple(Branch(b.get("line") or 0, b.get("condition") or "", b.get("divergent")) for b in branches))
    hidden = kernel.get("unmodelled_branch_lines")
    return KernelRecord(k, None, tuple(ld for _, ld in pairs),
                        tuple(bool(b.get("predicated")) for b in branches) if compiled else None,
                        tuple(hidden) if hidden is not None else None, occupancy=kernel.get("occupancy"))


def ratio_prediction(accesses: Sequence[Mapping[str, Any]], space: str, op: str) -> tuple[float | None, str]:
    """The kernel-wide per-request figure ncu should show for (space, op), and how it was obtained.

    One value when every access agrees; when they differ but all sit in the same loops (so each is
    executed equally often), their mean; else None with the reason.
    """
    acc = [a for a in accesses if a.get("space") == space and a.get("op") == op and a.get("pattern") != "inactive"]
    if not acc:
        return None, "no such access"
    vals = [_access_value(a) for a in acc]
    if any(v is None for v in vals):
        a = acc[vals.index(None)]
        return None, f"line {a.get('line')} not modelled ({a.get('pattern')})"
    if len({round(float(v), 4) for v in vals}) == 1:
        return float(vals[0]), "every access" if len(vals) > 1 else "one access"
    nests = {tuple(a.get("loop_lines") or ()) for a in acc}
    if len(nests) == 1 and all("loop_lines" in a for a in acc):
        # a load the compiler vectorized issues one request per width/element executions
        weights = [float(a.get("compiled_requests_per_access") or 1.0) for a in acc]
        mean = sum(v * w for v, w in zip(vals, weights)) / sum(weights)
        how = "requests-weighted mean" if any(w != 1.0 for w in weights) else "mean"
        return mean, f"{how} of {len(vals)} accesses executed equally often"
    return None, "accesses differ and run different numbers of times; ncu gives only their aggregate"


def exact_ratio(predicted: float | None, measured: float | None) -> bool | None:
    if predicted is None or measured is None:
        return None
    return abs(predicted - measured) <= EXACT_RATIO_TOL


def _row(file: str, labs: Sequence[int], kernel: str, quantity: str, predicted: Any, measured: Any,
         agree: bool | None, criterion: str, within_tolerance: bool | None = None, note: str = "") -> dict:
    return {"file": file, "labs": list(labs), "kernel": kernel, "quantity": quantity,
            "predicted": _clean(predicted), "measured": _clean(measured), "agree": agree,
            "criterion": criterion, "within_tolerance": within_tolerance, "note": note}


def _clean(v: Any) -> Any:
    if isinstance(v, float):
        return None if not math.isfinite(v) else round(v, 4)
    return v


def kernel_rows(file: str, labs: Sequence[int], kernel: Mapping[str, Any], metrics: LegacyMetrics | None,
                divergent_targets: float | None = None) -> list[dict]:
    """Predicted-vs-measured rows of one kernel (``kernel`` in the analysis JSON's form, its accesses
    optionally carrying ``loop_lines``; ``occupancy`` and ``registers`` where compiled)."""
    name = kernel["name"]
    if metrics is None:
        return [_row(file, labs, name, "profiled", "1 launch", None, False, "ncu row for the kernel",
                     note="ncu returned no row for this kernel")]
    checks: dict[str, CrossCheck] = {c.quantity: c for c in cross_check([kernel_record(kernel)], {name: metrics})}
    rows = []
    for (space, op), q in PER_REQUEST.items():
        quantity, attr = q.name, q.counter
        predicted, how = ratio_prediction(kernel.get("accesses", []), space, op)
        measured = getattr(metrics, attr)
        if how == "no such access" and not measured:
            continue
        c = checks.get(quantity)
        within = q.tolerance.agrees(predicted, measured) if predicted is not None and measured is not None else None
        if c is not None and c.agree is not None:
            within = c.agree
        note = how
        if space == "shared":
            hw = getattr(metrics, f"{attr}_l1tex", None)
            if metrics.shared_wavefronts_source == "sass" and hw is not None:
                note += f"; measured per instruction from addresses (sass); the L1 data stage counted {hw:.4f}"
            elif metrics.shared_wavefronts_source == "l1tex":
                note += "; measured by the L1 data stage (l1tex), which also counts contention with global traffic"
        rows.append(_row(file, labs, name, quantity, predicted, measured, exact_ratio(predicted, measured),
                         f"|measured - predicted| <= {EXACT_RATIO_TOL}", within, note))
    predicted_class, _, why = divergence_class(kernel_record(kernel))
    label = {True: "divergent", False: "uniform", None: "unknown"}[predicted_class]
    eff = metrics.branch_efficiency
    eff_agree = None
    if predicted_class is not None and eff is not None:
        eff_agree = (eff < BRANCH_UNIFORM_PCT) == predicted_class
    elif predicted_class is False and eff is None:
        eff_agree = True  # no branch executed at all: nothing diverged
    rows.append(_row(file, labs, name, "divergence (branch efficiency %)", label, eff, eff_agree,
                     f"branch efficiency < {BRANCH_UNIFORM_PCT:g} % iff predicted divergent",
                     checks["branch efficiency"].agree if "branch efficiency" in checks else None,
                     why or ("" if eff is not None else "no branch executed")))
    if divergent_targets is not None:
        rows.append(_row(file, labs, name, "divergence (divergent branch targets)", label, divergent_targets,
                         None if predicted_class is None else (divergent_targets > 0) == predicted_class,
                         "divergent branch targets > 0 iff predicted divergent"))
    occ = (kernel.get("occupancy") or {}).get("occupancy")
    if occ is not None or metrics.theoretical_occupancy is not None:
        p = None if occ is None else 100.0 * occ
        mm = None if metrics.theoretical_occupancy is None else 100.0 * metrics.theoretical_occupancy
        oc = checks.get("theoretical occupancy")
        rows.append(_row(file, labs, name, "theoretical occupancy %", p, mm,
                         None if p is None or mm is None else abs(p - mm) <= EXACT_OCCUPANCY_PP,
                         f"within {EXACT_OCCUPANCY_PP} percentage point", oc.agree if oc else None))
    if kernel.get("registers") is not None or metrics.registers_per_thread is not None:
        r, mr = kernel.get("registers"), metrics.registers_per_thread
        shown = None if r is None else max(int(r), NCU_REGISTER_FLOOR)
        rows.append(_row(file, labs, name, "registers/thread", shown, mr,
                         None if shown is None or mr is None else shown == int(mr),
                         f"equal, ptxas's count raised to ncu's floor of {NCU_REGISTER_FLOOR}",
                         note="" if r is None or int(r) >= NCU_REGISTER_FLOOR else f"ptxas: {int(r)}"))
    return rows


# ---- the bad/good pairs -----------------------------------------------------------------------

def top_rule_check(findings: Sequence[Finding], bad: str, rule: str, loads: Mapping[str, Any] | None = None,
                   report: Mapping[str, Any] | None = None) -> dict:
    """Rank the bad kernel's findings (measured impacts where ``loads`` allow) and say whether the
    top one is ``rule``. Validation findings (V*) are left out: they judge the model, not the code."""
    from cudalens.guided.rank import rank_findings

    own = [f for f in findings if f.kernel == bad and not f.rule.startswith("V")]
    records = [kernel_record(k) for k in (report or {}).get("kernels", [])]
    ranked = rank_findings(sort_findings(own), loads or {}, records)
    static = sort_findings(own)
    rules = [f.rule for f in ranked]
    return {"expected_rule": rule, "top_rule": rules[0] if rules else None,
            "top_is_rule": bool(rules) and rules[0] == rule,
            "static_top_rule": static[0].rule if static else None,
            "rule_position": rules.index(rule) + 1 if rule in rules else None,
            "ranked_rules": rules[:6]}


def pair_row(lab: int, lab_name: str, bad: str, good: str, rule: str, top: Mapping[str, Any],
             bad_s: float | None, good_s: float | None) -> dict:
    speedup = bad_s / good_s if bad_s and good_s else None
    return {"lab": lab, "lab_name": lab_name, "bad": bad, "good": good, "rule": rule,
            "top_rule": top.get("top_rule"), "top_is_rule": top.get("top_is_rule"),
            "static_top_rule": top.get("static_top_rule"), "rule_position": top.get("rule_position"),
            "ranked_rules": top.get("ranked_rules", []),
            "bad_time_us": None if bad_s is None else round(bad_s * 1e6, 3),
            "good_time_us": None if good_s is None else round(good_s * 1e6, 3),
            "speedup": None if speedup is None else round(speedup, 3),
            "good_faster": None if speedup is None else speedup > 1.0}


# ---- summary and rendering ----------------------------------------------------------------------

def summarize(rows: Sequence[Mapping[str, Any]], pairs: Sequence[Mapping[str, Any]]) -> dict:
    by_q: dict[str, dict[str, int]] = {}
    for r in rows:
        q = by_q.setdefault(r["quantity"], {"agree": 0, "disagree": 0, "not_comparable": 0})
        q["agree" if r["agree"] is True else "disagree" if r["agree"] is False else "not_comparable"] += 1
    compared = [r for r in rows if r["agree"] is not None]
    return {
        "comparisons": len(compared), "agree": sum(1 for r in compared if r["agree"]),
        "not_comparable": len(rows) - len(compared), "by_quantity": by_q,
        "pairs": len(pairs), "top_rule_correct": sum(1 for p in pairs if p["top_is_rule"]),
        "good_faster": sum(1 for p in pairs if p["good_faster"]),
    }


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "NO"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def _agree_text(v: bool | None) -> str:
    return "n/a" if v is None else ("yes" if v else "NO")


def render_markdown(doc: Mapping[str, Any]) -> str:
    out = [f"# Lab kernels: predicted vs measured ({doc.get('device', '?')})", "",
           f"Driver {doc.get('driver', '?')}, {doc.get('ncu_version', 'ncu ?')}, {doc.get('date', '')}.",
           f"Command: `{doc.get('command', '')}`", "",
           "Agree: the strict criterion of each row (ratios within 0.02, occupancy within 0.1 pp, registers "
           "equal, divergence class equal). Tolerance: guided.crosscheck's tolerance (10 % / 0.5, 1 pp).", ""]
    s = doc.get("summary") or summarize(doc.get("rows", []), doc.get("pairs", []))
    out += [f"**{s['agree']}/{s['comparisons']} comparisons agree** ({s['not_comparable']} not comparable); "
            f"top-ranked rule correct for {s['top_rule_correct']}/{s['pairs']} bad kernels; good variant faster "
            f"for {s['good_faster']}/{s['pairs']} pairs.", ""]
    out += ["## Bad/good pairs", "", "| lab | bad | good | rule | top-ranked rule | right | bad µs | good µs | "
            "speedup | good faster |", "|---|---|---|---|---|---|---|---|---|---|"]
    for p in doc.get("pairs", []):
        out.append(f"| {p['lab']} {p['lab_name']} | {p['bad']} | {p['good']} | {p['rule']} | {_fmt(p['top_rule'])} | "
                   f"{_agree_text(p['top_is_rule'])} | {_fmt(p['bad_time_us'])} | {_fmt(p['good_time_us'])} | "
                   f"{_fmt(p['speedup'])} | {_agree_text(p['good_faster'])} |")
    out += ["", "## Per kernel", "", "| file | kernel | quantity | predicted | measured | agree | tolerance | note |",
            "|---|---|---|---|---|---|---|---|"]
    for r in doc.get("rows", []):
        out.append(f"| {r['file']} | {r['kernel']} | {r['quantity']} | {_fmt(r['predicted'])} | {_fmt(r['measured'])} | "
                   f"{_agree_text(r['agree'])} | {_agree_text(r['within_tolerance'])} | {r.get('note', '')} |")
    if doc.get("skipped"):
        out += ["", "## Not validated here", ""]
        out += [f"- lab {s['lab']} {s.get('name', '')}: {s['reason']}" for s in doc["skipped"]]
    if doc.get("notes"):
        out += ["", "## Notes", ""] + [f"- {n}" for n in doc["notes"]]
    return "\n".join(out) + "\n"


def render_summary(doc: Mapping[str, Any]) -> str:
    lines = [f"{'file':<15}{'kernel':<17}{'quantity':<40}{'predicted':>11}{'measured':>11}  agree"]
    for r in doc.get("rows", []):
        lines.append(f"{r['file']:<15}{r['kernel']:<17}{r['quantity']:<40}{_fmt(r['predicted']):>11}"
                     f"{_fmt(r['measured']):>11}  {_agree_text(r['agree'])}")
    lines.append("")
    lines.append(f"{'lab':<5}{'bad':<17}{'good':<17}{'rule':<6}{'top':<6}{'right':<7}{'bad us':>10}{'good us':>10}"
                 f"{'speedup':>9}  faster")
    for p in doc.get("pairs", []):
        lines.append(f"{p['lab']:<5}{p['bad']:<17}{p['good']:<17}{p['rule']:<6}{_fmt(p['top_rule']):<6}"
                     f"{_agree_text(p['top_is_rule']):<7}{_fmt(p['bad_time_us']):>10}{_fmt(p['good_time_us']):>10}"
                     f"{_fmt(p['speedup']):>9}  {_agree_text(p['good_faster'])}")
    s = doc.get("summary") or summarize(doc.get("rows", []), doc.get("pairs", []))
    lines.append("")
    for q, c in s["by_quantity"].items():
        lines.append(f"  {q:<40} agree {c['agree']:>3}  disagree {c['disagree']:>3}  n/a {c['not_comparable']:>3}")
    lines.append(f"{s['agree']}/{s['comparisons']} comparisons agree; top-ranked rule right for "
                 f"{s['top_rule_correct']}/{s['pairs']}; good faster for {s['good_faster']}/{s['pairs']}"
                 + (f" ({doc.get('device')}, {doc.get('seconds', 0):.0f} s)" if doc.get("device") else ""))
    return "\n".join(lines)


# ---- the GPU side -------------------------------------------------------------------------------

def _analysis(plan: FilePlan, cc: str):
    """(kernel dicts for the comparison, FileAnalysis with the findings) for one lab file."""
    from cudalens.access.model import analyze_model
    from cudalens.compiled.launch import occupancy
    from cudalens.evidence.join import add_branch_sass, annotate_compiled_loads
    from cudalens.labs.runner import kernel_path
    from cudalens.pipeline.stages import analyze_file
    from cudalens.source.parse import parse_file

    path = str(kernel_path(plan.file))
    fa = analyze_file(path, block=plan.block, defines=dict(plan.macros), cc=cc, compile=True)
    ints = {k: v for k, v in plan.values.items() if isinstance(v, int)}
    model = analyze_model(parse_file(path), block=plan.block, defines={**plan.macros, **ints})
    compiled = fa.compiled.kernels if fa.compiled is not None else {}
    smem = {ln.kernel: ln.smem for ln in plan.launches}
    threads = plan.block[0] * plan.block[1] * plan.block[2]
    kernels = {}
    for k in model.kernels:
        accesses = []
        for a in k.accesses:
            d = a.to_dict()
            d["loop_lines"] = list(getattr(a, "loop_lines", ()) or ())
            accesses.append(d)
        entry: dict[str, Any] = {"name": k.name, "file": plan.file, "line": k.line, "accesses": accesses,
                                 "branches": [b.to_dict() for b in k.branches]}
        ck = compiled.get(k.name)
        if ck is not None:
            add_branch_sass(entry, k, ck)  # predicated branches, branches the model cannot see
            annotate_compiled_loads(accesses, k.accesses, ck)  # loads the compiler vectorized
            entry["registers"] = ck.resources.registers
            res = occupancy(ck, cc, threads, smem.get(k.name, 0))
            if res is not None:
                entry["occupancy"] = {"occupancy": res.occupancy, "active_blocks_per_sm": res.active_blocks_per_sm,
                                      "limiters": sorted(res.limiters)}
        kernels[k.name] = entry
    return kernels, fa


def _cubin(plan: FilePlan, fa: Any, work: Path) -> Path:
    """Compile the file as the compiled layer did (same nvcc, same flags), keeping the cubin."""
    from cudalens.labs.runner import kernel_path

    if fa.compiled is None:
        raise SystemExit(f"{plan.file}: the compiled layer did not compile it: {fa.notes}")
    nvcc = fa.compiled.toolchain.tools["nvcc"].path
    out = work / (Path(plan.file).stem + ".cubin")
    cmd = [nvcc, *fa.compiled.flags, str(kernel_path(plan.file)), "-o", str(out)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=fa.compiled.toolchain.env(), timeout=300)
    if p.returncode != 0:
        raise SystemExit(f"compile failed: {' '.join(cmd)}\n{p.stderr[-2000:]}")
    return out


def _profile(plan: FilePlan, cubin: Path, params: Mapping[str, Any], work: Path, ncu: str, timeout: float):
    from cudalens.profile.ncu import by_kernel, ncu_command, parse_csv

    spec = {"cubin": str(cubin), "names": sorted({ln.kernel for ln in plan.launches}),
            "buffers": max(sum(p.is_pointer for p in params[ln.kernel]) for ln in plan.launches),
            "buffer_bytes": plan.buffer_bytes,
            "launches": [{"kernel": ln.kernel, "grid": list(ln.grid), "block": list(ln.block), "smem": ln.smem,
                          "args": launch_args(params[ln.kernel], plan.values)} for ln in plan.launches]}
    plan_path = work / (Path(plan.file).stem + ".plan.json")
    plan_path.write_text(json.dumps(spec))
    names = "|".join(spec["names"])
    cmd = ncu_command([sys.executable, str(DRIVER), str(plan_path)], kernel=f"regex:^({names})$",
                      launch_count=len(plan.launches), ncu=ncu)
    cmd[1:1] = ["--cache-control", "all"]  # ncu_command already leaves the clocks alone
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    if "ERR_NVGPUCTRPERM" in p.stdout + p.stderr:
        raise SystemExit("ncu: the GPU performance counters are not readable by this user (ERR_NVGPUCTRPERM)")
    try:
        launches = parse_csv(p.stdout, source=f"ncu on {plan.file}")
    except Exception as exc:  # noqa: BLE001
        tail = (p.stdout[-1500:] + "\n" + p.stderr[-1500:]).strip()
        raise RuntimeError(f"{plan.file}: ncu gave no counters (exit {p.returncode}): {exc}\n{tail}") from None
    divergent = {}
    for lc in launches:
        divergent.setdefault(lc.base_name, lc.metrics.get("smsp__sass_branch_targets_threads_divergent.sum"))
    return by_kernel(launches), divergent, " ".join(cmd[:8]) + " ..."


def _device() -> tuple[str, str, str]:
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,compute_cap", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30)
        name, driver, cc = [s.strip() for s in smi.stdout.strip().splitlines()[0].split(",")]
        return name, driver, cc
    except Exception:  # noqa: BLE001
        return "unknown", "unknown", "9.0"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="?", default=os.environ.get("OUT", "validation_out"))
    ap.add_argument("--only", nargs="*", default=None, help="lab kernel files to run (default: all)")
    ap.add_argument("--dry-run", action="store_true", help="no GPU: analyze and print the predictions and top rules")
    ap.add_argument("--ncu-timeout", type=float, default=150.0)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    from cudalens.guided.rank import kernel_loads
    from cudalens.labs import all_labs
    from cudalens.labs.runner import kernel_path
    from cudalens.source.parse import parse_file

    plans = [p for p in _plan() if args.only is None or p.file in args.only]
    labs = {lab.number: lab for lab in all_labs()}
    skipped = [{"lab": n, "name": labs[n].name if n in labs else "", "reason": f"{why}: no device kernel pair to validate"}
               for n, why in sorted(SKIPPED_LABS.items())]
    device, driver, cc_text = ("dry run, no GPU", "-", "9.0") if args.dry_run else _device()
    cc = cc_text if cc_text.count(".") == 1 else "9.0"
    ncu = shutil.which("ncu")
    ncu_version = "-"
    if not args.dry_run:
        if not ncu:
            raise SystemExit("needs ncu (Nsight Compute) on PATH")
        ncu_version = subprocess.run([ncu, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
    out_dir = Path(args.out)
    work = Path(tempfile.mkdtemp(prefix="cudalens_validate_"))
    rows: list[dict] = []
    pairs: list[dict] = []
    notes: list[str] = []
    ncu_cmd = ""
    for plan in plans:
        kernels, fa = _analysis(plan, cc)
        params = {k.name: k.params for k in parse_file(str(kernel_path(plan.file))).kernels}
        if plan.note:
            notes.append(f"{plan.file}: {plan.note}")
        if args.dry_run:
            counters, divergent = {}, {}
        else:
            try:
                counters, divergent, ncu_cmd = _profile(plan, _cubin(plan, fa, work), params, work, ncu,
                                                        args.ncu_timeout)
            except (RuntimeError, subprocess.TimeoutExpired) as exc:
                notes.append(f"{plan.file}: not profiled: {str(exc).splitlines()[0]}")
                print(f"[{plan.file}] {exc}", file=sys.stderr)
                counters, divergent = {}, {}
        for ln in plan.launches:
            k = kernels.get(ln.kernel)
            if k is None:
                notes.append(f"{plan.file}: the analyzer found no kernel {ln.kernel}")
                continue
            if args.dry_run:
                for (space, op), q in PER_REQUEST.items():
                    p, how = ratio_prediction(k["accesses"], space, op)
                    if how != "no such access":
                        rows.append(_row(plan.file, plan.labs, ln.kernel, q.name, p, None, None, "", note=how))
                continue
            rows.extend(kernel_rows(plan.file, plan.labs, k, counters.get(ln.kernel), divergent.get(ln.kernel)))
        report = {"kernels": list(kernels.values())}
        loads = kernel_loads([kernel_record(k) for k in kernels.values()], counters) if counters else {}
        launched = {ln.kernel for ln in plan.launches}
        for n in plan.labs:
            lab = labs.get(n)
            for pair in (lab.pairs if lab else ()):
                if pair.bad not in launched or pair.good not in launched:
                    continue  # a pair of this lab profiled by another plan of the same file
                top = top_rule_check(fa.findings, pair.bad, pair.rule, loads, report)
                bad_m, good_m = counters.get(pair.bad), counters.get(pair.good)
                pairs.append(pair_row(n, lab.name, pair.bad, pair.good, pair.rule, top,
                                      bad_m.duration_s if bad_m else None, good_m.duration_s if good_m else None))
        print(f"[{plan.file}] {len(plan.launches)} launches, {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    doc = {
        "schema": SCHEMA, "device": device, "driver": driver, "cc": cc, "ncu_version": ncu_version,
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join(["PYTHONPATH=src", "python", *([os.path.relpath(sys.argv[0])] if sys.argv else []),
                             *(argv if argv is not None else sys.argv[1:])]),
        "ncu_command": ncu_cmd, "ncu_flags": "--cache-control all, --clock-control none; one launch per kernel",
        "exact_tolerances": {"ratio": EXACT_RATIO_TOL, "occupancy_pp": EXACT_OCCUPANCY_PP,
                             "branch_uniform_pct": BRANCH_UNIFORM_PCT},
        "plans": [{"file": p.file, "labs": list(p.labs), "block": list(p.block), "values": dict(p.values),
                   "macros": dict(p.macros), "launches": [dataclasses.asdict(ln) for ln in p.launches]}
                  for p in plans],
        "skipped": skipped, "rows": rows, "pairs": pairs, "notes": notes,
        "summary": summarize(rows, pairs), "seconds": round(time.perf_counter() - t0, 1),
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "validation.json").write_text(json.dumps(doc, indent=2) + "\n")
    (out_dir / "validation.md").write_text(render_markdown(doc))
    for s in skipped:
        print(f"skipped lab {s['lab']} ({s['name']}): {s['reason']}")
    print(render_summary(doc))
    print(f"wrote {out_dir / 'validation.json'} and {out_dir / 'validation.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
