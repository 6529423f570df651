"""The repository as a product (issue #28, build 6): benchmarks grouped and listed, results named by
device and date with a README per folder, no binary packages, README table cells short."""

from __future__ import annotations

import re
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
RESULTS = BENCH / "results"
#: what may sit at benchmarks/'s root besides the topic folders
BENCH_ROOT_FILES = {"README.md", "gpu_batch.sh"}
#: a session, call, batch or run number in a results path (the date says when; the README says which run)
RUN_MARKER = re.compile(r"(^|[_\-/.])(s\d+|session\d*|call\d+|batch\d+|run\d+|round\d+)($|[_\-/.])", re.IGNORECASE)
BINARY_PACKAGES = (".whl", ".egg", ".conda")
MAX_CELL = 200


def _scripts() -> list[Path]:
    return sorted(p for p in BENCH.rglob("*") if p.suffix in (".py", ".sh") and RESULTS not in p.parents)


def test_benchmarks_root_holds_only_folders_and_the_readme() -> None:
    loose = sorted(p.name for p in BENCH.iterdir() if p.is_file() and p.name not in BENCH_ROOT_FILES)
    assert not loose, f"group these scripts into a benchmarks/ sub-folder: {loose}"


def test_benchmarks_readme_names_every_script() -> None:
    readme = (BENCH / "README.md").read_text(encoding="utf-8")
    missing = [str(p.relative_to(BENCH)) for p in _scripts() if p.name not in readme]
    assert not missing, f"benchmarks/README.md does not name: {missing}"


def test_benchmarks_readme_paths_exist() -> None:
    readme = (BENCH / "README.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`((?:model|realworld|projects|check|measure|profile|tune|api)/[\w/]+\.(?:py|sh))", readme))
    assert named, "the README's table names no script by its path"
    gone = sorted(n for n in named if not (BENCH / n).is_file())
    assert not gone, f"benchmarks/README.md names scripts that do not exist: {gone}"


def test_every_results_folder_has_a_readme() -> None:
    folders = [RESULTS, *(p for p in RESULTS.rglob("*") if p.is_dir())]
    missing = [str(p.relative_to(ROOT)) for p in folders if not (p / "README.md").is_file()]
    assert not missing, f"results folders without a README: {missing}"


def test_results_paths_carry_no_run_markers() -> None:
    marked = [str(p.relative_to(RESULTS)) for p in RESULTS.rglob("*") if RUN_MARKER.search(str(p.relative_to(RESULTS)))]
    assert not marked, f"name these by date (and the README by run): {marked}"


@pytest.mark.parametrize("path", ["x/tests_s5/a.json", "bench/batch1_machine.txt", "profile/log_call1.txt"])
def test_the_run_marker_pattern_catches_the_old_names(path: str) -> None:
    assert RUN_MARKER.search(path)


@pytest.mark.parametrize("path", ["h100/tests/2026-11-23_0151/pytest.txt", "cpu/ptx_model_speed.json",
                                  "h100/measure/cuda_bench_scale_16M.json", "h100/labs/async-copy.png"])
def test_the_run_marker_pattern_passes_dated_names(path: str) -> None:
    assert not RUN_MARKER.search(path)


def _expand(text: str) -> list[str]:
    """``a_{x,y}.json`` -> ``a_x.json``, ``a_y.json``."""
    m = re.search(r"\{([^{}]*)\}", text)
    if not m:
        return [text]
    return [s for alt in m.group(1).split(",") for s in _expand(text[:m.start()] + alt + text[m.end():])]


def test_results_readmes_name_files_that_are_committed() -> None:
    """A results README quotes only committed files: every file name it gives in backquotes exists in the
    tree (or inside a committed tarball beside the results)."""
    names = {p.name for p in ROOT.rglob("*") if ".git" not in p.parts}
    for archive in RESULTS.rglob("*.tgz"):
        with tarfile.open(archive) as tar:
            names |= {Path(m).name for m in tar.getnames()}
    stale = []
    for readme in RESULTS.rglob("README.md"):
        text = readme.read_text(encoding="utf-8")
        for token in re.findall(r"`([^`\s]+\.(?:json|txt|csv|tgz|gz|png|html|sarif|tsv|md))`", text):
            stale += [f"{readme.relative_to(ROOT)}: {name}" for name in _expand(token)
                      if "<" not in name and "*" not in name and Path(name).name not in names]
    assert not stale, f"results READMEs name files that are not committed: {stale}"


def test_no_binary_packages_in_the_tree() -> None:
    found = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.suffix in BINARY_PACKAGES
             and not any(part.startswith(".") or part in ("build", "dist") for part in p.relative_to(ROOT).parts)]
    assert not found, f"binary packages in the tree: {found}"


def test_readme_table_cells_are_short() -> None:
    long_cells = []
    for number, line in enumerate((ROOT / "README.md").read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("|"):
            long_cells += [f"README.md:{number}: {len(c.strip())} characters" for c in line.strip("|").split("|")
                           if len(c.strip()) > MAX_CELL]
    assert not long_cells, f"move the detail into docs/ and link it: {long_cells}"
