"""Kernels with no launch (issue #26, Build 4): evaluated under every plausible block declared in
project.resolve.PLAUSIBLE_BLOCKS; a finding is reported only where it holds under each, and says so."""

from __future__ import annotations

from cudalens.pipeline import analyze
from cudalens.project.resolve import PLAUSIBLE_BLOCKS, plausible_blocks

KERNELS = """extern "C" __global__ void tail(float *out, const float *in) {
  int t = threadIdx.x;
  if (t >= 200) out[t] = in[t] * 2.0f;
}

extern "C" __global__ void cols(float *out, const float *in) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  out[x * 64] = in[x];
}

__global__ void tile(float *out, const float *in, int w) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  out[y * w + x] = in[y * w + x];
}
"""


def _run(tmp_path, **kw):
    (tmp_path / "k.cu").write_text(KERNELS)
    result = analyze([str(tmp_path / "k.cu")], compile=False, **kw)
    (fa,) = result.files
    return fa, {(f.rule, f.kernel): f for f in fa.findings}


def test_the_plausible_blocks_are_declared_once_and_2d_kernels_take_2d_ones(tmp_path):
    fa, _found = _run(tmp_path)
    kernels = {k.name: k for k in fa.model.kernels}
    assert plausible_blocks(kernels["tail"]) == PLAUSIBLE_BLOCKS[1] and len(PLAUSIBLE_BLOCKS[1]) >= 3
    assert plausible_blocks(kernels["tile"]) == PLAUSIBLE_BLOCKS[2] == ((32, 8, 1), (16, 16, 1))
    assert kernels["tile"].launch.block == (32, 8, 1) and kernels["tail"].launch.block == (256, 1, 1)
    assert kernels["cols"].launch.origin == "assumed"
    assert kernels["cols"].launch.assumption == ("256 threads, no launch found; findings hold for blocks of "
                                                 "256, 128, 512 threads")
    assert kernels["tile"].launch.assumption.endswith("blocks of 32x8, 16x16 threads")


def test_a_finding_is_reported_only_where_it_holds_under_each_block(tmp_path):
    fa, found = _run(tmp_path)
    # the store walks 64 elements whatever the block: reported, with the assumption
    g3 = found[("G3", "cols")]
    assert g3.message.endswith("(no launch found; holds for blocks of 256, 128, 512 threads)")
    assert any(e.fact == "assumption" and "no launch found" in str(e.value) for e in g3.evidence)
    # t >= 200 splits a warp of a 256- or 512-thread block, none of a 128-thread one: not reported
    assert ("D1", "tail") not in found
    assert any(n.startswith("D1 of kernel tail at line 3 not reported") for n in fa.notes)


def test_a_given_block_is_no_assumption(tmp_path):
    _fa, found = _run(tmp_path, block=(256, 1, 1))
    assert ("D1", "tail") in found and "no launch found" not in found[("G3", "cols")].message


def test_the_further_evaluations_run_only_the_rules_that_decide_and_change_nothing(tmp_path, monkeypatch):
    import cudalens.pipeline.plausible as plausible
    from cudalens.rules.registry import RULES, load_all

    fa, _found = _run(tmp_path)
    load_all()
    monkeypatch.setattr(plausible, "_asked", lambda _findings: frozenset(RULES))  # every rule, as before
    every, _ = _run(tmp_path)
    assert [f.to_dict() for f in fa.findings] == [f.to_dict() for f in every.findings] and fa.notes == every.notes


def test_a_kernel_with_no_finding_to_decide_is_not_evaluated_again(tmp_path):
    from cudalens.findings import Finding, Priority
    from cudalens.pipeline.plausible import hold_for_every_block

    fa, _found = _run(tmp_path)
    asked: list[frozenset[str]] = []

    def evaluate(block, rules):
        asked.append(rules)
        return []

    advisory = Finding("E6", Priority.LOW, "", "cols", fa.model.path, 7, "m", "f", advisory=True)
    kept, notes = hold_for_every_block([advisory], fa.model, None, evaluate)
    assert kept == [advisory] and notes == [] and asked == []
    g1 = Finding("G1", Priority.HIGH, "", "cols", fa.model.path, 7, "m", "f")
    kept, notes = hold_for_every_block([g1], fa.model, None, evaluate)
    assert kept == [] and len(notes) == 1  # under the other blocks it does not fire
    assert len(asked) == len(plausible_blocks(next(k for k in fa.model.kernels if k.name == "cols"))) - 1
    assert all(rules == {"G1", "G3", "SH3"} for rules in asked)
