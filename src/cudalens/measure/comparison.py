"""``cudalens compare A B`` over result files as well as history ids, NVBench-compare style.

A and B are each a history run id (an integer), a JSON file holding one result
(``cudalens bench --format json`` / ``-o PREFIX``) or a list of results (a sweep), or a pytest
plugin store (``{"benchmarks": {test id: result}}``). Entries are matched by kernel name and sweep
cell; each matched pair gets the verdict of :func:`cudalens.measure.stats.compare` (bootstrap
confidence intervals of the medians: FASTER / SLOWER / SAME) plus the noise of both runs, like
nvbench_compare's table. Unmatched entries are listed, not compared.
"""

from __future__ import annotations

import os
from typing import Any, Sequence

from cudalens.errors import InputError
from cudalens.measure.result import BenchResult
from cudalens.measure.stats import compare


def _key(d: dict[str, Any], fallback: str) -> str:
    cell = d.get("cell") or {}
    label = d.get("kernel", fallback)
    return label + ("[" + ",".join(f"{k}={v}" for k, v in cell.items()) + "]" if cell else "")


def load_results(ref: str, db: str | None = None) -> list[tuple[str, BenchResult]]:
    """(key, result) pairs from a history id or a JSON file; InputError names the bad reference."""
    text = str(ref).strip()
    if text.isdigit() and not os.path.exists(text):
        from cudalens.measure.history import load_run  # noqa: PLC0415

        r = load_run(int(text), db)
        return [(r.kernel, r)]
    if not os.path.isfile(text):
        raise InputError(f"{text}: neither a history run id nor a result file")
    from cudalens.textio import load_json  # noqa: PLC0415

    try:
        data = load_json(text)
    except ValueError as exc:
        raise InputError(f"{exc} (expected a JSON result file)") from None
    if isinstance(data, dict) and isinstance(data.get("benchmarks"), dict):
        items = [dict(v, kernel=k) for k, v in data["benchmarks"].items()]
    elif isinstance(data, dict):
        items = [data]
    elif isinstance(data, list):
        items = [d for d in data if isinstance(d, dict) and "summary" in d]
    else:
        items = []
    out = []
    for i, d in enumerate(items):
        if "samples" not in d or "summary" not in d:
            continue
        try:
            out.append((_key(d, f"#{i}"), BenchResult.from_dict(d)))
        except (KeyError, TypeError) as exc:
            raise InputError(f"{text}: entry {i} is not a cudalens result ({exc})") from None
    if not out:
        raise InputError(f"{text}: no cudalens results in the file")
    return out


def compare_results(a: Sequence[tuple[str, BenchResult]], b: Sequence[tuple[str, BenchResult]],
                    threshold: float | None = None) -> dict[str, Any]:
    """Rows for every key present in both, plus the keys found in only one."""
    da, db_ = dict(a), dict(b)
    single = len(a) == 1 and len(b) == 1
    pairs = [(a[0][0] if a[0][0] == b[0][0] else f"{a[0][0]} vs {b[0][0]}", a[0][1], b[0][1])] if single else \
        [(k, da[k], db_[k]) for k in da if k in db_]
    rows = []
    for key, ra, rb in pairs:
        c = compare(ra.kept_seconds, rb.kept_seconds)
        failed = threshold is not None and c.verdict == "SLOWER" and c.slower_by > threshold
        rows.append({**c.to_dict(), "key": key, "median_a_us": c.median_a * 1e6, "median_b_us": c.median_b * 1e6,
                     "noise_a_pct": ra.summary.rel_stdev * 100, "noise_b_pct": rb.summary.rel_stdev * 100,
                     "diff_pct": c.slower_by * 100, "verdict": c.verdict, "failed": failed,
                     "suspect": [x for x, r in (("A", ra), ("B", rb)) if r.suspect],
                     "notes": [n for n in (f"different modes: {ra.mode} vs {rb.mode}" if ra.mode != rb.mode else "",
                                           f"different devices: {ra.device.name} vs {rb.device.name}"
                                           if ra.device.name != rb.device.name else "") if n]})
    return {"single": single, "rows": rows, "only_a": [k for k in da if k not in db_] if not single else [],
            "only_b": [k for k in db_ if k not in da] if not single else [],
            "failed": any(r["failed"] for r in rows)}
