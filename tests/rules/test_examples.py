"""Each pattern rule against its examples: examples/rules/<ID>_bad.cu and <ID>_good.cu.

The expected findings are written by hand in the example files as `// expect: <ID>` comments on the
lines a reviewer says must be flagged (an id twice for two findings on one line); the rule runs on the parsed file and must report exactly those
lines (and nothing on the good example).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cudalens.rules.context import RuleContext
from cudalens.rules.registry import run_rules
from cudalens.source.parse import parse_file

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "rules"
# Every rule with a bad/good pair under examples/rules/ (discovered, so a new pair is tested as soon
# as it is added). The count guards against the folder silently going missing.
PATTERN_RULES = sorted(p.name[: -len("_bad.cu")] for p in EXAMPLES.glob("*_bad.cu"))
assert len(PATTERN_RULES) >= 29, PATTERN_RULES
_MARK = re.compile(r"//\s*expect:\s*([A-Z0-9, ]+)")


def expected(path: Path, rule_id: str) -> list[tuple[str, int]]:
    out = []
    for n, text in enumerate(path.read_text().splitlines(), start=1):
        m = _MARK.search(text)
        if m:  # one entry per mention: "// expect: I8, I8" means two findings on that line
            out.extend((rule_id, n) for r in m.group(1).split(",") if r.strip() == rule_id)
    return out


def found(path: Path, rule_id: str) -> list[tuple[str, int]]:
    ctx = RuleContext(source=parse_file(path), cc="9.0")
    findings, problems = run_rules(ctx, only=[rule_id])
    assert problems == []
    return sorted((f.rule, f.line) for f in findings)


@pytest.mark.parametrize("rule_id", PATTERN_RULES)
def test_bad_example_flags_exactly_the_marked_lines(rule_id):
    path = EXAMPLES / f"{rule_id}_bad.cu"
    want = expected(path, rule_id)
    assert want, f"{path.name} marks no line"
    assert found(path, rule_id) == want


@pytest.mark.parametrize("rule_id", PATTERN_RULES)
def test_good_example_is_clean(rule_id):
    path = EXAMPLES / f"{rule_id}_good.cu"
    assert expected(path, rule_id) == []
    assert found(path, rule_id) == []
