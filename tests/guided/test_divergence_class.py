"""Divergence classification with the compiled facts: predicated branches and library branches."""

from _guided_synth import kernel

from cudalens.guided.crosscheck import divergence_class


def _kernel(branches, hidden=None):
    """A record of ``branches`` ({"line", "divergent", "predicated"}; no "predicated": not compiled)."""
    compiled = any("predicated" in b for b in branches) or hidden is not None
    return kernel("k", branches=branches, predicated=[b.get("predicated", False) for b in branches] if compiled
                  else None, unmodelled=list(hidden or ()) if compiled else None)


def test_a_divergent_condition_the_compiler_predicated_runs_no_branch():
    assert divergence_class(_kernel([{"line": 5, "divergent": True, "predicated": True}]))[0] is False
    assert divergence_class(_kernel([{"line": 5, "divergent": True, "predicated": False}]))[:2] == (True, 5)
    assert divergence_class(_kernel([{"line": 5, "divergent": True}]))[0] is True  # not compiled: as written


def test_branches_the_model_cannot_see_make_the_answer_unknown():
    cls, line, why = divergence_class(_kernel([{"line": 5, "divergent": False, "predicated": False}], hidden=[9]))
    assert (cls, line) == (None, 9) and "line(s) 9" in why
    # a modelled divergent branch settles it whatever else is there
    assert divergence_class(_kernel([{"line": 5, "divergent": True, "predicated": False}], hidden=[9]))[0] is True


def test_lab_kernels_compiled(nvcc_toolchain):
    from cudalens.labs.runner import kernel_path
    from cudalens.pipeline import analyze

    an = analyze([str(kernel_path("asynccopy.cu")), str(kernel_path("mathfuncs.cu"))], compile=True)
    kernels = {r.name: r for fa in an.files for r in fa.kernels}
    stage = kernels["stage_sync"]
    lane0 = [pred for b, pred in zip(stage.kernel.branches, stage.predicated or ()) if b.divergent]
    assert lane0 and all(lane0)  # `if (threadIdx.x == 0) out[...] = ...`: predicated
    assert divergence_class(kernels["stage_sync"])[0] is False
    assert divergence_class(kernels["pow_square"])[0] is None  # powf's own branches
    assert divergence_class(kernels["square_mul"])[0] is False
