"""The HTML report in a real headless browser (Debian's chromium driven by Playwright).

The test needs the system's chromium and skips with a reason when it is absent; ``.ci/run``
installs it (apt-get, visibly, before pytest): tests never install system packages. The page
must load with no console error and no uncaught exception, show its key sections, and a
screenshot is taken.
"""

from __future__ import annotations

import shutil

import pytest

from cudalens.findings import Finding, Priority
from cudalens.report.html import render_html


def _ensure_chromium() -> str:
    """The system chromium; the test never installs it (``.ci/run`` does, visibly, before pytest)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.skip("chromium is not installed (`.ci/run` installs it with apt-get; or: apt-get install chromium)")
    return found


def _report(tmp_path) -> dict:
    src = tmp_path / "k.cu"
    src.write_text(
        "__global__ void k(float* out, const float* in, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) out[i] = in[2 * i];\n"
        "}\n"
    )
    finding = Finding(rule="G3", priority=Priority.HIGH, section="BPG 9.2.1.4", kernel="k", file=str(src), line=3,
                      message="Loads of in stride by 2 elements: 8 sectors per request instead of 4.",
                      fix="Make consecutive threads read consecutive elements.", impact=0.5,
                      impact_text="share of fetched bytes wasted")
    return {
        "schema": "cudalens/analysis-1",
        "cc": "9.0",
        "kernels": [{"name": "k", "file": str(src), "line": 1,
                     "accesses": [{"line": 3, "array": "in", "space": "global", "op": "load", "bytes_per_thread": 4,
                                   "sectors_per_request": 8.0, "ideal_sectors_per_request": 4.0,
                                   "bank_conflict_ways": None, "pattern": "strided-2"}],
                     "branches": [{"line": 3, "divergent": False}],
                     "resources": {"registers": 16, "static_shared_bytes": 0, "local_bytes": 0, "spill_stores": 0,
                                   "spill_loads": 0, "constant_bytes": 0, "barriers": 0},
                     "occupancy": {"threads_per_block": 256, "active_blocks_per_sm": 8, "active_warps_per_sm": 64,
                                   "occupancy": 1.0, "limiters": ["warps"]}}],
        "findings": [finding.to_dict()],
        "cross_checks": [{"kernel": "k", "quantity": "global load sectors/request", "line": 3,
                          "predicted": 8.0, "measured": 8.0, "agree": True, "unit": "sectors/request",
                          "relation": "≈"},
                         {"kernel": "k", "quantity": "branch efficiency", "line": None, "predicted": 99.0,
                          "measured": 97.5, "agree": True, "unit": "%", "relation": "<"}],
        "roofline": {"kernel": "k", "peak_flops": 6.7e13, "peak_bandwidth_bytes_per_s": 3.35e12,
                     "arithmetic_intensity": 0.1, "achieved_flops": 2.0e11},
    }


def test_html_report_loads_cleanly_in_headless_chromium(tmp_path):
    chromium = _ensure_chromium()
    sync_api = pytest.importorskip("playwright.sync_api")
    page_file = tmp_path / "report.html"
    page_file.write_text(render_html(_report(tmp_path)), encoding="utf-8")
    errors: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=chromium, headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run", "--disable-quic"])
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(page_file.as_uri())
        page.wait_for_load_state("load")
        assert page.locator("#summary").count() == 1
        assert page.locator(".finding[data-rule='G3']").count() == 1
        assert page.locator("#finding-count").inner_text() == "1"
        assert page.locator(".occupancy-chart svg").count() == 1
        assert page.locator("#roofline svg").count() == 1
        table = page.locator("#predicted-vs-measured").inner_text()
        assert "8 sectors/request" in table  # the unit beside the number
        assert "< 99 %" in table and "97.5 %" in table  # the relation of a bound, never a bare 99.00
        assert page.locator("pre.src .hit").inner_text().strip().startswith("3")
        assert page.evaluate("window.__cudalensErrors.length") == 0
        shot = tmp_path / "report.png"
        page.screenshot(path=str(shot), full_page=True)
        browser.close()
    assert errors == []
    assert shot.stat().st_size > 10_000
