"""The measured-quantity table: its rows agree with what reads them, ``verified_by=`` names rows,
and adding a measured quantity is adding a row (CONTRIBUTING, "Adding a measured quantity")."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import re
import sys
import textwrap
from pathlib import Path

import pytest

import cudalens.rules
from cudalens import quantities
from cudalens.guided.crosscheck import cross_check, disagreement_findings
from cudalens.profile import ncu, ncu_source
from cudalens.quantities import QUANTITIES, RATIO, Quantity, Tolerance, measured_rows
from cudalens.rules import registry
from cudalens.rules.catalog import ITEMS
from cudalens.rules.registry import rule

CONTRIBUTING = Path(__file__).resolve().parents[1] / "CONTRIBUTING.md"


def _section(text: str, heading: str) -> str:
    return text.split(heading, 1)[1].split("\n## ", 1)[0]


def test_rows_name_the_counters_metrics_and_columns_their_readers_read():
    fields = {f.name for f in dataclasses.fields(ncu.LegacyMetrics)}
    parser = inspect.getsource(ncu_source.parse_source_csv)
    assert len(QUANTITIES) == len({q.name for q in QUANTITIES.values()})
    for q in QUANTITIES.values():
        assert not q.counter or q.counter in fields, q
        assert set(q.metrics) <= set(ncu.METRICS), q
        assert all(f'"{c}"' in parser for c in q.columns), q
        if q.space:  # a memory row is one (space, op) of the model's accesses
            assert q.name.startswith(f"{q.space} {q.op} ") and q.name.endswith(q.unit)


def test_tolerances_as_the_comparisons_apply_and_print_them():
    assert RATIO.text == "±max(10% of predicted, 0.5)"
    assert RATIO.agrees(32.0, 29.0) and not RATIO.agrees(32.0, 28.7) and RATIO.agrees(1.0, 1.5)
    assert RATIO.covers(2.0, 8.0, 8.8) and not RATIO.covers(2.0, 8.0, 8.9) and RATIO.covers(2.0, 8.0, 1.5)
    occ = quantities.THEORETICAL_OCCUPANCY.tolerance
    assert occ.text == "±1 percentage point" and occ.agrees(50.0, 51.0) and not occ.agrees(50.0, 51.5)
    branch = quantities.BRANCH_EFFICIENCY.tolerance
    assert branch.text == "divergent: < 99 %; uniform: >= 99 %"
    assert branch.on_side(True, 98.9) and not branch.on_side(True, 99.0) and branch.on_side(False, 99.0)


def test_every_verified_by_is_a_measured_row():
    specs = registry.load_all()
    verified = {rid: [q.name for q in spec.verified_by] for rid, spec in specs.items() if spec.verified_by}
    assert verified["G1"] == ["global load sectors/request", "global store sectors/request"]
    assert verified["D1"] == ["branch efficiency"] and verified["E1"] == ["theoretical occupancy"]
    for names in verified.values():
        assert all(QUANTITIES[n].measured for n in names)


def test_a_verified_by_that_names_no_row_fails_at_registration():
    with pytest.raises(RuntimeError, match="rule G1: verified_by: not a measured quantity: 'global load sector/request'"):
        rule("G1", name="uncoalesced-global-access", layers="S", verified_by="global load sector/request")
    with pytest.raises(RuntimeError, match="'branch divergent share'"):  # a row no counter measures
        rule("D1", name="divergent-branch", layers="S", verified_by=("branch efficiency", "branch divergent share"))
    with pytest.raises(ValueError, match="the rows: global load sectors/request, "):
        measured_rows(("nothing",))


TYPO_RULE = '''
"""K9: a rule whose verified_by has a typo."""

from cudalens.rules.registry import rule


@rule("K1", name="divergent-constant-addresses", layers="S", verified_by="branch eficiency")
def detects(ctx):
    """What it does: x. Why it matters: x. Example: x. Fix: x."""
    return ()
'''


def test_a_typo_in_a_rule_file_fails_when_it_is_imported(tmp_path, monkeypatch):
    chapter = tmp_path / "typo_chapter"
    chapter.mkdir()
    (chapter / "__init__.py").write_text("")
    (chapter / "k9_typo.py").write_text(textwrap.dedent(TYPO_RULE))
    monkeypatch.setattr(registry, "RULES", dict(registry.load_all()))
    monkeypatch.setattr(cudalens.rules, "__path__", [*cudalens.rules.__path__, str(tmp_path)])
    for name in ("cudalens.rules.typo_chapter", "cudalens.rules.typo_chapter.k9_typo"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    with pytest.raises(RuntimeError, match="'branch eficiency'"):
        importlib.import_module("cudalens.rules.typo_chapter.k9_typo")


def _access(line, space, op, **figures):
    from cudalens.source.model import Access

    return Access(line, "c", space, op, 4, "i", pattern="p", **figures)


def _record(name, accesses):
    from cudalens.evidence.join import KernelRecord
    from cudalens.source.model import Kernel

    return KernelRecord(Kernel(name, "k.cu", 1, 9, (), False, None, accesses=tuple(accesses)), None, (), None, None)


def test_adding_a_measured_quantity_is_adding_a_row(monkeypatch):
    """The CONTRIBUTING steps, executed as written there, for a quantity of an access the model
    already gives a figure for: the row (1), its counter in the metric set (2), the rule it verifies
    (3); the per-kernel cross-check then compares it, and a disagreement is a V1 finding, with no
    other edit."""
    steps = _section(CONTRIBUTING.read_text(), "## Adding a measured quantity")
    # 1. the row, as CONTRIBUTING writes it: constant-memory addresses per warp request (K1's figure)
    (code,) = re.findall(r"```python\n(.*?)```", steps, re.S)
    namespace: dict = {"Quantity": Quantity, "RATIO": RATIO}
    exec(textwrap.dedent(code), namespace)
    (row,) = [v for v in namespace.values() if isinstance(v, Quantity)]
    monkeypatch.setitem(QUANTITIES, row.name, row)
    # 2. the counter: its metrics collected, its field among the derived metrics
    monkeypatch.setattr(ncu, "METRICS", (*ncu.METRICS, *row.metrics))
    metrics = dataclasses.make_dataclass("Metrics", [(row.counter, "float | None", None)], bases=(ncu.LegacyMetrics,),
                                         frozen=True)
    monkeypatch.setattr(ncu, "LegacyMetrics", metrics)
    test_rows_name_the_counters_metrics_and_columns_their_readers_read()
    # 3. the rule it verifies names it (checked at registration)
    monkeypatch.setattr(registry, "RULES", dict(registry.load_all()))
    (said,) = re.findall(r'@rule\("K1", \.\.\., verified_by="([^"]+)"\)', steps)
    k1 = registry.RULES.pop("K1")
    rule("K1", name=k1.name, layers=k1.layers, verified_by=said)(k1.checks[0])
    assert [q.name for q in registry.RULES["K1"].verified_by] == [row.name]

    def measured(name, value):
        base = {f.name: None for f in dataclasses.fields(metrics)}
        return metrics(**{**base, "kernel": name, "launches": 1, row.counter: value})

    records = [_record("agrees", [_access(3, "constant", "load", distinct_addresses=4.0)]),
               _record("differs", [_access(5, "constant", "load", distinct_addresses=1.0)])]
    checks = [c for c in cross_check(records, {"agrees": measured("agrees", 4.2), "differs": measured("differs", 8.0)})
              if c.quantity == row.name]
    assert [(c.kernel, c.line, c.predicted, c.measured, c.agree) for c in checks] == [
        ("agrees", 3, 4.0, 4.2, True), ("differs", 5, 1.0, 8.0, False)]
    assert {(c.unit, c.tolerance, c.counter) for c in checks} == {(row.unit, RATIO.text, row.counter)}
    (v1,) = disagreement_findings(checks)
    assert (v1.rule, v1.priority, v1.section, v1.kernel, v1.line) == (
        "V1", ITEMS["V1"].priority, ITEMS["V1"].section, "differs", 5)
    assert f"{row.name} predicted 1 addresses/request, ncu measured 8 addresses/request" in v1.message


def test_a_row_of_another_tolerance_prints_and_applies_its_own():
    loose = dataclasses.replace(quantities.GLOBAL_LOAD_SECTORS, tolerance=Tolerance(relative=0.5, absolute=1.0))
    assert loose.tolerance.text == "±max(50% of predicted, 1.0)"
    assert loose.tolerance.agrees(4.0, 5.9) and not RATIO.agrees(4.0, 5.9)
