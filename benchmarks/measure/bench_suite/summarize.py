"""Tables (markdown) from the suite's JSON: python3 benchmarks/measure/bench_suite/summarize.py RESULTS_DIR > RESULTS_DIR/tables.md"""

from __future__ import annotations

import json
import math
import os
import sys


def us(x):
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x * 1e6:.2f}"


def named(d, short_d=None):
    out = ["## Public kernels by name (NVIDIA/cuda-samples) vs ncu gpu__time_duration (cold, same launches)", "",
           "| kernel | file | symbol | cudalens median (us) | ncu median (us) | ratio | within 2 % | certificate |",
           "|---|---|---|---|---|---|---|---|"]
    for r in d["rows"]:
        if "error" in r:
            out.append(f"| {r['kernel']} | | | error: {r['error'][:120]} | | | | |")
            continue
        ratio = r.get("ratio_to_ncu")
        out.append(f"| `{r['kernel']}` | {r['file']} | `{r['symbol']}` | {us(r['median_s'])} | {us(r.get('ncu_median_s'))} | "
                   f"{'' if ratio is None else f'{ratio:.4f}'} | {r.get('within_2pct', '')} | {r['verdict']} |")
    why = [f"- `{r['kernel']}`: {named_reason(r, short_d)}" for r in d["rows"] if short_d and named_reason(r, short_d)]
    return out + (["", "Outside 2 %, and why:", ""] + why if why else [])


def _run(d):
    """A run's label: when its step started (UTC), from the JSON's meta."""
    return d.get("meta", {}).get("date", "")[:16].replace("T", " ")


def _cell(x, key="median_s"):
    return us(x.get(key)) if key in x else (x.get("error", "")[:40] if x else "")


