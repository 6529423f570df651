"""Parameters and trials of the compiled model (cudalens.access.ptx_eval): which parameters are
pointers (given buffers) rather than scalars to try, and the figure of a line that the base trial
of the parameters nobody gave never reaches but other trials do. Pure functions."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from cudalens.access.ptx_figures import LinePrediction
from cudalens.compiled.ptx import Function

#: the figure of a line reached only at some trials (not at the base one): the reason it carries
REACHED_AT_SOME_TRIALS = ("reached only at some trial values of the parameters no launch gives: the range over "
                          "those trials")
_UNREACHED = "not a data dependence: not reached by the evaluated warps (the launch's threads never take this path)"


def pointer_params(fn: Function) -> set[int]:
    """The parameters the kernel uses as pointers: converted to a global address (cvta), or the base
    of a load's or store's address, directly or with offsets added (``__stcs(out + i, v)`` puts the
    parameter plus an offset straight into a ``st.global.cs``, with no cvta). A 64-bit value added to
    an address that another parameter already bases (``in[skip + i]``), or scaled, divided or compared
    with anything but 0 (a ``size_t`` bound or stride), is a scalar. (One pass over the instructions.)"""
    position: dict[str, int] = {}
    for j, p in enumerate(fn.params):
        position.setdefault(p.name, j)
    loaded: dict[str, int] = {}
    addressed: set[str] = set()  # registers converted to a global address or the base of a load's or store's address
    scaled: set[str] = set()
    users: dict[str, list[str]] = {}  # operand -> the registers an add, sub, mov or cvta of it writes
    bases: list[str] = []
    for ins in fn.instructions:
        b, o = ins.base, ins.operands
        if b in ("ld", "st"):
            if "param" in ins.parts:
                if b == "ld" and len(o) == 2:
                    k = position.get(o[1].strip("[]").split("+")[0])
                    if k is not None and fn.params[k].size == 8 and not fn.params[k].is_array:
                        loaded[o[0]] = k
            else:
                base = (o[1] if b == "ld" else o[0]).strip("[]").split("+")[0]
                addressed.add(base)
                bases.append(base)
        elif b == "cvta" and len(o) == 2:
            addressed.add(o[1])
        if b in _SCALAR_USES or b == "setp" and "0" not in o[1:]:
            scaled.update(o[1:])
        if b in ("add", "sub", "mov", "cvta") and len(o) >= 2:
            for x in o[1:]:
                users.setdefault(x, []).append(o[0])
    out = {k for k, p in enumerate(fn.params) if p.is_array}
    out |= {k for r, k in loaded.items() if r in addressed}
    scalar = {k for r, k in loaded.items() if r in scaled}
    # per register, the 64-bit parameters it holds plus offsets of (the least fixpoint, by a work list)
    origin: dict[str, frozenset[int]] = {r: frozenset({k}) for r, k in loaded.items()}
    work = list(origin)
    while work:
        r = work.pop()
        got = origin[r]
        for d in users.get(r, ()):
            have = origin.get(d, frozenset())
            if not got <= have:
                origin[d] = have | got
                work.append(d)
    held = [origin.get(x, frozenset()) for x in bases]
    for h in held:
        if h & out:
            scalar |= h - out  # offsets added to a known pointer
    return out | {k for h in held if len(h) == 1 for k in h if k not in scalar}


#: operations a pointer never goes through in address arithmetic
_SCALAR_USES = frozenset({"mul", "mad", "shl", "shr", "div", "rem", "cvt", "min", "max"})


def unreached_at_every_trial(base: dict[tuple[str, int, str], dict[str, Any]], trial_runs: Sequence[Any]) -> bool:
    """Whether some memory line that the base run's threads never take (its run complete) no parameter
    trial reaches either."""
    return any(v.get("value") is None and v.get("reason") == _UNREACHED
               and all(r[3].get(key, {}).get("value") is None for r in trial_runs) for key, v in base.items())


def offset_trials(base: dict[int, Any], scalars: Sequence[int], names: Sequence[str],
                  sizes: Sequence[int]) -> list[tuple[dict, str]]:
    """Trials where one parameter nobody gave is 0 and the others are each of ``sizes`` in turn, with
    how each is said: the same value for every parameter makes ``n - 1 - t`` negative, and a bound or
    an offset such as ``t`` (a step of the host's loop) is 0 at the program's first launch."""
    return [({**base, **{j: v for j in scalars}, k: 0}, f"param {n} = 0 with the others = {v}")
            for k, n in zip(scalars, names) for v in sizes]


def reached_in_trials(kernel: str, key: tuple[str, int, str], v: dict[str, Any], trial_runs: Sequence[Any],
                      labels: Sequence[str], names: Sequence[str], full: Callable[[Any], dict]) -> LinePrediction | None:
    """A line no evaluated warp reaches under the base trial of the parameters nobody gave (a guard such
    as ``tx < BLOCK - 2 * iteration`` excludes every thread at 256) but some other trials reach: the
    range of its figure over those trials, naming the parameters and the values tried (never one trial's
    figure as a fact). ``trial_runs``: the runs of the parameter trials (each (seed, values, result,
    light figures)): every parameter at each tried value (ptx_eval's PLAUSIBLE and SMALL order), then
    any :func:`offset_trials`; ``labels``: how each trial is said ("256", "param 5 = 0 with the others
    = 256"); ``full``: the full figures of a run's result. None where no trial
    reaches the line, a reaching run stopped early, or a loaded value decides the figure (the
    loaded-value seeds ran at the base trial only)."""
    if v.get("value") is not None or v.get("reason") != _UNREACHED or not names:
        return None
    reach = [(t, r) for t, r in zip(labels, trial_runs) if r[3].get(key, {}).get("value") is not None]
    if not reach or not all(r[2].complete for _t, r in reach):
        return None
    first = full(reach[0][1][2]).get(key, {})
    if first.get("value") is None or first.get("taint", 0) >= 1:
        return None
    figs = [r[3][key] for _t, r in reach]
    vals = [f["value"] for f in figs]
    ways = [f["nway"] for f in figs if f.get("nway") is not None]
    ideals = {f.get("ideal") for f in figs}
    ratios = [f["value"] / f["ideal"] for f in figs if f.get("ideal")] if key[2].startswith("global") else []
    same = [t for t, _r in reach if t.isdigit()]  # every parameter at one value
    tried = [f"{', '.join('param ' + n for n in names)} = {', '.join(same)} tried"] if same else []
    groups: dict[str, list[str]] = {}  # "param 3 = 0 with the others" -> the others' values
    for t, _r in reach:
        if not t.isdigit():
            head, _eq, value = t.rpartition(" = ")
            groups.setdefault(head, []).append(value)
    tried += [f"{head} = {', '.join(values)} tried" for head, values in groups.items()]
    cond = (f"reached only with {'; '.join(tried)} (no thread reaches it with every parameter nobody gave at "
            f"{labels[0]}): " + "; ".join(f"{t}: {f['value']:g}" for (t, _r), f in zip(reach, figs)))
    return LinePrediction(kernel=kernel, file=key[0], line=key[1], quantity=key[2], value=None, low=min(vals),
                          high=max(vals), nway_low=min(ways, default=None), nway_high=max(ways, default=None),
                          condition=cond, reason=REACHED_AT_SOME_TRIALS, instructions=first.get("n", 0),
                          requests=first.get("req", 0), ideal=ideals.pop() if len(ideals) == 1 else None,
                          width=first.get("width"), call_sites=first.get("sites", ()),
                          bytes_per_lane=first.get("bytes"),
                          ratio_range=(round(min(ratios), 4), round(max(ratios), 4))
                          if len(ratios) == len(figs) else None,
                          trials=tuple((x.get("value"), x.get("ideal"), x.get("threads"))  # (PLAUSIBLE, SMALL)
                                       for x, t in ((r[3].get(key, {}), t) for r, t in zip(trial_runs, labels))
                                       if t.isdigit()))
