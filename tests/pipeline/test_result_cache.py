"""The result cache (pipeline/result_cache.py): the same findings with and without it, a one-file edit
re-analyses that file and its includers only, and a broken entry is a miss."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from _analyses import counting
from cudalens.pipeline import analyze, result_entry
from cudalens.pipeline.result_cache import ResultCache, clean, info
from cudalens.project.paths import collect_paths

ROOT = Path(__file__).resolve().parents[2]
PROJECTS = ROOT / "tests" / "projects"

HEADER = """#pragma once
#define TILE 32
template <int N>
__global__ void scale(float *x, float a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  x[i * N] *= a;
}
"""
UNIT = """#include "common.cuh"
__global__ void %(name)s(float *y, const float *x, int n) {
  int i = blockIdx.x * TILE + threadIdx.x;
  if (i < n) y[i] = x[2 * i];
}
void run_%(name)s(float *y, float *x, int n) {
  %(name)s<<<n / TILE, TILE>>>(y, x, n);
  scale<%(stride)d><<<n / 256, 256>>>(y, 2.0f);
}
"""
ALONE = """__global__ void alone(float *y, const float *x) {
  y[threadIdx.x * 4] = x[threadIdx.x];
}
void run_alone(float *y, float *x) { alone<<<1, 128>>>(y, x); }
"""




def _tree(root: Path) -> list[str]:
    root.mkdir(parents=True, exist_ok=True)
    (root / "common.cuh").write_text(HEADER)
    (root / "a.cu").write_text(UNIT % {"name": "first", "stride": 1})
    (root / "b.cu").write_text(UNIT % {"name": "second", "stride": 2})
    (root / "c.cu").write_text(ALONE)
    return [str(root / n) for n in ("a.cu", "b.cu", "c.cu", "common.cuh")]


def _project(files: list[str]):
    from cudalens.api.analysis import load_project_of
    from cudalens.project import build_context

    project = load_project_of([str(Path(files[0]).parent)], files)
    return project, build_context(files, project=project)




def _run(files: list[str], cache: ResultCache | None, compile: bool):
    project, build = _project(files)
    return analyze(files, compile=compile, build=build, jobs=2, keep_going=True, project=project, cache=cache)


def _findings(result) -> str:
    return json.dumps(result.to_dict(), sort_keys=True, default=str)


@pytest.mark.parametrize("compile", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_one_file_edit_reanalyses_that_file_and_its_includers(tmp_path, monkeypatch, compile, request):
    if compile:
        request.getfixturevalue("nvcc_toolchain")
    files = _tree(tmp_path / "src")
    cache = ResultCache(tmp_path / "cache")
    seen = counting(monkeypatch)
    cold = _run(files, cache, compile)
    assert sorted(seen) == ["a.cu", "b.cu", "c.cu", "common.cuh"] and cache.hits == []
    seen.clear()
    warm = _run(files, cache := ResultCache(tmp_path / "cache"), compile)
    assert seen == [] and sorted(cache.hits) == sorted(files)
    assert _findings(warm) == _findings(cold)

    header = tmp_path / "src" / "common.cuh"
    header.write_text(HEADER.replace("x[i * N] *= a;", "x[i * N + 1] *= a;"))
    seen.clear()
    edited = _run(files, cache := ResultCache(tmp_path / "cache"), compile)
    assert sorted(seen) == ["a.cu", "b.cu", "common.cuh"]  # the header and the units that include it
    assert [Path(p).name for p in cache.hits] == ["c.cu"]
    assert _findings(edited) == _findings(_run(files, None, compile))

    extra = "__global__ void extra(float *y) { y[threadIdx.x] = 0; }\n"  # a new kernel: only c.cu's key changes
    (tmp_path / "src" / "c.cu").write_text(ALONE.replace("threadIdx.x * 4", "threadIdx.x * 8") + extra)
    seen.clear()
    _run(files, cache := ResultCache(tmp_path / "cache"), compile)
    assert seen == ["c.cu"]


@pytest.mark.slow
@pytest.mark.parametrize("where", ["beside", "elsewhere in the repository"])
def test_a_failed_compile_is_kept_until_the_header_it_lacked_appears(tmp_path, monkeypatch, where, nvcc_toolchain):
    """A unit whose compile failed for a missing header is read from the cache while nothing changes,
    and compiled again (now with success) once the header appears where the compiler, or the retry
    through the repository's folders, finds it."""
    files = _tree(tmp_path / "src")
    (tmp_path / "src" / "c.cu").write_text('#include "not_installed_yet.h"\n' + ALONE)
    cold = _run(files, ResultCache(tmp_path / "cache"), True)
    seen = counting(monkeypatch)
    warm = _run(files, cache := ResultCache(tmp_path / "cache"), True)
    assert seen == [] and sorted(cache.hits) == sorted(files)  # the failure too is read from the cache
    assert _findings(warm) == _findings(cold)
    assert "not_installed_yet.h" in (next(fa for fa in warm.files if fa.model.path.endswith("c.cu")).compile_error or "")

    folder = tmp_path / "src" / ("." if where == "beside" else "third_party/inc")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "not_installed_yet.h").write_text("#pragma once\n#define INSTALLED 1\n")
    again = _run(files, cache := ResultCache(tmp_path / "cache"), True)
    assert seen == ["c.cu"] and [Path(p).name for p in cache.misses] == ["c.cu"]
    assert next(fa for fa in again.files if fa.model.path.endswith("c.cu")).compile_error is None


