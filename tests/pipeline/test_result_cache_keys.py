"""What a stored analysis is keyed by (pipeline/result_deps.py): its stored dependency list, hashed once per
run, not a walk of its includes; a new file that an include would now open (shadowing the one read) is
a miss for the files that include it and nothing else; the summary view prints what the full one does."""

from __future__ import annotations

from pathlib import Path

import pytest

from _analyses import counting
from cudalens.pipeline import analyze
from cudalens.pipeline.result_cache import ResultCache

UNIT = """#include "common.cuh"
__global__ void %(name)s(float *y, const float *x) {
  int i = threadIdx.x;
  y[i * TILE] = x[i];
}
void run_%(name)s(float *y, float *x) { %(name)s<<<1, 128>>>(y, x); }
"""
ALONE = """__global__ void alone(float *y, const float *x) { y[threadIdx.x * 4] = x[threadIdx.x]; }
void run_alone(float *y, float *x) { alone<<<1, 128>>>(y, x); }
"""


def _tree(root: Path) -> list[str]:
    """src/a.cu and src/b.cu include "common.cuh", found in inc/ (an -I folder); src/c.cu includes nothing."""
    (root / "src").mkdir(parents=True)
    (root / "inc").mkdir()
    (root / "inc" / "common.cuh").write_text("#pragma once\n#define TILE 32\n")
    (root / "src" / "a.cu").write_text(UNIT % {"name": "first"})
    (root / "src" / "b.cu").write_text(UNIT % {"name": "second"})
    (root / "src" / "c.cu").write_text(ALONE)
    return [str(root / "src" / n) for n in ("a.cu", "b.cu", "c.cu")]


def _run(root: Path, files: list[str], cache: ResultCache | None, compile: bool = False):
    from cudalens.api.analysis import load_project_of
    from cudalens.project import build_context

    project = load_project_of([str(root / "src")], files)
    build = build_context(files, include_dirs=[str(root / "inc")], project=project, use_config=False)
    return analyze(files, compile=compile, build=build, jobs=1, keep_going=True, project=project, cache=cache)






def _lines(result) -> list[str]:
    from cudalens.report.quiet import summary_lines

    return summary_lines(result, show_all=True)


@pytest.mark.parametrize("compile", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_a_header_edit_or_a_new_shadowing_header_misses_exactly_its_includers(tmp_path, monkeypatch, compile,
                                                                            request):
    if compile:
        request.getfixturevalue("nvcc_toolchain")
    files = _tree(tmp_path)
    _run(tmp_path, files, ResultCache(tmp_path / "cache"), compile)
    seen = counting(monkeypatch)
    _run(tmp_path, files, cache := ResultCache(tmp_path / "cache"), compile)
    assert seen == [] and len(cache.hits) == 3

    # a header found through -I edited: its includers miss (its macros reach their source models)
    (tmp_path / "inc" / "common.cuh").write_text("#pragma once\n#define TILE 16\n")
    edited = _run(tmp_path, files, ResultCache(tmp_path / "cache"), compile)
    assert seen == ["a.cu", "b.cu"]
    assert _lines(edited) == _lines(_run(tmp_path, files, None, compile))

    # a new header beside the units, which a quoted include opens before the -I folder's
    seen.clear()
    (tmp_path / "src" / "common.cuh").write_text("#pragma once\n#define TILE 8\n")
    shadowed = _run(tmp_path, files, cache := ResultCache(tmp_path / "cache"), compile)
    assert seen == ["a.cu", "b.cu"] and cache.hits == [str(tmp_path / "src" / "c.cu")]
    assert _lines(shadowed) == _lines(_run(tmp_path, files, None, compile))


def test_the_summary_view_prints_what_the_full_view_does(tmp_path, monkeypatch):
    files = _tree(tmp_path)
    cold = _run(tmp_path, files, ResultCache(tmp_path / "cache"))
    warm = _run(tmp_path, files, cache := ResultCache(tmp_path / "cache", view="summary"))
    assert len(cache.hits) == 3 and _lines(warm) == _lines(cold)
    assert all(fa.kernels == () and fa.compiled is None for fa in warm.files)  # the summary view was read
    assert any(fa.kernels for fa in cold.files)

    # one file changed: the others are read in full (a header may be compiled through one of them)
    (tmp_path / "src" / "c.cu").write_text(ALONE.replace("* 4", "* 2"))
    again = _run(tmp_path, files, cache := ResultCache(tmp_path / "cache", view="summary"))
    assert len(cache.hits) == 2 and all(fa.kernels for fa in again.files)
    assert _lines(again) == _lines(_run(tmp_path, files, None))


def test_the_json_view_writes_the_document_the_full_view_does(tmp_path):
    """--format json reads the records already rendered (pipeline.result_cache.json_view): the document is
    the same, byte for byte, as the one rendered from the whole analysis."""
    from cudalens.api import check
    from cudalens.report.emit import emit

    files = _tree(tmp_path)

    def run(cache):
        return check(files, include_dirs=[str(tmp_path / "inc")], compile=False, use_config=False, jobs=1, cache=cache)

    plain = emit(run(None), "json")
    cold = emit(run(ResultCache(tmp_path / "cache")), "json")
    warm_report = run(cache := ResultCache(tmp_path / "cache", view="json"))
    assert len(cache.hits) == 3 and all(fa.kernels_json is not None and fa.kernels == () for fa in warm_report.files)
    assert any(fa.kernels_json for fa in warm_report.files)
    assert emit(warm_report, "json") == cold == plain
