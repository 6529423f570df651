"""Search strategies over the survivors, in an ask/tell form that a local loop and Ray both drive.

* :class:`Exhaustive`: every survivor, in the models' order (lowest predicted cost first).
* :class:`Guided`: the models' order, learning as it goes. It measures the ``n_initial`` best by
  predicted cost and as many spread over the rest of that order (the initial design), then repeatedly fits a ridge
  regression of log(time) on the configuration's features (log2 of each parameter and their
  pairwise products, log predicted cost, occupancy, wave efficiency, registers) and measures the
  configuration it predicts fastest. It stops early when ``patience`` measurements in a row after
  the initial design did not beat the best so far by more than ``min_gain`` (relative), or at ``budget`` measurements.
* :class:`OptunaTPE`: Optuna's TPE sampler (a maintained Bayesian-optimization library; the
  ``cudalens[tune]`` extra) over the same parameters; a suggestion outside the survivors is told to
  Optuna as a failed trial without measuring, a repeated suggestion gets the stored value. Same
  budget and patience rule.

Every strategy is deterministic given its seed and the values it is told, so a resumed run that
replays the stored measurements (``tell`` in their stored order) asks for the same next ones.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from cudalens.errors import InputError
from cudalens.tune.prune import Verdict
from cudalens.tune.space import Config

STRATEGIES = ("exhaustive", "guided", "optuna")


class Strategy:
    """ask(n) -> up to n config keys to measure next; tell(key, seconds or None); finished."""

    name = "base"

    def __init__(self, survivors: Sequence[Verdict]) -> None:
        self.order = [v.config_key for v in survivors]
        self.verdicts = {v.config_key: v for v in survivors}
        self.values: dict[str, float | None] = {}
        self.pending: set[str] = set()
        self.history: list[str] = []
        self.stop_reason: str | None = None
        self.retry: list[str] = []  # handed out, lost with a dead worker: asked again first
        self.open = False  # streaming: more survivors may still come (add_survivor)

    @property
    def finished(self) -> bool:
        return self.stop_reason is not None

    def tell(self, key: str, seconds: float | None) -> None:
        self.pending.discard(key)
        if key not in self.values:
            self.values[key] = seconds
            self.history.append(key)
        self._after_tell()

    def _after_tell(self) -> None:
        pass

    def add_survivor(self, verdict: Verdict) -> None:
        """Streaming compilation: one more configuration to measure (exhaustive order: as compiled)."""
        if verdict.config_key not in self.verdicts:
            self.order.append(verdict.config_key)
            self.verdicts[verdict.config_key] = verdict

    def tell_nothing(self) -> None:
        """Re-check the stopping rule (after the last survivor has been added)."""
        if not self.open and not self.unmeasured() and not self.pending and not self.retry and self.order:
            self.stop_reason = self.stop_reason or "every survivor measured"

    def requeue(self, key: str) -> None:
        """``key`` was handed out but its worker died before answering: hand it out again."""
        if key in self.pending and key not in self.values:
            self.pending.discard(key)
            self.retry.append(key)

    def ask(self, n: int = 1) -> list[str]:
        out = []
        while self.retry and len(out) < n:
            k = self.retry.pop(0)
            if k not in self.values:
                out.append(k)
        self.pending.update(out)
        if len(out) < n and not self.finished:
            out += self._ask(n - len(out))
        return out

    def _ask(self, n: int) -> list[str]:
        raise NotImplementedError

    def unmeasured(self) -> list[str]:
        return [k for k in self.order if k not in self.values and k not in self.pending and k not in self.retry]

    def best(self) -> tuple[str, float] | None:
        ok = [(v, k) for k, v in self.values.items() if v is not None]
        return (min(ok)[1], min(ok)[0]) if ok else None


class Exhaustive(Strategy):
    name = "exhaustive"

    def _ask(self, n: int = 1) -> list[str]:
        out = self.unmeasured()[:n]
        self.pending.update(out)
        if not out and not self.pending and not self.open:
            self.stop_reason = "every survivor measured"
        return out


class _Budgeted(Strategy):
    def __init__(self, survivors: Sequence[Verdict], budget: int, patience: int, min_gain: float) -> None:
        super().__init__(survivors)
        if budget < 1 or patience < 1:
            raise InputError("the budget and patience must be at least 1 measurement")
        self.budget, self.patience, self.min_gain = budget, patience, min_gain
        self.since_gain = 0
        self._best: float | None = None
        self.warmup = 0  # measurements before patience starts counting (the initial design)

    def _after_tell(self) -> None:
        key = self.history[-1] if self.history else None
        v = self.values.get(key) if key else None
        if v is not None and (self._best is None or v < self._best * (1 - self.min_gain)):
            self._best, self.since_gain = v, 0
        else:
            if len(self.history) > self.warmup:
                self.since_gain += 1
            if v is not None and self._best is not None and v < self._best:
                self._best = v  # better, but within min_gain: not a gain that resets patience
        if len(self.values) >= self.budget:
            self.stop_reason = f"budget of {self.budget} measurements used"
        elif self.since_gain >= self.patience:
            self.stop_reason = f"{self.patience} measurements in a row without a gain above {self.min_gain:.1%}"
        elif not self.unmeasured() and not self.pending and not self.retry:
            self.stop_reason = "every survivor measured"


def _features(keys: Sequence[str], verdicts: Mapping[str, Verdict]) -> np.ndarray:
    rows = []
    for k in keys:
        cfg = Config.from_key(k)
        logs = [math.log2(max(v, 1)) for _, v in cfg.items]
        pairs = [logs[i] * logs[j] for i in range(len(logs)) for j in range(i, len(logs))]
        f = verdicts[k].facts
        rows.append([*logs, *pairs, math.log(verdicts[k].predicted_cost or 1.0), f.get("occupancy", 0.0),
                     f.get("wave_efficiency", 1.0), f.get("registers", 0) / 64.0])
    return np.asarray(rows, dtype=float)


class Guided(_Budgeted):
    name = "guided"

    def __init__(self, survivors: Sequence[Verdict], budget: int, patience: int, min_gain: float = 0.01,
                 n_initial: int | None = None, ridge: float = 1.0) -> None:
        super().__init__(survivors, budget, patience, min_gain)
        n = len(self.order)
        self.n_initial = n_initial if n_initial is not None else max(4, min(n, n // 20 + 4))
        top = self.order[: (self.n_initial + 1) // 2]
        rest = self.order[len(top):]
        k = self.n_initial - len(top)
        spread = [rest[int(i * len(rest) / k)] for i in range(k)] if k > 0 and rest else []
        self.initial = list(dict.fromkeys(top + spread))
        self.warmup = len(self.initial)
        self.ridge = ridge
        self.X = _features(self.order, self.verdicts) if self.order else np.zeros((0, 1))
        self.index = {k: i for i, k in enumerate(self.order)}

    def _predict(self, keys: list[str]) -> np.ndarray:
        known = [k for k in self.history if self.values.get(k) is not None]
        if len(known) < 3:
            return np.array([self.index[k] for k in keys], dtype=float)
        X = self.X[[self.index[k] for k in known]]
        y = np.log([self.values[k] for k in known])
        mu, sd = X.mean(axis=0), X.std(axis=0)
        sd[sd == 0] = 1.0
        Z = (X - mu) / sd
        A = Z.T @ Z + self.ridge * np.eye(Z.shape[1])
        w = np.linalg.solve(A, Z.T @ (y - y.mean()))
        return ((self.X[[self.index[k] for k in keys]] - mu) / sd) @ w + y.mean()

    def _ask(self, n: int = 1) -> list[str]:
        if self.finished:
            return []
        out: list[str] = []
        for k in self.initial:
            if len(out) >= n:
                break
            if k not in self.values and k not in self.pending:
                out.append(k)
        room = min(n - len(out), self.budget - len(self.values) - len(self.pending) - len(out))
        if room > 0 and all(k in self.values or k in self.pending or k in out for k in self.initial):
            cand = [k for k in self.unmeasured() if k not in out]
            if cand:
                pred = self._predict(cand)
                out += [cand[i] for i in np.argsort(pred, kind="stable")[:room]]
        self.pending.update(out)
        if not out and not self.pending:
            self.stop_reason = self.stop_reason or "every survivor measured"
        return out


class OptunaTPE(_Budgeted):
    name = "optuna"

    def __init__(self, survivors: Sequence[Verdict], params: Mapping[str, Sequence[int]], budget: int, patience: int,
                 min_gain: float = 0.01, seed: int = 0) -> None:
        super().__init__(survivors, budget, patience, min_gain)
        try:
            import optuna
        except ImportError:
            raise InputError("strategy 'optuna' needs Optuna: pip install 'cudalens[tune]'") from None
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        self.optuna = optuna
        self.params = {k: list(v) for k, v in params.items()}
        self.dists = {k: optuna.distributions.CategoricalDistribution(v) for k, v in self.params.items()}
        self.warmup = max(5, min(10, budget // 5))
        sampler = optuna.samplers.TPESampler(seed=seed, n_startup_trials=self.warmup)
        self.study = optuna.create_study(direction="minimize", sampler=sampler)
        self.trials: dict[str, list[Any]] = {}
        self.alive = set(self.order)
        self.max_tries = 50 * max(1, len(self.params)) + 500

    def _key(self, params: Mapping[str, int]) -> str:
        return Config(tuple((k, int(params[k])) for k in self.params)).key

    def tell(self, key: str, seconds: float | None) -> None:
        for trial in self.trials.pop(key, []):
            if seconds is None:
                self.study.tell(trial, state=self.optuna.trial.TrialState.FAIL)
            else:
                self.study.tell(trial, seconds)
        if key not in self.values and key not in self.pending and seconds is not None:
            # a replayed value (resume): add it as a finished trial
            self.study.add_trial(self.optuna.trial.create_trial(
                params=dict(Config.from_key(key).items), distributions=self.dists, value=seconds))
        super().tell(key, seconds)

    def _ask(self, n: int = 1) -> list[str]:
        out: list[str] = []
        tries = 0
        while len(out) < n and not self.finished and tries < self.max_tries:
            if len(self.values) + len(self.pending) + len(out) >= self.budget:
                break
            if not [k for k in self.unmeasured() if k not in out]:
                break
            tries += 1
            trial = self.study.ask(self.dists)
            key = self._key(trial.params)
            if key not in self.alive:
                self.study.tell(trial, state=self.optuna.trial.TrialState.FAIL)
            elif key in self.values:
                v = self.values[key]
                self.study.tell(trial, v) if v is not None else self.study.tell(
                    trial, state=self.optuna.trial.TrialState.FAIL)
            elif key in self.pending or key in out:
                self.trials.setdefault(key, []).append(trial)
            else:
                self.trials.setdefault(key, []).append(trial)
                out.append(key)
        if not out and tries >= self.max_tries and not self.pending:
            left = [k for k in self.unmeasured() if k not in out]  # TPE keeps proposing measured points
            out = left[:n]
        self.pending.update(out)
        if not out and not self.pending and not self.finished:
            self.stop_reason = "every survivor measured" if not self.unmeasured() else "the sampler proposed nothing new"
        return out


def make_strategy(name: str, survivors: Sequence[Verdict], params: Mapping[str, Sequence[int]], total: int, *,
                  max_fraction: float = 0.5, patience: int | None = None, min_gain: float = 0.01,
                  seed: int = 0) -> Strategy:
    """``total``: configurations in the space (after restrictions); the budget is ``max_fraction`` of it."""
    if name not in STRATEGIES:
        raise InputError(f"--strategy {name!r}: choose from {', '.join(STRATEGIES)}")
    if name == "exhaustive":
        return Exhaustive(survivors)
    budget = max(1, min(len(survivors), int(max_fraction * total)))
    pat = patience or max(8, len(survivors) // 10)
    if name == "guided":
        return Guided(survivors, budget, pat, min_gain)
    return OptunaTPE(survivors, params, budget, pat, min_gain, seed)
