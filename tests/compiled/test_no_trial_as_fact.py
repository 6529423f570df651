"""No trial value is printed as a fact (issue #26): the kernels of tests/fixtures/trial_values take
parameters no launch gives, so the models try values for them (access.ptx_eval.PLAUSIBLE, the source
model's access.model.TRIAL_VALUES). Every printed figure (text report, concise lines, JSON finding
messages) that equals a trial value must name the parameter and say it was tried; findings that hold
at every trial, or in every full warp, are still reported (with the range, or an edge-warp note)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cudalens.access.model import TRIAL_VALUES
from cudalens.access.ptx_eval import PLAUSIBLE, SMALL
from cudalens.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "trial_values"
# (the compiled model's small trials, access.ptx_eval.SMALL: 16, 17, 32, 33, 100, are left out of the
# check: 16 and 32 are also real figures, "32 sectors per request"; the large trials are not)
TRIALS = {float(v) for v in (*PLAUSIBLE, *TRIAL_VALUES)}
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")
# a finding line of the text report: the estimated speedup ("-" where none), priority, rule, line
_FINDING_LINE = re.compile(r"^\s+(?:\S+\s+)?(high|medium|medium-low|low|info)\s+[A-Z]+\d+\s+line \d+:")


# the blocks a kernel with no launch is evaluated under, said as such (pipeline.plausible): block sizes,
# not a parameter's trials
_BLOCKS_SAID = re.compile(r"\(no launch found; holds for blocks of [\dx, ]+ threads\)")


def trial_facts(lines: list[str], params: set[str]) -> list[str]:
    """The lines that print a trial value without naming a parameter and that it was tried."""
    bad = []
    for line in lines:
        if {float(x) for x in _NUMBER.findall(_BLOCKS_SAID.sub("", line))} & TRIALS:
            named = any(re.search(rf"\b{re.escape(p)} = ", line) for p in params)
            if not (named and "tried" in line):
                bad.append(line)
    return bad


def _params() -> set[str]:
    """Every scalar parameter name of the fixture kernels (the ones the models try)."""
    text = "".join(p.read_text() for p in FIXTURES.glob("*.cu"))
    return set(re.findall(r"\bint (\w+)\)", text))


@pytest.fixture(scope="module")
def reports(wheel_toolchain, tmp_path_factory):
    out = {}
    tmp = tmp_path_factory.mktemp("reports")
    files = sorted(str(p) for p in FIXTURES.glob("*.cu"))
    for fmt in ("text", "concise", "json"):
        for mode in ((), ("--no-compile",)):  # the compiled model's trials, and the source model's alone
            path = tmp / f"report{''.join(mode)}.{fmt}"
            assert main(["analyze", *files, "--no-config", *mode, "--format", fmt, "-o", str(path)]) == 0
            out[fmt + "".join(mode)] = path.read_text()
    return out


def test_the_checker_catches_a_trial_printed_as_a_fact():
    params = {"height"}
    assert trial_facts(["g.cu:5:1: G3 [high] global load of in[t * height] has lane stride 256 elements: 32 "
                        "sectors per request instead of 4"], params)
    assert not trial_facts(["lane stride = height elements (height = 256..4096 tried): 32 sectors"], params)
    assert trial_facts(["lane stride 2048 elements (tried)"], params)  # tried, but no parameter named
    said = " (no launch found; holds for blocks of 256, 128, 512 threads)"
    assert not trial_facts(["global load of in[i * 4] has lane stride 4 elements" + said], params)
    assert trial_facts(["global load of in[t * height] has lane stride 256 elements" + said], params)


def test_no_printed_figure_is_a_trial_value_without_its_parameter(reports):
    params = _params()
    for mode in ("", "--no-compile"):
        concise = [ln for ln in reports["concise" + mode].splitlines() if ln.strip()]
        text = [ln for ln in reports["text" + mode].splitlines() if _FINDING_LINE.match(ln)]
        data = json.loads(reports["json" + mode])
        messages = [f["message"] for f in data["findings"]]
        assert len(text) == len(messages) > 0
        for lines in (concise, text, messages):
            assert trial_facts(lines, params) == [], mode
        # nor does the JSON give a trial as an access's lane stride
        strides = [a for k in data["kernels"] for a in k["accesses"] if a["lane_stride"] in TRIALS]
        assert strides == [], mode
    # the kernels do exercise the trials: the figures that depend on them name them
    # (5: `scaled`'s in[t * (n / 64)] is no finding at the small trials, n < 64 gives lane stride 0,
    # so since issue #27's small sizes it is a range that is not a finding at every value: unreported)
    assert sum("tried" in f["message"] for f in json.loads(reports["json"])["findings"]) >= 5


def _g3(reports, kernel: str) -> str:
    found = [f["message"] for f in json.loads(reports["json"])["findings"] if f["rule"] == "G3" and f["kernel"] == kernel]
    assert len(found) == 1, (kernel, found)
    return found[0]


SPAN = f"{min(PLAUSIBLE + SMALL)}..{max(PLAUSIBLE + SMALL)}"  # a parameter that reaches an address: small sizes too


def test_a_stride_that_is_a_parameter_is_named_by_it(reports):
    assert f"lane stride = height elements (height = {SPAN} tried)" in _g3(reports, "column")
    assert f"lane stride = 2 x pitch elements (pitch = {SPAN} tried)" in _g3(reports, "pitched")
    assert f"lane stride = s elements (s = {SPAN} tried)" in _g3(reports, "stepped")


def test_a_range_that_is_a_finding_at_every_value_is_reported_with_the_range(reports):
    # in[t * (n / 64 + 4)]: 4 to 68 elements apart over the trials, 16 to 32 sectors, each above 4
    msg = _g3(reports, "scaled")
    assert "16-32 sectors per request instead of 4" in msg and f"n = {SPAN} tried" in msg


def test_edge_warps_of_a_bounds_guard_or_a_grid_stride_loop_do_not_hide_the_finding(reports):
    guarded = _g3(reports, "guarded")  # if (t < n / 32) out[t] = in[t * 32]
    assert "lane stride 32 elements: 32 sectors per request instead of 4 (in every full warp; edge warps" in guarded
    assert "n = 256, 1000 tried" in guarded
    loop = _g3(reports, "grid_stride")  # a grid-stride loop reading in[i * 4]
    # (since issue #27 the figure is the loop's weighted one over its iterations: 16 at every trial of n,
    # so no edge-warp note is needed; the finding is what must not be hidden)
    assert "lane stride 4 elements: 16 sectors per request instead of 4" in loop
