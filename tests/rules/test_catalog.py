"""Every registered rule is documented and maps to a catalog item; the catalog table matches
GUIDE_CATALOG.md when the shared folder is present (../shared beside the repository)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cudalens.rules.catalog import CATALOG, ITEMS
from cudalens.rules.registry import load_all

REPO = Path(__file__).resolve().parents[2]
CATALOG_MD = REPO.parent / "shared" / "GUIDE_CATALOG.md"
HEADINGS = ("What it does", "Why it matters", "Example", "Fix")


def test_every_rule_has_a_rule_page_and_a_catalog_id():
    rules = load_all()
    assert rules
    for rid, spec in rules.items():
        assert rid in ITEMS, f"rule {rid} is not a catalog id"
        positions = [spec.doc.find(h) for h in HEADINGS]
        assert all(p >= 0 for p in positions), f"rule {rid} lacks a section"
        assert positions == sorted(positions), f"rule {rid}: sections out of order"


def test_rule_priority_is_the_guides():
    for rid, spec in load_all().items():
        assert spec.priority == ITEMS[rid].priority and spec.section == ITEMS[rid].section, rid


def _catalog_rows(text: str) -> dict[str, tuple[str, str]]:
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 6 and re.fullmatch(r"[A-Z]{1,2}\d+", cells[0]):
            rows[cells[0]] = (cells[2], cells[3])  # section, priority
    return rows


@pytest.mark.skipif(not CATALOG_MD.exists(), reason="shared/GUIDE_CATALOG.md not beside the repository")
def test_catalog_table_matches_guide_catalog():
    rows = _catalog_rows(CATALOG_MD.read_text())
    assert set(rows) == set(CATALOG)
    for rid, (section, pri) in rows.items():
        assert CATALOG[rid].section == section, rid
        assert CATALOG[rid].guide_priority == pri, rid
