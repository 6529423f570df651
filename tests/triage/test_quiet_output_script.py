"""benchmarks/check/quiet_output.py reads `cudalens check`'s text output right: per rule, --show-all's
lines (before) against the default's (after), per file its lines and medium-and-above lines, checked
against the JSON findings of the same unit. The script is imported by path."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "check" / "quiet_output.py"

KERNELS = "\n".join(
    f"__global__ void k{i}(float *x, const float *y, int n) {{ int t = blockIdx.x * blockDim.x + threadIdx.x; "
    f"if (t < n) x[{i + 2} * t] = y[t]; }}" for i in range(6))


def test_quiet_output_counts_before_and_after_per_rule_and_file(tmp_path):
    spec = importlib.util.spec_from_file_location("quiet_output_under_test", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    unit = tmp_path / "sample"
    unit.mkdir()
    (unit / "k.cu").write_text(KERNELS + "\n")
    r = mod.measure("sample", str(unit), ["--no-compile"])
    assert not r["errors"] and mod.units(None, str(tmp_path)) == [("projects/sample", str(unit))]
    doc = json.loads(subprocess.run([sys.executable, "-m", "cudalens", "check", str(unit), "--no-compile",
                                     "--format", "json"], capture_output=True, text=True).stdout)
    rules = {f["rule"] for f in doc["findings"]}
    for rule in rules:
        assert r["by_rule"][rule]["before"] == sum(f["rule"] == rule for f in doc["findings"]), rule
    assert r["by_rule"]["E6"] == {"before": 6, "after": 1}  # six kernels without __launch_bounds__: one line
    (f,) = r["files"].values()
    strided = [x for x in doc["findings"] if x["priority"] in ("high", "medium")]
    assert f["medium_and_above"] == len(strided) >= 6 and f["findings"] == len(doc["findings"])
    assert f["collapsed"] >= 1 and f["parsed_consistently"]
    assert f["lines_show_all"] - f["lines"] == sum(c["before"] - c["after"] for c in r["by_rule"].values())
    assert f["screens"] == round(f["lines"] / mod.SCREEN, 2)
    t = mod.totals([r])
    assert t["max_medium_and_above_per_file"] == f["medium_and_above"] and t["files_over_one_screen_of_medium_and_above"] == []
