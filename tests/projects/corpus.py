"""The labelled project corpus: load each project's expect.toml, run `cudalens check .` in it, and judge
the JSON against the labels.

Used by test_projects.py and by benchmarks/realworld/realworld_projects.py. expect.toml, per project:

    pattern = "..."            what the project reproduces and where such code is found publicly
    layout  = ["included-cu", ...]   the layouts it exercises

    [[kernel]]                 every kernel of the project
    name, file                 the kernel as declared, and the file that defines it
    first = ["G3", "SH3"]      the expert's first fix (rules naming it); [] when nothing needs fixing
    launch = { origin = "launch", site = "main.cu:16", site_at = "k<<<", block = [16, 16, 1], ... }
                               what the JSON `launch` object of the kernel must say; keys other than
                               site_at are compared (site as path:line, block/grid as [x, y, z])

    [[expect]]                 a finding that must be reported (any priority)
    rule = "G3|SH3"            alternatives: one of them must fire
    kernel, file, line, at     kernel "" for host code; `at` is text on that line (checked)

    [[figure]]                 a figure the kernel's access at that line must carry, the value taken
    kernel, file, line, at, array, op, sectors_per_request = 16, lane_stride = 4, ...   from the launch
                               (array: the pointer parameter the access goes through; every record of
                               that access must carry the value)

    [[tolerate]]  rule, kernel, why    true but minor: may fire at any priority
    [[forbid]]    rule, kernel, why    must not fire at any priority (with priority = "medium": not at
                                       medium or above)

Anything else reported at medium priority or above is a failure, and so is the same finding twice (in
one file or in two: a kernel's finding repeated for every file that includes its header).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import tomllib

HERE = Path(__file__).resolve().parent
MEDIUM_OR_ABOVE = frozenset({"high", "medium"})
#: the realworld set's hygiene rules: judged only for host entries (tests/realworld/evaluate.py)
HYGIENE = frozenset({"E6", "E10", "I16", "I17", "Y1", "Y2", "Y3"})
FIGURE_KEYS = ("sectors_per_request", "ideal_sectors_per_request", "lane_stride", "bank_conflict_ways",
               "wavefronts_per_request", "bytes_per_thread")


def projects() -> list[Path]:
    return sorted(p for p in HERE.iterdir() if (p / "expect.toml").is_file())


def load(project: Path) -> dict:
    with open(project / "expect.toml", "rb") as fh:
        return tomllib.load(fh)


def run_check(project: Path, timeout: float = 900) -> dict:
    """`cudalens check . --format json` in the project folder, no other flag; the parsed JSON."""
    proc = subprocess.run([sys.executable, "-m", "cudalens", "check", ".", "--format", "json"], cwd=project,
                          capture_output=True, text=True, timeout=timeout, env=os.environ.copy())
    if proc.returncode not in (0, 1) or not proc.stdout.strip():
        raise AssertionError(f"{project.name}: cudalens check exited {proc.returncode}: {proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout)


def base_name(name: str | None) -> str:
    """`ns::gemm<128, 8>` -> `gemm`; None (host code) -> ``""``."""
    if not name:
        return ""
    return name.split("<", 1)[0].split("(", 1)[0].rsplit("::", 1)[-1].strip()


def norm(path: str | None) -> str:
    return os.path.normpath(path).replace(os.sep, "/") if path else ""


def same_file(actual: str | None, expected: str, project: Path | None = None) -> bool:
    """The reported path names the expected project file (relative to the project, or absolute)."""
    a, e = norm(actual), norm(expected)
    if not a:
        return False
    if project is not None and os.path.isabs(a):
        try:
            a = norm(os.path.relpath(a, project.resolve()))
        except ValueError:
            return False
    return a == e or a.endswith("/" + e)


def same_site(actual: str | None, expected: str, project: Path) -> bool:
    """``file:line`` of a launch; a bare file name is accepted when the expected file has that name."""
    if not actual or ":" not in actual:
        return False
    a_file, _, a_line = actual.rpartition(":")
    e_file, _, e_line = expected.rpartition(":")
    if a_line != e_line:
        return False
    return same_file(a_file, e_file, project) or ("/" not in norm(a_file) and norm(a_file) == Path(e_file).name)


def _value_equal(actual, expected) -> bool:
    if isinstance(expected, list):
        return isinstance(actual, list) and len(actual) == len(expected) and all(
            _value_equal(a, e) for a, e in zip(actual, expected, strict=True))
    if isinstance(expected, (int, float)) and not isinstance(expected, bool):
        return isinstance(actual, (int, float)) and not isinstance(actual, bool) and abs(actual - expected) <= 1e-3
    return actual == expected


def _launches(record: dict) -> list[dict]:
    launch = record.get("launch")
    if isinstance(launch, dict):
        return [launch]
    if isinstance(launch, list):
        return [x for x in launch if isinstance(x, dict)]
    return []


def _launch_matches(launch: dict, wanted: dict, project: Path) -> bool:
    for key, value in wanted.items():
        if key == "site_at":
            continue
        if key == "site":
            if not same_site(launch.get("site"), value, project):
                return False
        elif not _value_equal(launch.get(key), value):
            return False
    return True


def _rules(entry: dict) -> set[str]:
    return set(entry["rule"].split("|"))


@dataclass
class Verdict:
    """Every way a project's report can disagree with its labels (empty lists: it agrees)."""

    project: str
    missing_kernels: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)
    figures: list[str] = field(default_factory=list)
    launches: list[str] = field(default_factory=list)
    forbidden: list[str] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)

    def problems(self) -> list[str]:
        return [*self.missing_kernels, *self.missed, *self.figures, *self.launches, *self.forbidden,
                *self.unexpected, *self.duplicates]


