"""Where a cold `check` spends its time beyond the compiler (check_speed.py --profile): each unit through
every stage in this process (compile, front end, source model, PTX parse, lane machine, rules), under
cProfile, with an empty compile cache; then the serializations `check` does (the per-file worker's
pickle, the JSON report), timed.

Self time (tottime) is summed by the module a function lives in, so the parts add up to the total;
"waiting for nvcc" is the time blocked on the compiler's processes. The compiled access model runs in
this process here (no second model process), so its parts are visible.
"""

from __future__ import annotations

import cProfile
import io
import json
import os
import pickle
import pstats
import tempfile
import time
from pathlib import Path

#: (part, substrings of a profiled function's file or name), first match wins
PARTS = (
    ("waiting for nvcc (subprocess)", ("subprocess.py", "method 'poll'", "waitpid", "select.poll", "method 'read' of '_io.FileIO'")),
    ("PTX parse", ("cudalens/compiled/ptx",)),
    ("lane machine (compiled access model)", ("cudalens/access/ptx_", "cudalens/evidence/compiled_access", "cudalens/evidence/model_workers")),
    ("numpy (mostly the lane machine)", ("numpy",)),
    ("parsing (tree-sitter front end)", ("tree_sitter", "cudalens/source/parse", "cudalens/source/syntax", "cudalens/source/declarations")),
    ("source model", ("cudalens/source/", "cudalens/access/", "cudalens/expressions")),
    ("rules", ("cudalens/rules/", "cudalens/triage/", "cudalens/pipeline/confirm", "cudalens/findings")),
    ("launch table", ("cudalens/project/",)),
    ("compile driver (cubin, SASS, cache)", ("cudalens/compiled/",)),
    ("pipeline (join, figures)", ("cudalens/pipeline/",)),
)


def _part(where: str) -> str:
    for name, keys in PARTS:
        if any(k in where for k in keys):
            return name
    return "other (interpreter, imports, regex, I/O)"


def profile_units(files: list[Path], includes: list[str], cc: str) -> dict:
    saved = os.environ.get("CUDALENS_CACHE_DIR")
    try:
        return _profile(files, includes, cc)
    finally:
        if saved is None:
            os.environ.pop("CUDALENS_CACHE_DIR", None)
        else:
            os.environ["CUDALENS_CACHE_DIR"] = saved


def _profile(files: list[Path], includes: list[str], cc: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="check-profile-") as tmp:
        os.environ["CUDALENS_CACHE_DIR"] = tmp  # cold: nothing compiled yet
        from cudalens.api.analysis import load_project_of
        from cudalens.cli._build import make_build
        from cudalens.pipeline.analysis import Analysis
        from cudalens.pipeline.batch import _launch_table
        from cudalens.pipeline.isolated import _Pickler
        from cudalens.pipeline.stages import analyze_file

        paths = [str(f) for f in files]
        project = load_project_of(paths, paths)
        build = make_build(paths, tuple(includes), (), None, True, False)
        prof = cProfile.Profile()
        t0 = time.perf_counter()
        prof.enable()
        table = _launch_table(paths, project, build)
        done = [analyze_file(p, cc=cc, compile=True, build=build, launches=table, worker=None) for p in paths]
        prof.disable()
        analysis_s = time.perf_counter() - t0
        t1 = time.perf_counter()
        for fa in done:
            _Pickler(io.BytesIO(), protocol=pickle.HIGHEST_PROTOCOL).dump(fa)
        pickle_s = time.perf_counter() - t1
        t2 = time.perf_counter()
        json.dumps(Analysis(tuple(done), cc).to_dict(), indent=2, default=str)
        json_s = time.perf_counter() - t2
    stats = pstats.Stats(prof)
    parts: dict[str, float] = {}
    for (filename, _line, name), (_cc, _nc, tottime, _ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        key = _part(f"{filename}:{name}")
        parts[key] = parts.get(key, 0.0) + tottime
    parts["serialization: pickle to the parent (per-file worker)"] = pickle_s
    parts["serialization: JSON report"] = json_s
    total = analysis_s + pickle_s + json_s
    return {"units": len(paths), "seconds_total": round(total, 2),
            "by_part_seconds": {k: round(v, 2) for k, v in sorted(parts.items(), key=lambda kv: -kv[1])},
            "by_part_share": {k: round(v / total, 3) for k, v in sorted(parts.items(), key=lambda kv: -kv[1])}}
