"""Divergence classification with the compiled facts: predicated branches and library branches."""

import pytest

from cudalens.guided.crosscheck import divergence_class


def _kernel(branches, hidden=()):
    return {"name": "k", "branches": branches, "unmodelled_branch_lines": list(hidden)}


def test_a_divergent_condition_the_compiler_predicated_runs_no_branch():
    assert divergence_class(_kernel([{"line": 5, "divergent": True, "predicated": True}]))[0] is False
    assert divergence_class(_kernel([{"line": 5, "divergent": True, "predicated": False}]))[:2] == (True, 5)
    assert divergence_class(_kernel([{"line": 5, "divergent": True}]))[0] is True  # not compiled: as written


def test_branches_the_model_cannot_see_make_the_answer_unknown():
    cls, line, why = divergence_class(_kernel([{"line": 5, "divergent": False, "predicated": False}], hidden=[9]))
    assert (cls, line) == (None, 9) and "line(s) 9" in why
    # a modelled divergent branch settles it whatever else is there
    assert divergence_class(_kernel([{"line": 5, "divergent": True, "predicated": False}], hidden=[9]))[0] is True


def test_lab_kernels_compiled():
    from cudalens.pipeline import analyze
    from cudalens.compiled.toolchain import discover
    from cudalens.labs.runner import kernel_path

    if "nvcc" not in discover().tools:
        pytest.skip("no nvcc to compile with")
    kernels = {k["name"]: k for k in analyze([str(kernel_path("asynccopy.cu")), str(kernel_path("mathfuncs.cu"))],
                                             compile=True).to_dict()["kernels"]}
    lane0 = [b for b in kernels["stage_sync"]["branches"] if b["divergent"]]
    assert lane0 and all(b["predicated"] for b in lane0)  # `if (threadIdx.x == 0) out[...] = ...`
    assert divergence_class(kernels["stage_sync"])[0] is False
    assert divergence_class(kernels["pow_square"])[0] is None  # powf's own branches
    assert divergence_class(kernels["square_mul"])[0] is False
