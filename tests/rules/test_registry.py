"""The registry: declarations, the catalog as the one source of priority and section, overlaps
resolved centrally, failure isolation, and adding a rule by adding one file."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest
from click.testing import CliRunner

import cudalens.rules
from cudalens.cli import cli as main
from cudalens.findings import Evidence, Finding, Layer, Priority, is_advisory
from cudalens.rules import registry
from cudalens.rules.catalog import CATALOG
from cudalens.rules.context import RuleContext
from cudalens.source.parse import parse_file, parse_source

DOC = """What it does: x.\n\nWhy it matters: y.\n\nExample: z.\n\nFix: w."""


@pytest.fixture
def clean_registry(monkeypatch):
    monkeypatch.setattr(registry, "RULES", {})
    monkeypatch.setattr(registry, "load_all", lambda: registry.RULES)
    return registry


def _ctx(text: str = "__global__ void k(float *a) { a[threadIdx.x] = 0; }\n") -> RuleContext:
    return RuleContext(source=parse_source(text, "t.cu"))


def _detector(*lines, facts=()):
    def detect(ctx):
        for line in lines:
            yield ctx.finding(line, "m", "f", kernel="k", facts=facts)

    detect.__doc__ = DOC
    return detect


def test_priority_and_section_come_from_the_catalog(clean_registry):
    clean_registry.rule("I1", name="n", layers="S")(_detector(3))
    (f,) = clean_registry.RULES["I1"].check(_ctx())
    assert (f.priority, f.section) == (CATALOG["I1"].priority, CATALOG["I1"].section) == (Priority.LOW, "BPG 11.1.1, PG 5.4.1")
    assert f.file == "t.cu" and f.rule == "I1"


def test_two_detectors_of_one_item_both_report(clean_registry):
    clean_registry.rule("K2", name="n", layers="S")(_detector(1))
    clean_registry.rule("K2", name="n", layers="C")(_detector(2))
    spec = clean_registry.RULES["K2"]
    assert spec.layers == "S C"
    assert [f.line for f in spec.check(_ctx())] == [1, 2]


def test_only_catalog_ids_and_documented_rules_register(clean_registry):
    with pytest.raises(RuntimeError, match="not a GUIDE_CATALOG id"):
        clean_registry.rule("Z9", name="n", layers="S")
    bad = _detector(1)
    bad.__doc__ = "What it does: only this."
    with pytest.raises(RuntimeError, match="lacks the section"):
        clean_registry.rule("K2", name="n", layers="S")(bad)


def test_a_failing_rule_becomes_a_problem_not_a_crash(clean_registry):
    def broken(ctx):
        raise KeyError("boom")

    broken.__doc__ = DOC
    clean_registry.rule("K3", name="n", layers="S")(broken)
    clean_registry.rule("K2", name="n", layers="S")(_detector(4))
    findings, problems = clean_registry.run_rules(_ctx())
    assert [f.rule for f in findings] == ["K2"] and problems == ["rule K3 failed (internal error: 'boom')"]


def test_a_superseding_rule_replaces_the_other_on_its_line_and_carries_its_priority(clean_registry):
    clean_registry.rule("G3", name="strided", layers="S")(_detector(5, 9))  # high priority
    clean_registry.rule("SH3", name="stage", layers="S", supersedes=("G3",), carries_priority=True)(_detector(5))
    findings, _ = clean_registry.run_rules(_ctx())
    assert sorted((f.rule, f.line, f.priority) for f in findings) == [("G3", 9, Priority.HIGH),
                                                                       ("SH3", 5, Priority.HIGH)]
    sh3 = next(f for f in findings if f.rule == "SH3")
    assert sh3.evidence[-1] == Evidence(Layer.MODEL, "supersedes", "G3")


def test_superseding_without_carrying_keeps_its_own_priority(clean_registry):
    clean_registry.rule("I6", name="accurate", layers="S", one_per=("function",))(
        _detector(5, 7, facts=(("function", "sinf"),)))
    clean_registry.rule("I3", name="rsqrt", layers="S", supersedes=("I6",))(_detector(5))
    findings, _ = clean_registry.run_rules(_ctx())
    # I6's call on line 5 is I3's; the next sinf call (line 7) is the one I6 reports, once
    assert sorted((f.rule, f.line, f.priority) for f in findings) == [("I3", 5, Priority.INFO),
                                                                       ("I6", 7, Priority.MEDIUM)]


def test_a_kernel_wide_detector_yields_to_a_superseding_finding_anywhere_in_its_kernel(clean_registry):
    clean_registry.rule("I6", name="accurate", layers="C", kernel_wide=True)(_detector(2))
    clean_registry.rule("I8", name="pow", layers="S", supersedes=("I6",))(_detector(9))
    findings, _ = clean_registry.run_rules(_ctx())
    assert [f.rule for f in findings] == ["I8"]


def test_advisory_is_declared_by_the_rule(clean_registry):
    clean_registry.rule("E6", name="n", layers="S", advisory=True)(_detector(1))
    (f,) = clean_registry.RULES["E6"].check(_ctx())
    assert f.advisory and is_advisory(f)
    assert not is_advisory(Finding("E2", Priority.MEDIUM, "s", None, "f", 1, "m", "x"))


NEW_RULE = '''
"""K3: a test rule added as one file (the CONTRIBUTING steps)."""

from __future__ import annotations

from typing import Iterator

from cudalens.findings import Finding
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule


@rule("K3", name="texture-read-of-written-data", layers="S")
def texture_read_of_written_data(ctx: RuleContext) -> Iterator[Finding]:
    """Reads through a texture of data the same kernel writes.

    What it does:
        Flags every kernel (a stand-in for the real detector).

    Why it matters:
        The texture cache is not coherent with global writes of the same launch.

    Example:
        `tex1Dfetch(t, i)` after `a[i] = v`.

    Fix:
        Read the written data through ordinary loads.
    """
    for k in ctx.source.kernels:
        yield ctx.finding(k.line, f"kernel {k.name} (test rule)", "fix it", kernel=k.name)
'''


def test_adding_a_rule_is_adding_one_file(tmp_path, monkeypatch):
    """A new chapter file on the rules package's path is registered, paged and run: nothing else
    (no table, no import list) needs an edit."""
    chapter = tmp_path / "texture_memory"
    chapter.mkdir()
    (chapter / "__init__.py").write_text('"""K. Texture memory (test)."""\n')
    (chapter / "k3_texture_read_of_written_data.py").write_text(textwrap.dedent(NEW_RULE))
    monkeypatch.setattr(registry, "RULES", dict(registry.load_all()))
    monkeypatch.setattr(cudalens.rules, "__path__", [*cudalens.rules.__path__, str(tmp_path)])
    monkeypatch.delitem(sys.modules, "cudalens.rules.texture_memory", raising=False)
    monkeypatch.delitem(sys.modules, "cudalens.rules.texture_memory.k3_texture_read_of_written_data", raising=False)
    cu = tmp_path / "k.cu"
    cu.write_text("__global__ void scale(float *a) { a[threadIdx.x] *= 2.0f; }\n")
    runner = CliRunner()
    listing = json.loads(runner.invoke(main, ["rules", "--format", "json"]).output)
    assert next(r for r in listing["rules"] if r["id"] == "K3")["detector"] is True
    page = runner.invoke(main, ["rules", "K3"]).output
    assert "Flags every kernel" in page and CATALOG["K3"].section in page
    findings, problems = registry.run_rules(RuleContext(source=parse_file(cu)))
    k3 = [f for f in findings if f.rule == "K3"]
    assert problems == [] and [(f.kernel, f.line, f.section) for f in k3] == [("scale", 1, CATALOG["K3"].section)]
