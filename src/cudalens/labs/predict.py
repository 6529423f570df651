"""Predictions to set next to the measurements.

Two sources: a tiny warp model of our own (pure arithmetic on the 32 addresses of a warp, so a
lab never depends on another module to say what it expects), and the project's static analyzer
(``cudalens.source.parse`` + ``cudalens.access.model``) run on the lab's own kernel file, when it
is importable. The analyzer's answer is reported as is; if it is missing we say so.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
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
