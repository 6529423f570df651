"""Tables (markdown) from the suite's JSON: python3 benchmarks/bench_suite/summarize.py RESULTS_DIR > RESULTS_DIR/tables.md"""

from __future__ import annotations

import json
import math
import os
import sys


def us(x):
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x * 1e6:.2f}"


def named(d):
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
    return out


def adversarial(d):
    out = ["## Adversarial suite (our kernels): what each harness reports", "",
           "Times in us. cudalens default = `bench(fn, outputs=..., bytes_...)` as it comes (hot); cold = mode='cold'; "
           "checks off = cold with every adversarial check switched off. DRAM floor = compulsory bytes / 3352 GB/s.", "",
           "| adversary | DRAM floor | cudalens default | verdict (default) | cudalens cold | verdict (cold) | checks off | "
           "triton do_bench | cuda-bench (mean) |", "|---|---|---|---|---|---|---|---|---|"]
    reasons = []
    for r in d["rows"]:
        dd, cc, off = r.get("cudalens_default", {}), r.get("cudalens_cold", {}), r.get("cudalens_checks_off", {})
        out.append(f"| {r['kind']} | {us(r['dram_floor_s'])} | {us(dd.get('median_s'))} | {dd.get('verdict', dd.get('error', ''))} | "
                   f"{us(cc.get('median_s'))} | {cc.get('verdict', cc.get('error', ''))} | {us(off.get('median_s'))} | "
                   f"{us(r.get('triton_do_bench', {}).get('median_s'))} | {us(r.get('cuda_bench', {}).get('mean_s'))} |")
        for label, x in (("default", dd), ("cold", cc)):
            for why in x.get("reasons", []):
                reasons.append(f"- {r['kind']} ({label}): {why}")
    return out + ["", "Reasons cudalens gave:", ""] + reasons


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


def main(path):
    lines = []
    for name, fn in (("named", named), ("adversarial", adversarial), ("short", short)):
        f = os.path.join(path, f"{name}.json")
        if os.path.exists(f):
            lines += fn(json.load(open(f))) + [""]
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1])