def adversarial(d, extra=None):
    rows = [dict(r, run=_run(d)) for r in d["rows"]]
    if extra:  # rows measured in a later run: listed with their run, beside the first
        rows += [dict(r, run=_run(extra)) for r in extra["rows"]]
    out = ["## Adversarial suite (our kernels): what each harness reports", "",
           "Times in us. cudalens default = `bench(fn, outputs=..., bytes_...)` as it comes (hot); cold = mode='cold'; "
           "checks off = every adversarial check switched off (cold, and hot). DRAM floor = compulsory bytes / 3352 GB/s. "
           "Peers: triton `do_bench` (median; zeroes 256 MB before each call), `do_bench_cudagraph` (median; a graph of "
           "back-to-back calls, no cache clearing), a naive hot loop (torch events around 200 back-to-back calls), "
           "cuda-bench 0.3.0 (NVBench; cold mean and batch mean).", "",
           "| adversary | run | DRAM floor | cudalens default | verdict | cudalens cold | verdict | checks off cold | "
           "checks off hot | do_bench | do_bench_cudagraph | naive hot loop | cuda-bench cold | cuda-bench batch |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    reasons = []
    for r in rows:
        dd, cc = r.get("cudalens_default", {}), r.get("cudalens_cold", {})
        cb = r.get("cuda_bench", {})
        out.append(f"| {r['kind']} | {r['run']} | {us(r['dram_floor_s'])} | {_cell(dd)} | {dd.get('verdict', '')} | "
                   f"{_cell(cc)} | {cc.get('verdict', '')} | {_cell(r.get('cudalens_checks_off', {}))} | "
                   f"{_cell(r.get('cudalens_hot_checks_off', {}))} | {_cell(r.get('triton_do_bench', {}))} | "
                   f"{_cell(r.get('triton_do_bench_cudagraph', {}))} | {_cell(r.get('naive_hot_loop', {}))} | "
                   f"{_cell(cb, 'mean_s')} | {_cell(cb, 'batch_mean_s')} |")
        for label, x in (("default", dd), ("cold", cc)):
            for why in x.get("reasons", []):
                reasons.append(f"- {r['kind']}, {r['run']} ({label}): {why}")
    below = ["", "Below the DRAM floor (time / floor < 0.97, the speed-of-light tolerance), by harness:", ""]
    for r in rows:
        f = r["dram_floor_s"]
        hits = [f"{name} {x[key] / f:.2f}" for name, x, key in (
            ("cudalens default", r.get("cudalens_default", {}), "median_s"), ("cudalens cold", r.get("cudalens_cold", {}), "median_s"),
            ("cudalens hot, checks off", r.get("cudalens_hot_checks_off", {}), "median_s"),
            ("do_bench", r.get("triton_do_bench", {}), "median_s"),
            ("do_bench_cudagraph", r.get("triton_do_bench_cudagraph", {}), "median_s"),
            ("naive hot loop", r.get("naive_hot_loop", {}), "median_s"), ("cuda-bench cold", r.get("cuda_bench", {}), "mean_s"),
            ("cuda-bench batch", r.get("cuda_bench", {}), "batch_mean_s"))
            if isinstance(x.get(key), float) and not math.isnan(x[key]) and x[key] < 0.97 * f]
        below.append(f"- {r['kind']} ({r['run']}): " + (", ".join(hits) if hits else "none"))
    return out + below + ["", "Reasons cudalens gave:", ""] + reasons


def l2sweep(d):
    out = [f"## L2-resident adversary over its working set ({_run(d)})", "",
           "`adv_l2_sum` reads the whole buffer once per call; times in us; ratio = time / DRAM floor; "
           f"rule for the suite's size: {d.get('rule', '')} -> {d.get('chosen_mib')} MiB.", "",
           "| MiB | DRAM floor | cudalens hot (default) | ratio | verdict | hot, checks off | ratio | cold | ratio | verdict | "
           "do_bench_cudagraph | ratio |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in d["rows"]:
        cells = []
        for label, verdict in (("hot", True), ("hot_checks_off", False), ("cold", True), ("triton_do_bench_cudagraph", False)):
            x = r.get(label, {})
            cells += [_cell(x), f"{x['ratio_to_floor']:.3f}" if "ratio_to_floor" in x else ""]
            if verdict:
                cells.append(x.get("verdict", ""))
        out.append(f"| {r['mib']} | {us(r['dram_floor_s'])} | " + " | ".join(cells) + " |")
    return out


def _short_overheads(short_d):
    """Raw event interval minus ncu's duration, per short kernel (cold): the events' own overhead."""
    vals = [r["cold_events_raw"]["median_s"] - r["ncu_cold_s"] for r in short_d["rows"]
            if "kernel" in r and r.get("ncu_cold_s") and "median_s" in r.get("cold_events_raw", {})]
    floors = [r["cold_events"]["floor_s"] for r in short_d["rows"] if "floor_s" in r.get("cold_events", {})]
    return vals, floors


def named_reason(r, short_d):
    """Why a named kernel is outside 2 % of ncu, from the short-kernel measurements (computed)."""
    vals, floors = _short_overheads(short_d)
    if not vals or not floors or r.get("within_2pct", True):
        return ""
    lo, hi, floor = min(vals), max(vals), sorted(floors)[len(floors) // 2]
    spread = (hi - lo) / 2
    return (f"at {r['ncu_median_s'] * 1e6:.1f} us the events' own overhead decides: raw events minus ncu's duration is "
            f"{lo * 1e6:.2f}-{hi * 1e6:.2f} us from kernel to kernel (short.json, {len(vals)} kernels), the floor subtracted "
            f"{floor * 1e6:.2f} us; +-{spread * 1e6:.2f} us is +-{100 * spread / r['ncu_median_s']:.1f} % of this kernel")


def short(d):
    out = ["## Short kernels: harness vs ncu of the same launches", "",
           "| kernel | n | cold events | ratio | cold raw | ratio | hot events | ratio | hot graph | ratio | ncu cold | ncu hot |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in d["rows"]:
        if "kernel" not in r:
            continue
        cells = []
        for label in ("cold_events", "cold_events_raw", "hot_events", "hot_graph"):
            x = r.get(label, {})
            cells += [us(x.get("median_s")), f"{x['ratio_to_ncu']:.3f}" if "ratio_to_ncu" in x else x.get("error", "")[:40]]
        n = r["args"][0].split("[")[1].split("]")[0] if r["args"] else "-"
        out.append(f"| {r['kernel']} | {n} | " + " | ".join(cells) + f" | {us(r.get('ncu_cold_s'))} | {us(r.get('ncu_hot_s'))} |")
    return out


def _load(path, name):
    f = os.path.join(path, f"{name}.json")
    return json.load(open(f)) if os.path.exists(f) else None


def main(path):
    lines = []
    named_d, short_d = _load(path, "named"), _load(path, "short")
    if named_d:
        lines += named(named_d, short_d) + [""]
    if _load(path, "adversarial"):
        lines += adversarial(_load(path, "adversarial"), _load(path, "adversarial_l2")) + [""]
    if _load(path, "l2sweep"):
        lines += l2sweep(_load(path, "l2sweep")) + [""]
    if short_d:
        lines += short(short_d) + [""]
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1])
