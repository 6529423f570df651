"""Every catalog item has a rule, or a page saying where else cudalens establishes it or why no
tool can detect it from code (and what to do instead); `cudalens rules` shows which."""

from __future__ import annotations

import json

from cudalens.cli import main
from cudalens.rules.catalog import CATALOG
from cudalens.rules.coverage import COVERAGE
from cudalens.rules.registry import load_all


def test_every_catalog_item_is_covered_once():
    rules = load_all()
    for item in CATALOG:
        assert (item in rules) != (item in COVERAGE), item  # a rule, or a coverage page, never both
    for item, cov in COVERAGE.items():
        assert cov.kind in ("elsewhere", "not detectable") and len(cov.page) > 80, item
        assert (cov.where != "-") == (cov.kind == "elsewhere"), item


def test_rules_command_shows_coverage(capsys):
    assert main(["rules", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    rows = {r["id"]: r for r in doc["rules"]}
    assert doc["implemented"] + doc["elsewhere"] + doc["not_detectable"] == doc["catalog"] == len(CATALOG)
    assert rows["G1"]["coverage"] == "rule" and rows["A2"]["coverage"] == "elsewhere"
    assert rows["A1"]["coverage"] == "rule"  # the traced detector (cudalens profile)
    assert rows["K3"]["coverage"] == "not detectable"
    assert main(["rules", "K3"]) == 0
    page = capsys.readouterr().out
    assert "not detectable" in page and "compare results against a reference" in page
