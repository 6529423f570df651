"""The timing certificate: what every number was measured under, and which checks it passed.

Pure functions over plain data (no GPU): the engine and harness collect the facts, this module
decides what they mean. Every result (JSON, history, report) carries ``certificate`` with the
keys in :data:`CERTIFICATE_KEYS`; ``verdict`` is ``"trusted"`` or ``"suspect"`` and ``reasons``
says why a result is suspect.

Checks (each on by default, each can be switched off; a check that did not run says so):

- ``outputs_before`` / ``outputs_after``: the outputs compared with the reference (or with the
  first run's outputs) on a run before the timed samples and again on a run after them, with the
  outputs poisoned before each run so that a kernel that skips work is seen;
- ``speed_of_light``: the median is not below the compulsory DRAM traffic at the device's
  theoretical bandwidth (only when the bytes are known);
- ``side_work``: no sample saw work of the context still running after its stop event;
- ``other_devices``: this process used no SMs of another GPU during the samples (NVML per-process
  utilization; not checked, with the reason, where NVML cannot tell: see measure/nvml.py);
- ``persisting_l2``: in cold mode, persisting L2 lines were reset before every sample and no
  access-policy window was left on the stream (a window found there is reported);
- ``clocks``: no sample throttled (NVML), and the throttle reasons at the first and last sample.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

CERTIFICATE_KEYS = (
    "regime", "timer", "event_floor_s", "flush", "clocks", "throttle_reasons", "samples", "driver",
    "toolchain", "checks", "verdict", "reasons",
)


def speed_of_light(median_s: float, bytes_moved: int, bandwidth_gbs: float | None, *, mode: str,
                   l2_bytes: int = 0, tolerance: float = 0.97) -> dict[str, Any]:
    """Is ``median_s`` possible for ``bytes_moved`` of compulsory DRAM traffic at ``bandwidth_gbs``?

    ``floor_s`` = bytes / bandwidth. A median below ``tolerance`` x floor (3 % allowance for the
    event floor's own error) fails: the data did not come from DRAM (it sat in L2, or the work was
    skipped or done elsewhere). In hot mode with a working set that fits in L2 the reason says so.
    """
    if not bytes_moved or not bandwidth_gbs or median_s <= 0:
        return {"checked": False, "ok": True, "reason": "bytes or bandwidth unknown"}
    floor = bytes_moved / (bandwidth_gbs * 1e9)
    ok = median_s >= tolerance * floor
    out: dict[str, Any] = {"checked": True, "ok": ok, "floor_s": floor, "median_s": median_s,
                           "ratio": median_s / floor, "bytes": int(bytes_moved), "bandwidth_gbs": bandwidth_gbs}
    if not ok:
        why = (f"median {median_s * 1e6:.2f} us is below the speed of light {floor * 1e6:.2f} us "
               f"({bytes_moved / 1e6:.1f} MB at {bandwidth_gbs:.0f} GB/s): ")
        if mode == "hot" and l2_bytes and bytes_moved <= l2_bytes:
            why += f"the data fits in L2 ({l2_bytes / 1e6:.0f} MB) and hot mode keeps it there"
        else:
            why += "the data came from a cache (persisting L2?), or work was skipped or done elsewhere"
        out["reason"] = why
    return out


def _check(name: str, result: Mapping[str, Any] | None) -> dict[str, Any]:
    if result is None:
        return {"checked": False, "ok": True}
    return {"checked": bool(result.get("checked", True)), **dict(result)}


def build_certificate(*, mode: str, engine: Mapping[str, Any], samples: Sequence[Any], stop: str,
                      summary: Any, device: Any, toolchain: Mapping[str, Any] | None,
                      outputs_before: Mapping[str, Any] | None, outputs_after: Mapping[str, Any] | None,
                      sol: Mapping[str, Any] | None, rotate: int = 1) -> dict[str, Any]:
    """The certificate of one measurement (see the module docstring)."""
    clocks = list(engine.get("clocks") or [])
    first, last = (clocks[0] if clocks else {}), (clocks[-1] if clocks else {})
    throttled = sum(1 for s in samples if s.throttled)
    side = [s for s in samples if getattr(s, "untrusted", "")]
    windows = int(engine.get("windows_seen_count", 0))
    checks = {
        "outputs_before": _check("outputs_before", outputs_before),
        "outputs_after": _check("outputs_after", outputs_after),
        "speed_of_light": _check("speed_of_light", sol),
        "side_work": {"checked": bool(engine.get("side_work_checked")), "ok": not side,
                      "untrusted_samples": len(side), **dict(engine.get("side_work") or {}),
                      **({"example": side[0].untrusted} if side else {})},
        "other_devices": dict(engine.get("other_devices") or {"checked": False, "ok": True,
                                                               "reason": "work on other devices not checked"}),
        "persisting_l2": {"checked": bool(engine.get("persisting_reset")) or bool(engine.get("window_checked")),
                          "ok": windows == 0, "windows_found": windows,
                          "windows": list(engine.get("windows_seen") or [])},
        "clocks": {"checked": any(s.sm_clock_mhz is not None for s in samples), "ok": throttled == 0,
                   "throttled_samples": throttled},
    }
    reasons = []
    for name, c in checks.items():
        if c.get("checked") and not c.get("ok"):
            if name == "persisting_l2" and mode == "cold":
                reasons.append(f"the kernel set an L2 access-policy window on the stream {windows} times "
                               "(removed, and persisting lines reset, before every cold sample)")
            elif name == "persisting_l2":
                reasons.append("the work left an L2 access-policy window on the stream: hot results include "
                               "its persisting lines (cold mode removes it and resets them)")
            elif name == "side_work":
                reasons.append(f"{len(side)} samples saw work still running elsewhere after the stop event "
                               "(work on another stream or device); they are excluded")
            elif name == "clocks":
                continue  # throttled samples are excluded; not a reason to distrust the rest
            else:
                reasons.append(str(c.get("reason") or f"check {name} failed"))
    return {
        "regime": {"mode": mode, "l2_flushed": mode == "cold" and bool(engine.get("flush_bytes")),
                   "batch": samples[0].batch if samples else 1, "graph": bool(engine.get("graph")),
                   "rotating_buffers": rotate},
        "timer": _timer(engine, device),
        "event_floor_s": engine.get("event_floor_s", 0.0),
        "flush": {"bytes": engine.get("flush_bytes", 0), "persisting_reset": bool(engine.get("persisting_reset")),
                  "access_policy_window_reset": mode == "cold"},
        "clocks": {"sm_mhz_first": first.get("sm_mhz"), "sm_mhz_last": last.get("sm_mhz"),
                   "mem_mhz_first": first.get("mem_mhz"), "mem_mhz_last": last.get("mem_mhz"),
                   "max_sm_mhz": getattr(device, "max_sm_clock_mhz", None)},
        "throttle_reasons": {"first": first.get("throttle_reasons"), "last": last.get("throttle_reasons")},
        "samples": {"taken": len(samples), "kept": getattr(summary, "n", 0), "stop": stop,
                    "rel_stdev": getattr(summary, "rel_stdev", None),
                    "ci": [getattr(summary, "ci_low", None), getattr(summary, "ci_high", None)],
                    "criterion": dict(engine.get("criterion") or {})},
        "driver": {"driver_version": getattr(device, "driver_version", ""),
                   "cuda_version": getattr(device, "cuda_version", "")},
        "toolchain": dict(toolchain or {}),
        "checks": checks,
        "verdict": "suspect" if reasons else "trusted",
        "reasons": reasons,
    }


def _timer(engine: Mapping[str, Any], device: Any) -> dict[str, Any]:
    """The timer's description (which quantity it reads) and, where measured, how it relates to
    ncu's gpu__time_duration on this GPU (measure/timer_ncu.py)."""
    from cudalens.measure.timer_ncu import vs_ncu  # noqa: PLC0415

    timer = dict(engine.get("timer") or {})
    if timer:
        timer["vs_ncu"] = vs_ncu(timer.get("name"), getattr(device, "name", None))
    return timer


