"""What each timer reads against Nsight Compute's ``gpu__time_duration``, as measured (issue #25).

``benchmarks/measure/timer_vs_ncu.py`` times kernels of 2-20 us with each harness timer (cold mode) and
with ncu (20 launches per size, the same L2 flush, clock control off), and fits
``timer = offset + slope * ncu`` over the kernels of 3 us and more. The fits are kept here, per
device, so that a result's certificate states how its timer relates to ncu on that GPU
(``certificate["timer"]["vs_ncu"]``). Results: benchmarks/results/{h100,h200}/timer_vs_ncu/.

Measured (2026-11-26, driver 580.159.04), from 3 us:

- H100 80GB HBM3: ``events`` = ncu (offset +0.01 us, slope 1.002; ratio 0.98-1.04, median
  difference 0.00 us); ``cupti`` reads 1.06 us below ncu (median; 0.58-1.03 of it);
- H200: ``events`` = ncu + 0.31 us (slope 1.006; ratio 1.02-1.13, median difference +0.35 us);
  ``cupti`` not measured there (the CUPTI module was missing on that run).
"""

from __future__ import annotations

from typing import Any

_SOURCE = "benchmarks/results/{}/timer_vs_ncu/timer_vs_ncu.json"
#: (device name contains, timer) -> the fit from 3 us (seconds)
FITS: dict[tuple[str, str], dict[str, Any]] = {
    ("H100", "events"): {"offset_s": 0.013e-6, "slope": 1.002, "median_difference_s": 0.0, "ratio": (0.982, 1.039),
                         "max_residual_s": 0.245e-6, "source": _SOURCE.format("h100")},
    ("H100", "cupti"): {"offset_s": -1.654e-6, "slope": 1.123, "median_difference_s": -1.056e-6,
                        "ratio": (0.582, 1.034), "max_residual_s": 0.456e-6, "source": _SOURCE.format("h100")},
    ("H200", "events"): {"offset_s": 0.314e-6, "slope": 1.006, "median_difference_s": 0.352e-6,
                         "ratio": (1.022, 1.132), "max_residual_s": 0.198e-6, "source": _SOURCE.format("h200")},
}


def vs_ncu(timer: str | None, device_name: str | None) -> dict[str, Any]:
    """How ``timer`` relates to ncu's gpu__time_duration on ``device_name``: the measured fit and a
    sentence, or ``{"measured": False}`` with why."""
    name = device_name or ""
    for (dev, t), fit in FITS.items():
        if t == timer and dev in name:
            within = 0.98 <= fit["ratio"][0] and fit["ratio"][1] <= 1.02
            lo, hi = fit["ratio"]
            words = (f"{timer} on this GPU ({dev}) reads ncu's gpu__time_duration "
                     f"{fit['median_difference_s'] * 1e6:+.2f} us (median, kernels of 3-20 us; fit: "
                     f"{fit['slope']:.3f} x ncu {fit['offset_s'] * 1e6:+.2f} us; ratio {lo:.2f}-{hi:.2f})")
            return {"measured": True, **fit, "within_2_percent": within, "statement": words}
    return {"measured": False, "statement": f"how timer {timer!r} relates to ncu was not measured on this GPU"}