def _finding_key(f: dict) -> str:
    return f"{f['rule']} {base_name(f.get('kernel')) or 'host'} {norm(f.get('file'))}:{f.get('line')}"


def judge(project: Path, labels: dict, report: dict) -> Verdict:
    v = Verdict(project.name)
    findings = report.get("findings", [])
    records = report.get("kernels", [])

    def kernel_records(name: str, file: str) -> list[dict]:
        return [r for r in records if base_name(r.get("name")) == name and same_file(r.get("file"), file, project)]

    def matches(f: dict, e: dict) -> bool:
        return (f["rule"] in _rules(e) and base_name(f.get("kernel")) == e["kernel"]
                and same_file(f.get("file"), e["file"], project) and f.get("line") == e["line"])

    for k in labels.get("kernel", []):
        recs = kernel_records(k["name"], k["file"])
        if not recs:
            v.missing_kernels.append(f"kernel {k['name']} ({k['file']}) not in the report")
            continue
        wanted = k.get("launch")
        if wanted and not any(_launch_matches(lc, wanted, project) for r in recs for lc in _launches(r)):
            got = [lc for r in recs for lc in _launches(r)] or None
            v.launches.append(f"{k['name']}: launch {wanted} expected, got {got}")
    for e in labels.get("expect", []):
        if not any(matches(f, e) for f in findings):
            near = [_finding_key(f) for f in findings if base_name(f.get("kernel")) == e["kernel"]
                    and f.get("priority") != "info"]
            v.missed.append(f"{e['rule']} {e['kernel'] or 'host'} {e['file']}:{e['line']} not reported (got {near})")
    for fig in labels.get("figure", []):
        accesses = [a for r in kernel_records(fig["kernel"], _kernel_file(labels, fig["kernel"]))
                    for a in r.get("accesses", []) if a.get("line") == fig["line"]
                    and (not a.get("file") or same_file(a.get("file"), fig["file"], project))
                    and a.get("array") == fig.get("array", a.get("array")) and a.get("op") == fig.get("op", a.get("op"))]
        where = f"{fig['kernel']} {fig.get('array')} {fig.get('op')} {fig['file']}:{fig['line']}"
        if not accesses:
            v.figures.append(f"{where}: no such access in the report")
            continue
        for key in FIGURE_KEYS:
            if key in fig:
                got = [a.get(key) for a in accesses]
                if not all(_value_equal(g, fig[key]) for g in got):
                    v.figures.append(f"{where}: {key} {fig[key]} expected, got {got}")
    forbidden = {(t["rule"], t["kernel"]): t.get("priority") for t in labels.get("forbid", [])}
    tolerated = {(t["rule"], t["kernel"]) for t in labels.get("tolerate", [])}
    for f in findings:
        key = (f["rule"], base_name(f.get("kernel")))
        if key in forbidden and (forbidden[key] is None or f.get("priority") in MEDIUM_OR_ABOVE):
            v.forbidden.append(f"forbidden {_finding_key(f)} [{f.get('priority')}]: {f.get('message')}")
        elif (f.get("priority") in MEDIUM_OR_ABOVE and key not in tolerated
              and not any(matches(f, e) for e in labels.get("expect", []))):
            v.unexpected.append(f"unexpected {_finding_key(f)} [{f.get('priority')}]: {f.get('message')}")
    seen: set[tuple] = set()
    for f in findings:
        if f.get("priority") not in MEDIUM_OR_ABOVE:
            continue
        # the file is left out: a kernel's finding repeated for each file that includes it is a duplicate
        key = (f["rule"], base_name(f.get("kernel")), f.get("line"), f.get("message"))
        if key in seen:
            v.duplicates.append(f"reported twice: {_finding_key(f)}: {f.get('message')}")
        seen.add(key)
    return v


