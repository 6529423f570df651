"""The outcome of a tuning session: the best configuration with its evidence, and how stable the
ranking is (would another run pick the same winner?).

Stability is read from the stored samples of the top ``k`` configurations: each one's median with
its confidence interval (from :mod:`cudalens.measure.stats`), whether the winner's interval is
separated from the runner-up's, and a bootstrap estimate of the probability that each of them is
the fastest (resample every configuration's kept samples with replacement, take the medians, count
how often each one is lowest; 2000 resamples, seeded).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from cudalens.tune import store
from cudalens.tune.engine import Prepared

BOOTSTRAP = 2000


def win_probability(samples: dict[str, list[float]], n: int = BOOTSTRAP, seed: int = 0) -> dict[str, float]:
    """P(each configuration has the lowest median) under resampling of its samples."""
    keys = [k for k, s in samples.items() if len(s) >= 2]
    if not keys:
        return {}
    rng = np.random.default_rng(seed)
    meds = np.empty((n, len(keys)))
    for j, k in enumerate(keys):
        s = np.asarray(samples[k])
        idx = rng.integers(0, len(s), size=(n, len(s)))
        meds[:, j] = np.median(s[idx], axis=1)
    wins = Counter(np.argmin(meds, axis=1).tolist())
    return {k: wins.get(j, 0) / n for j, k in enumerate(keys)}


def summarize_session(db: str | None, prep: Prepared, top: int = 5, wall_s: float | None = None) -> dict[str, Any]:
    rows = store.results(db, prep.session_id)
    counts = Counter(r.status for r in rows.values())
    prune_kinds = Counter((r.reason or "").split(":")[0] for r in rows.values() if r.status == "pruned")
    ok = sorted((r for r in rows.values() if r.status == "measured" and r.median_s is not None),
                key=lambda r: r.median_s)
    leaders = ok[:top]
    samples = store.kept_samples(db, [r.run_id for r in leaders if r.run_id is not None])
    by_key = {r.config_key: samples.get(r.run_id, []) for r in leaders if r.run_id is not None}
    probs = win_probability(by_key)
    ranking = []
    for i, r in enumerate(leaders):
        v = prep.verdicts.get(r.config_key)
        ranking.append({
            "rank": i + 1, "config": r.config_key, "median_s": r.median_s, "ci_low_s": r.ci_low_s,
            "ci_high_s": r.ci_high_s, "samples": len(by_key.get(r.config_key, [])),
            "p_fastest": probs.get(r.config_key), "run_id": r.run_id,
            "relative_to_best": r.median_s / leaders[0].median_s if leaders else None,
            "predicted_cost": v.predicted_cost if v else None, "model_facts": v.facts if v else {},
        })
    stability: dict[str, Any] = {}
    if len(leaders) >= 2:
        a, b = leaders[0], leaders[1]
        separated = a.ci_high_s is not None and b.ci_low_s is not None and a.ci_high_s < b.ci_low_s
        within = [r.config_key for r in leaders[1:] if r.ci_low_s is not None and a.ci_high_s is not None
                  and r.ci_low_s <= a.ci_high_s]
        stability = {"winner_separated_from_runner_up": separated, "within_winner_ci": within,
                     "p_winner_fastest": probs.get(a.config_key)}
    order = {k: i for i, k in enumerate(prep.strategy.history)}
    return {
        "session_id": prep.session_id, "resumed": prep.resumed, "strategy": prep.spec.strategy,
        "stop_reason": prep.strategy.stop_reason, "configurations": len(prep.configs),
        "space_before_restrictions": prep.spec.space.full_size,
        "compiled": sum(1 for f in prep.facts.values() if f.ok), "compile_seconds": round(prep.compile_seconds, 3),
        "pruned": counts.get("pruned", 0), "pruned_by_kind": dict(prune_kinds),
        "measured": counts.get("measured", 0) + counts.get("wrong", 0), "wrong_output": counts.get("wrong", 0),
        "failed": counts.get("failed", 0), "reference": prep.reference,
        "best": ranking[0] if ranking else None, "top": ranking, "stability": stability,
        "measurement_order": sorted(order, key=order.get)[:1000], "wall_seconds": wall_s,
        "statuses": {k: r.status for k, r in rows.items()},
        "pruned_examples": {k: r.reason for k, r in [(k, r) for k, r in rows.items() if r.status == "pruned"][:20]},
    }
