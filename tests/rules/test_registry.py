import pytest

from cudalens.findings import Finding, Priority
from cudalens.rules import registry

DOC = """What it does: x.\n\nWhy it matters: y.\n\nExample: z.\n\nFix: w."""


@pytest.fixture
def clean_registry(monkeypatch):
    monkeypatch.setattr(registry, "RULES", {})
    return registry


def _finding(rule_id, line):
    return Finding(rule=rule_id, priority=Priority.LOW, section="S", kernel=None, file="f.cu", line=line,
                   message="m", fix="f")


def test_two_detectors_of_one_item_both_report(clean_registry):
    def source_check(ctx):
        yield _finding("Z1", 1)

    def compiled_check(ctx):
        yield _finding("Z1", 2)

    source_check.__doc__ = compiled_check.__doc__ = DOC
    clean_registry.rule(id="Z1", name="n", priority=Priority.LOW, section="S", layers="S")(source_check)
    clean_registry.rule(id="Z1", name="n", priority=Priority.LOW, section="S", layers="C")(compiled_check)
    spec = clean_registry.RULES["Z1"]
    assert spec.layers == "S C"
    assert [f.line for f in spec.check(None)] == [1, 2]


def test_detectors_must_agree_on_priority(clean_registry):
    def a(ctx):
        return []

    a.__doc__ = DOC
    clean_registry.rule(id="Z2", name="n", priority=Priority.LOW, section="S", layers="S")(a)
    with pytest.raises(RuntimeError, match="disagree"):
        clean_registry.rule(id="Z2", name="n", priority=Priority.HIGH, section="S", layers="C")(a)


def test_a_rule_without_its_documentation_sections_is_refused(clean_registry):
    def b(ctx):
        return []

    b.__doc__ = "What it does: only this."
    with pytest.raises(RuntimeError, match="lacks the section"):
        clean_registry.rule(id="Z3", name="n", priority=Priority.LOW, section="S", layers="S")(b)


def test_a_failing_rule_becomes_a_problem_not_a_crash(clean_registry, monkeypatch):
    def broken(ctx):
        raise KeyError("boom")

    broken.__doc__ = DOC
    clean_registry.rule(id="Z4", name="n", priority=Priority.LOW, section="S", layers="S")(broken)
    monkeypatch.setattr(clean_registry, "load_all", lambda: clean_registry.RULES)
    findings, problems = clean_registry.run_rules(None)
    assert findings == [] and problems == ["rule Z4 failed: KeyError: 'boom'"]