def _failed(tmp_path: Path, header: str, kind: str):
    """A source-only analysis of ``tmp_path/src/u.cu`` whose compile missed ``header``."""
    from types import SimpleNamespace

    from cudalens.pipeline.compile_failure import CompileFailure

    unit = tmp_path / "src" / "u.cu"
    unit.parent.mkdir(parents=True, exist_ok=True)
    unit.write_text(f"#include <{header}>\n" + ALONE)
    error = f"{unit}:1: error: {header}: No such file or directory"
    failure = CompileFailure(str(unit), error, "fix", str(unit), 1, header, kind)
    return SimpleNamespace(failure=failure, compile_error=error, compiled=None, model=SimpleNamespace(path=str(unit)))


def test_a_stored_failure_names_every_place_its_header_would_be_found(tmp_path):
    """Without a compiler: the probes of a failure (pipeline.failure_probes) are the places the header
    would be found (the unit's folder, the -I folders, the toolkit's, the system's), each absent when
    stored; one appearing, or (for a project header) a file of its name anywhere in the repository,
    makes the stored failure stale."""
    from types import SimpleNamespace

    from cudalens.pipeline.failure_probes import host_folders, probes, still_failing

    (tmp_path / "src" / "Makefile").parent.mkdir(parents=True)
    (tmp_path / "src" / "Makefile").write_text("all:\n")  # the repository's root: src
    inc, toolkit = tmp_path / "inc", tmp_path / "toolkit"
    (toolkit / "include").mkdir(parents=True)
    build = SimpleNamespace(search_dirs=lambda _p: (str(inc),))
    fa = _failed(tmp_path, "cusparse_v9.h", "library-header")
    got = probes(fa, [fa.model.path], build, [str(toolkit) + "/"], {})
    places = {str(tmp_path / "src" / "cusparse_v9.h"), str(inc / "cusparse_v9.h"),
              str(toolkit / "include" / "cusparse_v9.h"), *(f"{d}/cusparse_v9.h" for d in host_folders())}
    assert places <= set(got["absent"]) and "repository" not in got  # a library's header: not looked for in the repository
    assert still_failing(got, {})
    inc.mkdir()
    (inc / "cusparse_v9.h").write_text("")
    assert not still_failing(got, {})  # installed in an -I folder: compiled again
    (inc / "cusparse_v9.h").unlink()
    (toolkit / "include" / "cusparse_v9.h").write_text("")
    assert not still_failing(got, {})  # installed into the toolkit

    fa = _failed(tmp_path, "GL/freeglut_x.h", "include-folder")
    got = probes(fa, [fa.model.path], build, [], {})
    assert got["repository"] == [str((tmp_path / "src").resolve()), "freeglut_x.h"] and still_failing(got, {})
    (tmp_path / "src" / "deps" / "GL").mkdir(parents=True)
    (tmp_path / "src" / "deps" / "GL" / "freeglut_x.h").write_text("")
    assert not still_failing(got, {})  # the retry through the repository's folders would find it now
    assert not still_failing({**got, "absent": "not a list"}, {})  # a foreign manifest is a miss


