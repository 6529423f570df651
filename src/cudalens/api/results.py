"""The typed results of :func:`cudalens.occupancy`, :func:`cudalens.bench` and :func:`cudalens.tune`
(:func:`cudalens.profile` returns a :class:`cudalens.Report`): frozen records with ``to_dict()`` (the command's JSON) and
``_repr_html_()`` (a table in a notebook)."""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


def _html_table(title: str, rows: list[tuple[str, Any]]) -> str:
    body = "".join(f"<tr><th style='text-align:left'>{html.escape(str(k))}</th>"
                   f"<td style='text-align:right'>{html.escape(str(v))}</td></tr>" for k, v in rows)
    return f"<table><caption>{html.escape(title)}</caption>{body}</table>"


@dataclass(frozen=True)
class Occupancy:
    """Resident blocks and warps per SM of one launch, its limiter(s), the what-if, and the block
    size with the best occupancy (what ``cudalens occupancy`` prints)."""

    cc: str
    source: str  # where the device's limits came from
    result: Any  # cudalens.occupancy.OccupancyResult
    what_if: Any  # cudalens.occupancy.WhatIf
    best_block_size: int
    min_grid_size: int
    min_grid_size_unit: str  # "blocks" with sms=, else "blocks per SM"

    @property
    def occupancy(self) -> float:
        """Active warps over the SM's maximum, in [0, 1]."""
        return float(self.result.occupancy)

    @property
    def limiters(self) -> tuple[str, ...]:
        return tuple(self.result.limiters)

    def to_dict(self) -> dict[str, Any]:
        return {"cc": self.cc, "source": self.source, "result": self.result.to_dict(), "what_if": self.what_if.to_dict(),
                "max_potential_block_size": {"block_size": self.best_block_size, "min_grid_size": self.min_grid_size,
                                             "min_grid_size_unit": self.min_grid_size_unit}}

    def _repr_html_(self) -> str:
        r = self.result
        return _html_table(f"Occupancy, CC {self.cc}", [
            ("threads per block", r.threads_per_block), ("registers per thread", r.registers_per_thread),
            ("active blocks per SM", r.active_blocks_per_sm),
            ("active warps per SM", f"{r.active_warps_per_sm} of {r.max_warps_per_sm}"),
            ("occupancy", f"{r.occupancy:.1%}"), ("limiter(s)", ", ".join(self.limiters) or "-"),
            ("best block size", f"{self.best_block_size} threads")])


@dataclass(frozen=True)
class Bench:
    """One timed launch: the measurement with its certificate, and its history run id (None when
    it was not saved)."""

    result: Any  # cudalens.measure.BenchResult
    run_id: int | None = None

    @property
    def median_s(self) -> float:
        """Median seconds per launch."""
        return float(self.result.summary.median)

    @property
    def suspect(self) -> bool:
        return bool(self.result.suspect)

    def to_dict(self) -> dict[str, Any]:
        return {**self.result.to_dict(), "run_id": self.run_id}

    def _repr_html_(self) -> str:
        s = self.result.summary
        thr = self.result.throughput or {}
        rows: list[tuple[str, Any]] = [("median", f"{s.median * 1e6:.2f} us"),
                                       ("CI of median", f"{s.ci_low * 1e6:.2f} .. {s.ci_high * 1e6:.2f} us"),
                                       ("samples", s.n)]
        if thr.get("bandwidth_gbs") is not None:
            rows.append(("effective bandwidth", f"{thr['bandwidth_gbs']:.1f} GB/s"))
        rows.append(("certificate", (self.result.certificate or {}).get("verdict", "-")))
        return _html_table(f"{self.result.kernel} on {self.result.device.name}", rows)


@dataclass(frozen=True)
class Tune:
    """A tuning session: the space, what the models pruned, what was measured, the best
    configuration and how stable its lead is (``cudalens tune``'s JSON)."""

    data: Mapping[str, Any] = field(default_factory=dict)

    @property
    def best(self) -> dict[str, Any] | None:
        """The fastest configuration (``config``, ``median_s``, its CI, model facts), or None."""
        best = self.data.get("best")
        return dict(best) if best else None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.data)

    def _repr_html_(self) -> str:
        rows = [(t["config"], "-" if t.get("median_s") is None else f"{t['median_s'] * 1e6:,.1f} us")
                for t in self.data.get("top") or ()]
        return _html_table(f"tuning session {self.data.get('session_id')}: {self.data.get('measured')} of "
                           f"{self.data.get('configurations')} configurations measured", rows)
