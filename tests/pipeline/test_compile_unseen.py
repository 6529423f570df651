"""check -j N (N > 1) compiles the units no stored analysis can answer while the launch table is
resolved (pipeline.batch._compile_unseen): every unit without a cache or with an empty one, none of those
whose analysis was stored (ResultCache.seen, marked by result_fill.Filler), whatever launches they had."""

from __future__ import annotations

import pytest

from cudalens.pipeline import batch
from cudalens.pipeline.isolated import FileLimits
from cudalens.pipeline.result_cache import ResultCache, file_keys

KERNEL = "__global__ void k{n}(float *x) {{ x[threadIdx.x] = {n}; }}\n"


@pytest.fixture
def started(monkeypatch):
    got: list[list[str]] = []

    def start(units, cc, defines, build, wanted, jobs, limits):
        got.append(list(units))
        return "started"

    monkeypatch.setattr("cudalens.pipeline.compile_ahead.start_compiles", start)
    return got


def _units(tmp_path, n: int = 3) -> list[str]:
    out = []
    for i in range(n):
        f = tmp_path / f"u{i}.cu"
        f.write_text(KERNEL.format(n=i))
        out.append(str(f))
    return out


def _bare(paths):
    return file_keys(paths, block=None, defines={}, cc="9.0", compile=True, build=None, project=None, table=None,
                     instantiate={})


def _unseen(paths, cache, bare):
    return batch._compile_unseen(paths, cache, bare, None, None, "9.0", {}, {}, 2, FileLimits())


def test_every_unit_compiles_early_without_a_stored_analysis(tmp_path, started) -> None:
    paths = _units(tmp_path)
    assert _unseen(paths, None, {}) == "started" and started == [paths]  # no cache
    cache = ResultCache(tmp_path / "cache")
    assert _unseen(paths, cache, _bare(paths)) == "started" and started[-1] == paths  # an empty one


def test_a_unit_whose_analysis_was_stored_waits_for_the_table(tmp_path, started) -> None:
    paths = _units(tmp_path)
    cache, bare = ResultCache(tmp_path / "cache"), _bare(paths)
    cache.mark_seen(bare[paths[0]])
    assert cache.seen(bare[paths[0]]) and not cache.seen(bare[paths[1]])
    assert _unseen(paths, cache, bare) == "started" and started == [paths[1:]]
    cache.mark_seen(bare[paths[1]])  # one unit left: its worker compiles it beside its front end
    assert _unseen(paths, cache, bare) is None and len(started) == 1


def test_the_bare_key_leaves_out_the_launches_but_not_the_options(tmp_path) -> None:
    paths = _units(tmp_path, 1)
    other = file_keys(paths, block=(64, 1, 1), defines={}, cc="9.0", compile=True, build=None, project=None,
                      table=None, instantiate={})
    assert _bare(paths)[paths[0]] != other[paths[0]]