def test_options_and_launches_are_part_of_the_key(tmp_path, monkeypatch):
    files = _tree(tmp_path / "src")
    cache = ResultCache(tmp_path / "cache")
    _run(files, cache, False)
    seen = counting(monkeypatch)
    project, build = _project(files)
    analyze(files, compile=False, build=build, project=project, block=(64, 1, 1), cache=ResultCache(tmp_path / "cache"))
    assert sorted(seen) == ["a.cu", "b.cu", "c.cu", "common.cuh"]  # --block changes every result
    seen.clear()
    # a launch of `alone` added in another file changes alone's launch context, and only c.cu's key
    (tmp_path / "src" / "d.cu").write_text("__global__ void alone(float *y, const float *x);\n"
                                           "void again(float *y, float *x) { alone<<<2, 64>>>(y, x); }\n")
    _run(files, ResultCache(tmp_path / "cache"), False)
    assert seen == ["c.cu"]


def test_a_broken_entry_is_a_miss_never_a_crash(tmp_path, monkeypatch):
    import hashlib
    import hmac

    files = _tree(tmp_path / "src")
    cold = _run(files, ResultCache(tmp_path / "cache"), False)
    stored = sorted((tmp_path / "cache").rglob("*.full"))
    assert len(stored) == len(files) and len(list((tmp_path / "cache").rglob("*.summary"))) == len(files)
    stored[0].write_bytes(stored[0].read_bytes()[:40])  # truncated
    stored[1].write_bytes(b"not a cache entry")  # another format
    body = (1).to_bytes(4, "big") + b"{" + b"payload"  # signed, but its manifest is no JSON
    stored[2].write_bytes(result_entry.FORMAT + hmac.new(result_entry.signing_key(), body, hashlib.sha256).digest()
                          + body)
    for table in (tmp_path / "cache" / "launches").rglob("*.launches"):
        table.write_bytes(b"\x00" * 10)  # a broken launch table: computed again
    seen = counting(monkeypatch)
    again = _run(files, cache := ResultCache(tmp_path / "cache"), False)
    assert len(seen) == 3 and len(cache.misses) == len(seen)
    assert _findings(again) == _findings(cold)


def test_findings_identical_with_and_without_the_cache_on_the_examples(tmp_path):
    files = collect_paths([str(ROOT / "examples")])
    plain = _findings(_run(files, None, False))
    assert _findings(_run(files, ResultCache(tmp_path / "c"), False)) == plain  # cold: computed and stored
    cache = ResultCache(tmp_path / "c")
    assert _findings(_run(files, cache, False)) == plain and sorted(cache.hits) == sorted(files)


def _check(project: Path, env: dict[str, str], *extra: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "cudalens", "check", ".", "--format", "json", *extra], cwd=project,
                          capture_output=True, text=True, timeout=900, env=env)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    return proc.stdout