def _kernel_file(labels: dict, kernel: str) -> str:
    for k in labels.get("kernel", []):
        if k["name"] == kernel:
            return k["file"]
    raise KeyError(f"figure names kernel {kernel!r}, which has no [[kernel]] entry")


@dataclass
class Score:
    """Counts in the realworld evaluator's terms (tests/realworld/evaluate.py): per kernel, hygiene and
    advisory findings dropped; host entries (kernel "") take every finding with no kernel."""

    true_pos: int = 0
    false_pos: int = 0
    expected: int = 0
    found: int = 0
    kernels: int = 0
    first_ok: int = 0
    misses: list[str] = field(default_factory=list)
    false_alarms: list[str] = field(default_factory=list)
    wrong_first: list[str] = field(default_factory=list)


def score(project: Path, labels: dict, report: dict, into: Score) -> Score:
    findings = report.get("findings", [])
    expects = labels.get("expect", [])
    names = [k["name"] for k in labels.get("kernel", [])]
    if any(e["kernel"] == "" for e in expects):
        names.append("")
    tolerated = {(t["rule"], t["kernel"]) for t in labels.get("tolerate", [])}
    # a rule forbidden only at medium or above is tolerated below it
    low_ok = {(t["rule"], t["kernel"]) for t in labels.get("forbid", []) if t.get("priority")}
    for name in names:
        if name:
            mine = [f for f in findings if base_name(f.get("kernel")) == name and f["rule"] not in HYGIENE
                    and not f.get("advisory")]
        else:
            mine = [f for f in findings if not f.get("kernel")]
        wanted = [e for e in expects if e["kernel"] == name]
        wanted_rules = {r for e in wanted for r in _rules(e)}
        for f in mine:
            if f["rule"] in wanted_rules:
                into.true_pos += 1
            elif (f["rule"], name) not in tolerated and not (
                    (f["rule"], name) in low_ok and f.get("priority") not in MEDIUM_OR_ABOVE):
                into.false_pos += 1
                into.false_alarms.append(f"{project.name}: {_finding_key(f)} [{f.get('priority')}]")
        rules = {f["rule"] for f in mine}
        for e in wanted:
            into.expected += 1
            if _rules(e) & rules:
                into.found += 1
            else:
                into.misses.append(f"{project.name}: {e['rule']} {name or 'host'} {e['file']}:{e['line']}")
        if name:
            first = next(k.get("first", []) for k in labels["kernel"] if k["name"] == name)
            judged = [f for f in mine if f["rule"] in wanted_rules or (
                (f["rule"], name) not in tolerated and not (
                    (f["rule"], name) in low_ok and f.get("priority") not in MEDIUM_OR_ABOVE))]
            top = judged[0]["rule"] if judged else None
            ok = (top in first) if first else top is None
            into.kernels += 1
            into.first_ok += ok
            if not ok:
                into.wrong_first.append(f"{project.name}: {name} top={top} first={first}")
    return into
