"""Were the pruned configurations really slower? Measure the ones the models pruned for spilling.

    python3 benchmarks/tune/spill_check.py OUTDIR

Same space, policy and database as run_tune.py, with keep_spills=True (a session of its own); the
strategy is replaced by an exhaustive pass over only the configurations the default run prunes for
spills, so the exhaustive baseline can be extended to every configuration that compiles.
"""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gemm_space as G

from cudalens.tune import (
    make_space,
    store,
)
from cudalens.tune.engine import TuneSpec, prepare, run_local
from cudalens.tune.runners import RunnerSpec, policy_dict
from cudalens.tune.strategies import Exhaustive


def main() -> None:
    out = sys.argv[1]
    db = os.environ.get("TUNE_DB", "/tmp/cudalens-tune.db")
    cache = os.environ.get("TUNE_CACHE", "/tmp/cudalens-tune-cache")
    space = make_space(G.VALUES, G.RESTRICTIONS, G.CONSTANTS)
    rspec = RunnerSpec("gpu", tuple(G.ARGS), "cold", policy_dict(G.POLICY), flops=G.FLOPS)
    runner = rspec.make(0)
    dev = runner.describe()
    base = TuneSpec(G.SOURCE, G.KERNEL, space, tuple(G.GRID), tuple(G.BLOCK), cc=dev["cc"], strategy="exhaustive",
                    sm_count=dev["sm_count"])
    default = prepare(base, rspec, dev["name"], db, cache_dir=cache)
    spilled = [k for k, v in default.verdicts.items() if v.pruned and (v.reason or "").startswith("spills")]
    kept = TuneSpec(**{**base.__dict__, "keep_spills": True})
    prep = prepare(kept, rspec, dev["name"], db, cache_dir=cache)
    prep.strategy = Exhaustive([prep.verdicts[k] for k in spilled])
    prep.reference = default.reference
    run_local(prep, rspec, db, runner=runner)
    runner.close()
    rows = store.results(db, prep.session_id)
    res = {k: {"status": rows[k].status, "median_s": rows[k].median_s, "ci_low_s": rows[k].ci_low_s,
               "ci_high_s": rows[k].ci_high_s, "pruned_because": default.verdicts[k].reason} for k in spilled if k in rows}
    with open(os.path.join(out, "cudalens_spill_check.json"), "w") as fh:
        json.dump({"device": dev, "spilled": res, "script": "benchmarks/tune/spill_check.py"}, fh, indent=1)
    best = min((v["median_s"], k) for k, v in res.items() if v["median_s"]) if res else None
    print(f"spill check: {len(res)} spilling configurations measured; fastest {best}", flush=True)


if __name__ == "__main__":
    main()