@pytest.mark.slow
@pytest.mark.parametrize("name", ["02_included_kernel_cu", "16_llmc_cuh_modules", "33_two_included_kernels"])
def test_check_identical_with_and_without_the_cache_on_projects(tmp_path, monkeypatch, name, nvcc_toolchain):
    project = tmp_path / name
    shutil.copytree(PROJECTS / name, project)
    import os

    env = {**os.environ, "CUDALENS_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("CUDALENS_NO_CACHE", None)
    plain = _check(project, env, "--no-cache")
    assert not (tmp_path / "cache" / "results").exists()  # --no-cache writes nothing
    cold = _check(project, env)
    assert info(tmp_path / "cache")["results_files"] >= 3  # three views per file
    warm = _check(project, env)
    assert plain == cold == warm


def test_cache_info_and_clean(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from cudalens.cli import cli

    monkeypatch.setenv("CUDALENS_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "cache" / "tune").mkdir(parents=True)
    (tmp_path / "cache" / "tune" / "keep.bin").write_bytes(b"x")  # another tenant of the folder
    _run(_tree(tmp_path / "src"), ResultCache(), False)
    out = CliRunner().invoke(cli, ["cache", "info"])
    assert out.exit_code == 0 and f"cache folder: {tmp_path / 'cache'}" in out.output
    assert "analyses: 17 files" in out.output  # 3 views and a seen mark of 4 files, the launch table
    out = CliRunner().invoke(cli, ["cache", "clean"])
    assert out.exit_code == 0 and "removed 17 files" in out.output
    assert info(tmp_path / "cache")["results_files"] == 0 and (tmp_path / "cache" / "tune" / "keep.bin").exists()
    assert clean(tmp_path / "nowhere") == 0


def test_an_entry_signed_with_another_key_is_never_unpickled(tmp_path, monkeypatch):
    """The entries are pickles: one that this user's key did not sign (another user's, or a cache a
    pull request could write) must be a miss without being unpickled."""
    import pickle

    files = _tree(tmp_path / "src")
    monkeypatch.setenv("CUDALENS_CACHE_KEY", "key of the first run")
    result_entry.signing_key.cache_clear()
    cold = _run(files, ResultCache(tmp_path / "cache"), False)
    seen = counting(monkeypatch)
    warm = _run(files, cache := ResultCache(tmp_path / "cache"), False)
    assert seen == [] and len(cache.hits) == len(files) and _findings(warm) == _findings(cold)

    monkeypatch.setenv("CUDALENS_CACHE_KEY", "another key")
    result_entry.signing_key.cache_clear()

    def refuse(*_a, **_k):
        raise AssertionError("an entry signed with another key was unpickled")

    monkeypatch.setattr(pickle, "loads", refuse)
    other = _run(files, cache := ResultCache(tmp_path / "cache"), False)
    assert cache.hits == [] and sorted(seen) == sorted(Path(f).name for f in files)
    assert _findings(other) == _findings(cold)
    result_entry.signing_key.cache_clear()


def test_the_signing_key_is_made_once_outside_the_cache_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("CUDALENS_CACHE_KEY", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    result_entry.signing_key.cache_clear()
    key = result_entry.signing_key()
    path = tmp_path / "config" / "cudalens" / "cache.key"
    assert len(key) == 32 and path.read_bytes() == key and (path.stat().st_mode & 0o777) == 0o600
    result_entry.signing_key.cache_clear()
    assert result_entry.signing_key() == key  # read back, not made again
    result_entry.signing_key.cache_clear()


def test_a_warm_run_where_every_file_hits_starts_no_worker(tmp_path, monkeypatch):
    """With the per-file limits `check` uses, an all-hit run reads the launch table and every analysis
    in this process: no worker is forked; one changed file is analysed in one worker."""
    import os

    from cudalens.pipeline import isolated
    from cudalens.pipeline.isolated import FileLimits

    files = _tree(tmp_path / "src")
    project, build = _project(files)

    def run():
        return analyze(files, compile=False, build=build, jobs=2, keep_going=True, project=project,
                       cache=ResultCache(tmp_path / "cache"), file_limits=FileLimits())

    cold = run()
    forks: list[int] = []
    real_fork = os.fork

    def counted_fork():
        forks.append(1)
        return real_fork()

    monkeypatch.setattr(isolated.os, "fork", counted_fork)
    warm = run()
    assert forks == [] and _findings(warm) == _findings(cold)
    (tmp_path / "src" / "c.cu").write_text(ALONE.replace("threadIdx.x * 4", "threadIdx.x * 2"))
    project, build = _project(files)
    run()
    assert len(forks) == 2  # the launch table (c.cu changed) and c.cu's analysis


def test_what_a_warm_check_reads_imports_no_model():
    """A warm check reads cached analyses: the modules it runs (the CLI, the API, the batch and its
    cache, the analysis records) import neither the models (numpy) nor the front end (tree-sitter)."""
    code = ("import sys, cudalens.cli.check, cudalens.api.analysis, cudalens.pipeline.run, "
            "cudalens.pipeline.result_cache, cudalens.pipeline.analysis, cudalens.pipeline.isolated\n"
            "from cudalens.pipeline import Analysis, FileAnalysis\n"
            "print(sorted(m for m in ('numpy', 'tree_sitter', 'cudalens.access.model', 'cudalens.pipeline.stages') "
            "if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert proc.stdout.strip() == "[]"


def test_include_path_variables_are_part_of_a_compiled_files_key(tmp_path, monkeypatch):
    """CPATH and its kin add include folders to every compile (a header found there fixes a failure
    without any file of the project changing): they are part of the key of a compiled file."""
    from cudalens.pipeline.result_cache import file_key

    unit = tmp_path / "u.cu"
    unit.write_text(ALONE)
    monkeypatch.delenv("CPATH", raising=False)
    plain = file_key(str(unit), options={}, build=None, table=None, compile=True)
    source_only = file_key(str(unit), options={}, build=None, table=None, compile=False)
    monkeypatch.setenv("CPATH", str(tmp_path / "inc"))
    assert file_key(str(unit), options={}, build=None, table=None, compile=True) != plain
    assert file_key(str(unit), options={}, build=None, table=None, compile=False) == source_only  # no compile: no effect
