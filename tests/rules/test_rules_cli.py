import json

from cudalens.cli import main
from cudalens.rules.catalog import CATALOG
from cudalens.rules.registry import load_all


def test_list_marks_exactly_the_registered_items(capsys):
    assert main(["rules", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["catalog"] == len(CATALOG)
    assert {r["id"] for r in data["rules"] if r["detector"]} == set(load_all()) & set(CATALOG)


def test_a_rule_page_has_the_four_sections(capsys):
    assert main(["rules", "sh1"]) == 0
    page = capsys.readouterr().out
    assert page.startswith("SH1 ")
    positions = [page.find(h) for h in ("What it does", "Why it matters", "Example", "Fix")]
    assert all(p > 0 for p in positions) and positions == sorted(positions)


def test_unknown_rule_is_one_line_exit_2(capsys):
    assert main(["rules", "Q7"]) == 2
    assert capsys.readouterr().err.strip().count("\n") == 0
