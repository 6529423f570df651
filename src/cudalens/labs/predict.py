"""Predictions to set next to the measurements.

Two sources: a tiny warp model of our own (pure arithmetic on the 32 addresses of a warp, so a
lab never depends on another module to say what it expects), and the project's static analyzer
(``cudalens.source.parse`` + ``cudalens.access.model``) run on the lab's own kernel file, when it
is importable. The analyzer's answer is reported as is; if it is missing we say so.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cudalens.labs.runner import kernel_path

SECTOR = 32  # bytes
BANKS = 32
BANK_WIDTH = 4  # bytes


def sectors(byte_addresses: Iterable[int]) -> int:
    """Distinct 32-byte sectors touched by one warp request."""
    return len({a // SECTOR for a in byte_addresses})


def bank_ways(word_addresses: Iterable[int]) -> int:
    """n of an n-way bank conflict: the most distinct 4-byte words that fall in one bank
    (several threads reading the same word is a broadcast and costs nothing extra)."""
    per_bank: dict[int, set[int]] = {}
    for w in word_addresses:
        per_bank.setdefault(w % BANKS, set()).add(w)
    return max((len(v) for v in per_bank.values()), default=0)


def offset_sectors(offset_words: int, word_bytes: int = 4) -> int:
    """Sectors for a warp copying 32 consecutive words starting `offset_words` in."""
    return sectors((offset_words + lane) * word_bytes for lane in range(32))


def stride_sectors(stride_words: int, word_bytes: int = 4) -> int:
    return sectors(lane * stride_words * word_bytes for lane in range(32))


def analyzer_facts(file: str, block: tuple[int, int, int], defines: Mapping[str, Any] | None = None,
                   ) -> dict[str, dict[str, Any]] | None:
    """Per kernel of `file`: the worst global sectors/request, the worst shared-memory bank
    conflict and the patterns the static analyzer reports. None if the analyzer is missing."""
    try:
        from cudalens.access.model import analyze_model
        from cudalens.source.parse import parse_file
    except ImportError:
        return None
    try:
        model = analyze_model(parse_file(str(kernel_path(file))), block=block, defines=dict(defines or {}))
    except Exception:  # noqa: BLE001 - a prediction must never take a lab down
        return None
    out: dict[str, dict[str, Any]] = {}
    for k in model.kernels:
        glob = [a.sectors_per_request for a in k.accesses
                if a.space == "global" and a.sectors_per_request is not None]
        ways = [a.bank_conflict_ways for a in k.accesses
                if a.space == "shared" and a.bank_conflict_ways is not None]
        out[k.name] = {
            "sectors_per_request": max(glob) if glob else None,
            "bank_conflict_ways": max(ways) if ways else None,
            "patterns": sorted({a.pattern for a in k.accesses if a.pattern}),
        }
    return out


def analyzer_value(facts: dict[str, dict[str, Any]] | None, kernel: str, key: str) -> Any:
    if facts is None or kernel not in facts:
        return None
    return facts[kernel].get(key)


def ANALYZER_MISSING() -> str:  # noqa: N802 - reads like a constant where it is used
    return "static analyzer (cudalens.access.model / cudalens.source.parse) not available"


def first(values: Sequence[Any]) -> Any:
    return values[0] if values else None


# ---- predicted-vs-measured rows shared by every lab -----------------------------------------
#
# Every prediction row names what is predicted ("predicts"), by which model ("model"), the
# predicted and the measured value, and measured / predicted where both are numbers. Labs add a
# few columns that locate the row in their table (streams, bytes, ...).

ANALYZER_MODEL = "static analyzer (cudalens.pipeline.analyze_file, compile=True)"


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(float(v))


def pvm(predicts: str, model: str, predicted: Any, measured: Any, note: str = "", **where: Any) -> dict[str, Any]:
    """One predicted-vs-measured row."""
    both = _is_num(predicted) and _is_num(measured) and float(predicted) != 0
    return {**where, "predicts": predicts, "model": model, "predicted": predicted, "measured": measured,
            "measured_over_predicted": float(measured) / float(predicted) if both else None, "note": note}


@dataclass(frozen=True)
class AnalyzerSummary:
    """What the analyzer said about one kernel file: (rule, kernel) findings and the compiled
    stack frame per kernel. ``error`` is set (and the rest empty) when it could not run."""

    flagged: frozenset[tuple[str, str]] = frozenset()
    local_bytes: tuple[tuple[str, int], ...] = ()
    error: str = ""


@functools.lru_cache(maxsize=None)
def analyzer_summary(file: str, block: tuple[int, int, int] = (256, 1, 1)) -> AnalyzerSummary:
    """Run the analyzer once per (file, block); never raises."""
    try:
        from cudalens.pipeline import analyze_file
        res = analyze_file(kernel_path(file), block=block, compile=True)
    except Exception as exc:  # noqa: BLE001 - a prediction must never take a lab down
        return AnalyzerSummary(error=f"analyzer unavailable: {type(exc).__name__}: {exc}")
    local: tuple[tuple[str, int], ...] = ()
    if res.compiled is not None:
        local = tuple(sorted((name, int(k.resources.local_bytes)) for name, k in res.compiled.kernels.items()))
    return AnalyzerSummary(frozenset((f.rule, f.kernel) for f in res.findings if f.kernel), local)


def find_time(rows: Sequence[Mapping[str, Any]], kernel: str,
              aliases: Mapping[str, Mapping[str, Any]] | None = None) -> float | None:
    """time_ms of the row for `kernel`: matched on the "kernel" or "variant" column, or on the
    columns given for it in `aliases` (for tables keyed otherwise). None if no row matches."""
    match = (aliases or {}).get(kernel)
    for r in rows:
        if match is not None:
            if all(r.get(k) == v for k, v in match.items()):
                return r.get("time_ms")
        elif kernel in (r.get("kernel"), r.get("variant")):
            return r.get("time_ms")
    return None


def pair_rows(file: str, pairs: Sequence[Any], rows: Sequence[Mapping[str, Any]],
              block: tuple[int, int, int] = (256, 1, 1),
              aliases: Mapping[str, Mapping[str, Any]] | None = None,
              summary: AnalyzerSummary | None = None) -> list[dict[str, Any]]:
    """For each KernelPair: did the analyzer flag the bad kernel (and not the good one) with the
    pair's rule, next to the measured time ratio bad/good. The analyzer predicts a direction
    (bad slower), not a size, so `predicted` is "bad slower" or "no difference"."""
    s = summary if summary is not None else analyzer_summary(file, block)
    out = []
    for p in pairs:
        tb, tg = find_time(rows, p.bad, aliases), find_time(rows, p.good, aliases)
        measured = tb / tg if tb is not None and tg is not None and _is_num(tb) and _is_num(tg) and tg else None
        note = "" if measured is not None else f"table has no time for {p.bad} and {p.good}"
        where = {"rule": p.rule, "bad_kernel": p.bad, "good_kernel": p.good}
        if s.error:
            out.append(pvm(f"{p.rule}: {p.bad} slower than {p.good}", ANALYZER_MODEL, None, measured,
                           "; ".join(x for x in (s.error, note) if x), **where))
            continue
        bad, good = (p.rule, p.bad) in s.flagged, (p.rule, p.good) in s.flagged
        verdict = f"bad kernel flagged with rule {p.rule}: {'yes' if bad else 'no'}; " \
                  f"good kernel flagged: {'yes' if good else 'no'}"
        predicted = "bad slower" if bad and not good else "no difference"
        agrees = None if measured is None else (measured > 1.0) == (predicted == "bad slower")
        out.append({**pvm(f"{p.rule}: {p.bad} slower than {p.good} (measured: time bad/good)", ANALYZER_MODEL,
                          predicted, measured, "; ".join(x for x in (verdict, note) if x), **where),
                    "bad_flagged": bad, "good_flagged": good, "agrees": agrees})
    return out
