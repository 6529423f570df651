"""The record of one benchmark run: what ran, where, every sample, the statistics and throughput."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from cudalens.hardware.device import DeviceFacts
from cudalens.measure.sampling import Sample, SampleCounts
from cudalens.measure.stats import Summary


@dataclass(frozen=True)
class BenchResult(SampleCounts):
    """One measurement. ``samples`` holds all of them (throttled too); ``summary`` the kept ones.

    Times are seconds per launch.
    """

    kernel: str
    mode: str  # "cold" | "hot" | "callable"
    device: DeviceFacts
    config: dict[str, Any]
    samples: tuple[Sample, ...]
    stop_reason: str
    summary: Summary
    throughput: dict[str, Any] | None = None
    verification: dict[str, Any] | None = None
    code_hash: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)
    certificate: dict[str, Any] | None = None  # see measure/certificate.py

    @property
    def suspect(self) -> bool:
        return bool(self.certificate) and self.certificate.get("verdict") == "suspect"  # type: ignore[union-attr]

    def to_dict(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "mode": self.mode,
            "device": self.device.to_dict(),
            "config": self.config,
            "stop_reason": self.stop_reason,
            "summary": self.summary.to_dict(),
            "throughput": self.throughput,
            "verification": self.verification,
            "code_hash": self.code_hash,
            "notes": list(self.notes),
            "throttled_samples": self.throttled_count,
            "certificate": self.certificate,
            "samples": [s.to_dict() for s in self.samples],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "BenchResult":
        return cls(
            kernel=d["kernel"],
            mode=d["mode"],
            device=DeviceFacts.from_dict(d["device"]),
            config=d.get("config", {}),
            samples=tuple(Sample(**s) for s in d["samples"]),
            stop_reason=d.get("stop_reason", ""),
            summary=Summary.from_dict(d["summary"]),
            throughput=d.get("throughput"),
            verification=d.get("verification"),
            code_hash=d.get("code_hash", ""),
            notes=tuple(d.get("notes", ())),
            certificate=d.get("certificate"),
        )


def code_hash(text: str) -> str:
    """Short SHA-256 of source text (first 16 hex digits)."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]