def checks_not_made(certificate: Mapping[str, Any]) -> list[str]:
    """"NAME: why" for every check of ``certificate`` that could not be made and says why (e.g. work on
    other devices where NVML cannot tell); checks switched off by the caller carry no reason."""
    return [f"{name}: {c['reason']}" for name, c in (certificate.get("checks") or {}).items()
            if not c.get("checked") and c.get("reason")]


def compare_outputs(actual: Mapping[int, Any], expected: Mapping[int, Any], rtol: float, atol: float,
                    *, against: str) -> dict[str, Any]:
    """numpy.isclose of each output with its reference (NaN equals NaN only where both are NaN)."""
    import numpy as np  # noqa: PLC0415

    per_arg: dict[str, Any] = {}
    ok = True
    for idx, exp in expected.items():
        exp = np.asarray(exp)
        got = np.asarray(actual[idx])
        if got.size == exp.size:
            got = got.reshape(exp.shape)
        if got.shape != exp.shape:
            per_arg[str(idx)] = {"ok": False, "reason": f"shape {got.shape} != {exp.shape}"}
            ok = False
            continue
        if exp.dtype.kind in "fc":
            close = np.isclose(got, exp, rtol=rtol, atol=atol, equal_nan=True)
        else:
            close = got == exp
        bad = int(close.size - int(close.sum()))
        with np.errstate(invalid="ignore"):
            diff = np.abs(got.astype(np.float64) - exp.astype(np.float64))
        per_arg[str(idx)] = {"ok": bad == 0, "mismatches": bad, "elements": int(close.size),
                             "max_abs_error": float(np.nanmax(diff)) if diff.size and not np.all(np.isnan(diff)) else 0.0}
        ok = ok and bad == 0
    out = {"checked": True, "ok": ok, "against": against, "rtol": rtol, "atol": atol,
           "rule": "|actual - expected| <= atol + rtol*|expected|", "arguments": per_arg}
    if not ok:
        wrong = ", ".join(f"argument {k} ({v.get('mismatches', '?')} of {v.get('elements', '?')} wrong)"
                          for k, v in per_arg.items() if not v["ok"])
        out["reason"] = f"outputs differ from {against}: {wrong}"
    return out
