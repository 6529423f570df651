"""The warp access model on the compiled code: per (kernel, source line, quantity) predictions from
the PTX of each instantiated kernel (cudalens.compiled.ptx), evaluated for the 32 lanes of every
warp of the chosen blocks (cudalens.access.ptx_run).

Quantities, per source line (the innermost ``.loc`` of the instructions, which is where Nsight
Compute attributes their SASS): ``global load``/``global store`` sectors per request, ``shared
load``/``shared store`` wavefronts per request (the measured rule of cudalens.access.memory),
and for each conditional branch the share of warp executions whose lanes split.

- **Templates and helpers** are evaluated as instantiated and inlined: the PTX has them so.
- **Parameters**: values the caller knows (launch site, ``--define``) are used. A scalar parameter
  nobody gives is tried at each of :data:`PLAUSIBLE`, and where one reaches an address also at the
  small and odd sizes of :data:`SMALL` (pointers are 256-byte aligned buffers);
  a quantity equal for all values is reported as that number, else as a range with its condition.
  Pointers are the parameters that base an address (:func:`cudalens.access.ptx_reach.pointer_params`).
  A line the base trial never reaches but other trials do gets the range over those trials, said as
  trials; where no trial reaches it, each parameter is tried at 0 with the others at a size too
  (``n - 1 - t`` is negative whenever ``n = t``).
- **Loaded values**: an address the same for all lanes of a warp yields a warp-uniform value. The
  kernel is run with three values for every load (:data:`SEEDS`: two synthetic values per address
  and zero-filled memory); a quantity that differs between them is reported as the range over them,
  with the load's line. An address or a branch built from values loaded per lane makes the
  quantities it reaches null, naming that load. Every null says which data it depends on, or
  plainly that it is not a data dependence (an instruction not modelled, a path not taken).
- **Loops** run for their real trip count up to ``loop_cap`` back-edge passes per entry while the
  first quarter of the step budget lasts, then 2, past half of it none (each body once; ptx_run),
  so the code after them is reached;
  the figure covers the iterations run, ``iteration_invariant`` says whether every execution gave
  the same. Where a loop cut at the cap has figures that vary by iteration, the run goes on with
  every loop whole from where it first cut one (ptx_run.run_forked: the same steps up to there).
- **Trials run together**: the parameter trials (and then the loaded-value seeds) are variants of
  one lane machine run (ptx_run.run_variants), each with its own copy of the blocks' lanes.
- **Compared with Nsight Compute**: shared lines also carry ``nway``, the figure as ncu's source
  page prints "L1 Conflicts Shared N-Way" (per instruction the whole part of its wavefronts per
  execution, averaged over the line); see cudalens.profile.ncu_source.

Facts are frozen; :func:`evaluate` is pure (numpy work only).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping, NamedTuple

from cudalens.access.ptx_control import control_and_sides, deciding, varying_cut_loop
from cudalens.access.ptx_exec import Launch
from cudalens.access.ptx_figures import QUANTITIES, KernelEvaluation, LinePrediction
from cudalens.access.ptx_merges import shared_merges
from cudalens.access.ptx_predicated import predicated_figures
from cudalens.access.ptx_reach import offset_trials, pointer_params, reached_in_trials, unreached_at_every_trial
from cudalens.access.ptx_run import Resume, run_forked
from cudalens.access.ptx_slice import loads_matter, slice_and_params
from cudalens.compiled.ptx import Function, PtxModule
from cudalens.quantities import BRANCH_DIVERGENT_SHARE

PLAUSIBLE = (256, 1000, 4096)
#: small and odd sizes real code passes as often (tried too for a parameter that reaches an address)
SMALL = (16, 17, 32, 33, 100)
#: trial seeds for loaded values: two synthetic values per address, then zero-filled memory
SEEDS = (1, 2, 0)
#: lanes (threads of the emulated blocks, over every trial) the blocks of an alignment period may take
LANE_BUDGET = 1 << 16
_SEED_NAMES = {0: "zero", 1: "synthetic 1", 2: "synthetic 2"}
#: a second run with every loop whole may take this many times the first run's steps
WHOLE_LOOPS_BUDGET = 3
BRANCH_QUANTITY = BRANCH_DIVERGENT_SHARE.name  # warp executions of the line's branches whose lanes split
def _line_groups(module: PtxModule, fn: Function, res) -> dict[tuple[str, int, str], list]:
    groups: dict[tuple[str, int, str], list] = {}
    for idx, rec in res.mem.items():
        q = QUANTITIES.get((rec.space, rec.op))
        ins = fn.instructions[idx]
        if q is None or ins.loc is None:
            continue
        groups.setdefault((module.files.get(ins.loc.file, ""), ins.loc.line, q), []).append(rec)
    return groups


def _taint_from_control(fn: Function, res, cd: dict[int, set[int]]) -> dict[int, tuple[int, str]]:
    out: dict[int, tuple[int, str]] = {}
    for bidx, br in res.branches.items():
        if br.taint < 1:
            continue
        line = fn.instructions[bidx].loc.line if fn.instructions[bidx].loc else 0
        for i in cd.get(bidx, ()):
            if i in res.mem and out.get(i, (0, ""))[0] < br.taint:
                out[i] = (br.taint, f"runs under a branch (line {line}) on a {br.why or 'loaded value'}")
    return out


def _site_bounds(module: PtxModule, fn: Function, recs: list, glob: bool) -> tuple[tuple, ...]:
    """Per call site of the line's instructions: (file, line, lowest, highest figure of one
    instruction, lowest, highest N-way of one instruction, lowest, highest sectors over ideal
    sectors of one instruction (global; None for shared)). ptxas may place some of an inlined
    helper's instructions at the call: whatever it placed there lies between these."""
    per: dict[tuple[str, int], list[tuple[float, float, float | None]]] = {}
    for r in recs:
        loc = fn.instructions[r.index].loc
        if not r.requests or loc is None:
            continue
        figs = [(r.sectors if glob else r.wavefronts) / n for n in {r.requests, r.requests + r.skipped}]
        ratio = r.sectors / r.ideal if glob and r.ideal else None
        for f, ln in loc.inlined_at:  # (over the predicated-off executions too, where ptxas may predicate it)
            per.setdefault((module.files.get(f, ""), ln), []).extend(
                (fig, float(int(fig + 1e-9)), ratio) for fig in figs)
    out = []
    for (f, ln), vs in sorted(per.items()):
        ratios = [v[2] for v in vs]
        known = None not in ratios
        out.append((f, ln, round(min(v[0] for v in vs), 4), round(max(v[0] for v in vs), 4),
                    None if glob else min(v[1] for v in vs), None if glob else max(v[1] for v in vs),
                    round(min(ratios), 4) if known else None, round(max(ratios), 4) if known else None))
    return tuple(out)


def _memory_lines(module: PtxModule, fn: Function) -> list[tuple[int, tuple[str, int, str]]]:
    """(instruction, its (file, line, quantity)) of every global or shared load and store with a line
    (worked out once per kernel: every trial's figures look for the ones it did not reach)."""
    out = []
    for ins in fn.instructions:
        if ins.loc is None or ins.base not in ("ld", "st", "ldu"):
            continue
        space = next((s for s in ("global", "shared") if s in ins.parts), None)
        q = QUANTITIES.get((space, "store" if ins.base == "st" else "load"))
        if q is not None:
            out.append((ins.index, (module.files.get(ins.loc.file, ""), ins.loc.line, q)))
    return out


def _values(module: PtxModule, fn: Function, res, cd, light: bool = False,
            lines: list[tuple[int, tuple[str, int, str]]] | None = None) -> dict[tuple[str, int, str], dict[str, Any]]:
    """Per (file, line, quantity): the figure of one run and what it depends on. ``light``: only
    ``value``, ``nway`` and ``ideal`` (all a trial other than the base one is compared on).
    ``lines``: :func:`_memory_lines` of ``fn``, when already worked out."""
    ctl = {} if light else _taint_from_control(fn, res, cd)
    out: dict[tuple[str, int, str], dict[str, Any]] = {}
    gates: dict[int, tuple[int, int, str]] = {}  # instruction -> the worst loaded-value branch deciding it
    for bidx, br in res.branches.items():
        if br.taint >= 1 and not light:
            for i in cd.get(bidx, ()):
                if i not in gates or (br.taint, bidx) > gates[i][:2]:
                    gates[i] = (br.taint, bidx, br.why)
    for index, key in _memory_lines(module, fn) if lines is None else lines:  # what no evaluated warp reached
        if index in res.mem:
            continue
        out[key] = {"value": None} if light else {"value": None, "reason": _unreached(fn, res, gates, index),
                                                   "taint": 0, "req": 0}
    for key, recs in _line_groups(module, fn, res).items():
        req = sum(r.requests for r in recs)
        taint, why = 0, ""
        for r in () if light else recs:  # (a light figure is compared on its numbers alone)
            for t, w in (ctl.get(r.index, (0, "")), (r.taint, r.why)):  # running under the branch first
                if t > taint:
                    taint, why = t, w
        glob = recs[0].space == "global"
        skipped = vskipped = None
        if not glob and any(r.skipped for r in recs):
            execs = sum(r.requests + r.skipped for r in recs)
            skipped = round(sum(int(r.wavefronts / (r.requests + r.skipped) + 1e-9) * (r.requests + r.skipped)
                                for r in recs) / execs, 4)
            vskipped = round(sum(r.wavefronts for r in recs) / execs, 4)
        if req == 0:
            out[key] = {"value": None, "reason": _unreached(fn, res, gates, recs[0].index), "taint": taint, "req": 0,
                        "nway_pred": skipped, "value_pred": vskipped}
            continue
        num = sum(r.sectors if glob else r.wavefronts for r in recs)
        ideal = sum(r.ideal if glob else r.ideal_wavefronts for r in recs)
        nway = None if glob else round(sum(int(r.wavefronts / r.requests + 1e-9) * r.requests for r in recs
                                            if r.requests) / req, 4)
        stride = _line_stride(recs) if glob else None
        if light:
            out[key] = {"value": round(num / req, 4), "nway": nway, "ideal": round(ideal / req, 4), "stride": stride,
                        "threads": round(sum(r.lanes for r in recs) / req, 3), "nway_pred": skipped,
                        "value_pred": vskipped}
            continue
        calls = [v for r in recs for v in r.per_call]
        sites = sorted({(module.files.get(f, ""), ln) for r in recs for f, ln in
                        (fn.instructions[r.index].loc.inlined_at if fn.instructions[r.index].loc else ())})
        out[key] = {"sites": tuple(sites), "bounds": _site_bounds(module, fn, recs, glob), "value": round(num / req, 4), "nway": nway, "ideal": round(ideal / req, 4), "taint": taint, "why": why,
                    "req": req, "n": len(recs), "threads": round(sum(r.lanes for r in recs) / req, 3),
                    "inv": len(set(calls)) <= 1 if calls else None, "width": max(r.width for r in recs),
                    "stride": stride, "bytes": sum(r.width for r in recs), "nway_pred": skipped, "value_pred": vskipped,
                    "iter": (min(calls), max(calls)) if calls and min(calls) != max(calls) else (None, None)}
    return out


def _unreached(fn: Function, res, gates: Mapping[int, tuple[int, int, str]], index: int) -> str:
    """Why no evaluated warp executed instruction ``index``: the loaded data of the branch that
    decides it, or plainly not a data dependence."""
    gate = gates.get(index)
    if gate is not None:
        bl = fn.instructions[gate[1]].loc
        return (f"data-dependent: not reached by the evaluated warps, under a branch (line "
                f"{bl.line if bl else 0}) on a {gate[2] or 'loaded value'}")
    return ("not a data dependence: not reached by the evaluated warps" + (
        " (the launch's threads never take this path)" if res.complete else
        f" (evaluation stopped after {res.steps} instruction steps)"))


def _line_stride(recs: list) -> int | None:
    """The one address distance (bytes) between neighbouring active lanes in every request of the
    line's instructions, or None (none, or more than one)."""
    bounds = {(r.stride_lo, r.stride_hi) for r in recs if r.requests}
    if len(bounds) != 1:
        return None
    lo, hi = bounds.pop()
    return lo if lo is not None and lo == hi else None


class _Facts(NamedTuple):
    """What :func:`evaluate` works out of the kernel's code alone (the same for every launch)."""

    merged: dict[int, int]
    pointers: set[int]
    cd: dict[int, set[int]]
    sides: dict[int, tuple[frozenset[int], frozenset[int]]]
    control: dict[int, tuple[int, ...]]
    dead: frozenset[int]
    needed: frozenset[str]
    at_address: frozenset[str]
    lines: list[tuple[int, tuple[str, int, str]]]

    @classmethod
    def of(cls, module: PtxModule, fn: Function, sass_lds: Mapping[Any, Mapping[int, int]] | None,
           sass_sts: Mapping[Any, Mapping[int, int]] | None) -> _Facts:
        merged = {**(shared_merges(fn, sass_lds, files=module.files) if sass_lds else {}),
                  **(shared_merges(fn, sass_sts, "st", files=module.files) if sass_sts else {})}
        cd, sides = control_and_sides(fn)
        return cls(merged, pointer_params(fn), cd, sides, deciding(fn, cd), *slice_and_params(fn),
                   _memory_lines(module, fn))


def evaluate(module: PtxModule, fn: Function, block: tuple[int, int, int], grid: tuple[int, int, int],
             params: Mapping[int, Any] | None = None, blocks: tuple[tuple[int, int, int], ...] | None = None,
             loop_cap: int = 8, max_steps: int = 6000,
             sass_lds: Mapping[Any, Mapping[int, int]] | None = None,
             sass_sts: Mapping[Any, Mapping[int, int]] | None = None, facts: _Facts | None = None) -> KernelEvaluation:
    """Predictions per (source line, quantity) for ``fn`` launched with ``block`` x ``grid``.

    ``params``: known parameter values by position (ints/floats; pointer parameters may be left
    out: they get distinct 256-byte aligned buffers). A scalar parameter left out is tried at
    each of :data:`PLAUSIBLE`. ``blocks``: the blocks to evaluate (default: 0 and 1 along x).
    ``sass_lds``/``sass_sts``: the widths of the kernel's SASS shared loads/stores per line (see
    :func:`shared_merges`), when the cubin is at hand. ``facts``: :class:`_Facts` of ``fn`` with
    those widths, when already worked out (an evaluation over more blocks).
    """
    facts = facts or _Facts.of(module, fn, sass_lds, sass_sts)
    merged, pointers, cd, sides, control, dead, needed, at_address, lines = facts
    params = dict(params or {})
    scalars = [k for k, p in enumerate(fn.params) if k not in params and k not in pointers]
    chosen = blocks is not None
    blocks = blocks or tuple(b for b in ((0, 0, 0), (1, 0, 0)) if b[0] < grid[0])
    tried = (PLAUSIBLE + SMALL if any(fn.params[k].name in at_address for k in scalars) else PLAUSIBLE) if scalars \
        else (None,)
    trials = [{**params, **{k: v for k in scalars}} for v in tried]

    forks: dict[str, Resume | None] = {}  # per batch of the first runs: where it first cut a loop

    def batch(seeds_values: list[tuple[int, dict]], has_base: bool, cap: int, whole: bool, budget: int) -> list:
        """Run the trials in one machine; with ``has_base`` the first is the base trial, whose
        figures are worked out in full (the others' light, and only for the runs kept: they are
        compared on figures only).
        With ``whole``, a batch the first runs had goes on from where that one first cut a loop
        (up to there the two took the same steps)."""
        variants = tuple((sd, {k: v for k, v in vals.items() if v is not None}) for sd, vals in seeds_values)
        key = repr(variants)
        fork = forks.get(key)
        results = fork.whole(cap, budget) if whole and fork is not None else None
        if results is None:
            results, forks[key] = run_forked(module, fn, Launch(grid, block, blocks, variants[0][1], variants[0][0],
                                                                cap, budget, merged, variants, dead, needed, control,
                                                                sides, whole), fork=not whole)
        return [(sd, vals, res, _values(module, fn, res, cd, False, lines) if has_base and k == 0 else None)
                for k, ((sd, vals), res) in enumerate(zip(seeds_values, results))]  # (light ones: once kept)

    def all_runs(cap: int, whole: bool = False, budget: int = max_steps) -> list:
        # every parameter trial in one run; where a loaded value may reach an address or a branch
        # (ptx_slice.loads_matter) the loaded-value seeds run with them, else they run only if needed
        runs = batch([(SEEDS[0], values) for values in trials] + [(seed, trials[0]) for seed in SEEDS[1:] if seeded],
                     True, cap, whole, budget)
        first = runs[0]
        uniform_loads = first[2].complete and (any(v.get("taint") == 1 for v in first[3].values())
                                               or any(b.taint == 1 for b in first[2].branches.values()))
        if seeded and not uniform_loads:
            runs = runs[:len(trials)]  # the seeds changed nothing the figures depend on
        elif not seeded and uniform_loads:
            runs += batch([(seed, trials[0]) for seed in SEEDS[1:]], False, cap, whole, budget)  # the other seeds
        return runs

    seeded = loads_matter(fn, needed)
    runs, mode = all_runs(loop_cap), (loop_cap, False, max_steps)
    whole_note = []
    if runs[0][2].steps <= max_steps // 4 and varying_cut_loop(fn, runs[0][2]):  # cut by the cap, not the budget
        # a loop cut at the cap whose figures vary by iteration: its first iterations do not stand for it.
        # Run again with every loop whole, within WHOLE_LOOPS_BUDGET times the first run's steps (and the
        # step budget), each batch going on from where its first run first cut a loop; kept when it completes
        whole_mode = (max_steps, True, min(max_steps, WHOLE_LOOPS_BUDGET * runs[0][2].steps))
        again = all_runs(*whole_mode)
        if again[0][2].complete:
            runs, mode = again, whole_mode
            whole_note = [f"loops whose figures vary by iteration run to their trip count ({again[0][2].steps} "
                          f"instruction steps)"]
    period = 1 if chosen else _alignment_period(runs)
    if period > len(blocks) and grid[0] > len(blocks):
        n = max(2, min(period, grid[0], LANE_BUDGET // (-(-block[0] * block[1] * block[2] // 32) * 32 * len(runs))))
        if n > len(blocks):
            wider = evaluate(module, fn, block, grid, params, tuple((b, 0, 0) for b in range(n)), loop_cap, max_steps,
                             sass_lds, sass_sts, facts)
            part = "" if n >= period else f" (the first {n}: a lane budget)"
            return replace(wider, notes=(*wider.notes, f"blocks 0..{n - 1} evaluated{part}: a global address moves by "
                                         f"a part of a 32-byte sector from one block to the next, so the sector "
                                         f"alignment repeats every {period} blocks"))

    def light(r: tuple) -> tuple:  # a run's light figures, worked out once it is kept
        return r if r[3] is not None else (*r[:3], _values(module, fn, r[2], cd, True, lines))

    runs = [light(r) for r in runs]
    base = runs[0]
    trial_runs, labels = ([r for r in runs if r[0] == SEEDS[0]], [str(t) for t in tried]) if scalars else ([], [])
    names = [fn.params[k].name.rsplit("_param_", 1)[-1] for k in scalars]
    if scalars and unreached_at_every_trial(base[3], trial_runs):  # parameters all at one value exclude every
        # thread there (n - 1 - t < 0): try each one at 0 too, the others at the base trial's size
        more = offset_trials(trials[0], scalars, names, PLAUSIBLE[:1])
        trial_runs += [light(r) for r in batch([(SEEDS[0], t) for t, _label in more], False, *mode)]
        labels += [label for _t, label in more]
    preds = [reached_in_trials(fn.name, key, v, trial_runs, labels, names,
                               lambda res: _values(module, fn, res, cd, False, lines))
             or _decide(fn, key, v, base, runs, scalars, tried) for key, v in sorted(base[3].items())]
    res = base[2]
    preds += _branch_predictions(module, fn, res, cd)
    preds += _indirect_predictions(module, fn, res, {(p.file, p.line, p.quantity) for p in preds})
    loops = tuple({"line": fn.instructions[i].loc.line if fn.instructions[i].loc else 0, "iterations": n,
                   "cut": i in res.truncated} for i, n in sorted(res.back_edges.items()))
    notes = whole_note
    if not res.complete:
        notes.append(f"stopped after {res.steps} instruction steps: figures cover the part executed")
    if res.unmodelled:
        notes.append("not modelled: " + ", ".join(f"{k} x{v}" for k, v in sorted(res.unmodelled.items())))
    if merged:
        notes.append(f"{sum(1 for w in merged.values() if w)} group(s) of shared accesses at the width ptxas merged "
                     "them to (SASS)")
    if res.calls:
        notes.append(f"{res.calls} call(s) to functions not inlined: their results are treated as per-lane data")
    return KernelEvaluation(fn.name, block, grid, len(blocks), tuple(preds), res.complete, tuple(notes), loops)


def _alignment_period(runs: list) -> int:
    """The number of consecutive blocks along x over which every global access's sector alignment
    repeats (ptx_exec.MemRecord.block_shift: an address that moves by 4 bytes a block comes back
    to the same alignment after 8 blocks), over every trial; 1 when no access moves so."""
    return max((32 // rec.block_shift for r in runs for rec in r[2].mem.values() if rec.space == "global"), default=1)


def _null_reason(why: str) -> str:
    """Why a figure is null: the data it depends on, or plainly that it is not a data dependence."""
    if "not modelled" in why or "does not follow" in why:
        return f"not a data dependence: {why}"
    return f"data-dependent: {why}"


def _decide(fn: Function, key: tuple[str, int, str], v: dict[str, Any], base, runs, scalars: list[int],
            tried: tuple = PLAUSIBLE) -> LinePrediction:
    """One (line, quantity): a number when every trial (loaded values, parameters nobody gave)
    gives the same figure, else a range with its condition; null with the data dependence named
    when lanes' addresses depend on values loaded per lane."""
    file, line, q = key
    names = [fn.params[k].name.rsplit("_param_", 1)[-1] for k in scalars]
    common = dict(kernel=fn.name, file=file, line=line, quantity=q, instructions=v.get("n", 0),
                  requests=v.get("req", 0), ideal=v.get("ideal"), threads_per_request=v.get("threads"),
                  iteration_invariant=v.get("inv"), width=v.get("width"), call_sites=v.get("sites", ()),
                  site_bounds=v.get("bounds", ()), lane_stride=v.get("stride"), bytes_per_lane=v.get("bytes"),
                  lane_strides=tuple(r[3].get(key, {}).get("stride") for r in runs if r[0] == SEEDS[0]),
                  trials=tuple((x.get("value"), x.get("ideal"), x.get("threads")) for x in
                               (r[3].get(key, {}) for r in runs if r[0] == SEEDS[0])) if scalars else (),
                  iter_low=v.get("iter", (None, None))[0], iter_high=v.get("iter", (None, None))[1])
    if v["value"] is None:  # no lane on in any evaluated warp: where ptxas predicated the line, ncu's N-way is
        # 0 over those executions, but only with every parameter known: trial values that exclude every thread
        # do not say that the program's warps have no lane on there
        pred = {} if scalars else {"nway_predicated": v.get("nway_pred"), "value_predicated": v.get("value_pred")}
        return LinePrediction(value=None, reason=v["reason"], **pred, **common)
    by_seed = {r[0]: r[3].get(key, {}) for r in runs if r[1] == base[1]}
    if v["taint"] >= 2 and v["why"].startswith("runs under a branch") and v.get("nway") is not None and by_seed:
        # a shared access whose lanes (not addresses) loaded data decide: its N-way from 0 (the data may
        # leave every lane off, and ncu counts those executions where ptxas predicates it) to the most
        # over the loaded values tried
        lo = [0.0]
        hi = [x["nway"] for x in by_seed.values() if x.get("nway") is not None]
        vals = [x["value"] for x in by_seed.values() if x.get("value") is not None]
        return LinePrediction(value=None, low=min(vals), high=max(vals), nway_low=min(lo), nway_high=max(hi),
                              condition="N-way from 0 (the loaded values may leave every lane off) to the most over "
                                        "the loaded values tried", reason=f"data-dependent: a range, as it {v['why']}", **common)
    if v["taint"] >= 2:
        return LinePrediction(value=None, reason=_null_reason(v["why"]), **common)
    figs = [(x.get("value"), x.get("nway")) for x in by_seed.values() if x.get("value") is not None]
    if len(set(figs)) > 1:
        why = v["why"] or "values loaded from memory (through the loop trip counts or lanes they decide)"
        trial = "; ".join(f"{_SEED_NAMES.get(sd, sd)}: {x.get('value')}" for sd, x in by_seed.items())
        ways = [w for x in by_seed.values() for w in (x.get("nway"), x.get("nway_pred")) if w is not None]
        if len({x.get("ideal") for x in by_seed.values()}) > 1:
            common["ideal"] = None  # the ideal varies too: no range of sectors over ideal
        return LinePrediction(value=None, low=min(f[0] for f in figs), high=max(f[0] for f in figs),
                              nway_low=min(ways, default=None), nway_high=max(ways, default=None),
                              condition=f"range over the loaded values ({trial})",
                              reason=f"data-dependent: a range, with {why}", **common)
    by_value = {tuple(sorted((k, r[1][k]) for k in scalars)): r[3].get(key, {}) for r in runs if r[0] == SEEDS[0]}
    differ = len({(x.get("value"), x.get("nway")) for x in by_value.values()}) > 1
    fewer = [kv for kv, x in by_value.items() if differ and _fewer_lanes(x, v)]
    vals = [(x["value"], x.get("nway")) for kv, x in by_value.items() if x.get("value") is not None and kv not in fewer]
    if len(set(vals)) <= 1:
        same = [t for t in tried if all(dict(kv).get(scalars[0]) != t for kv in fewer)] if scalars else []
        cond = (f"the same for {', '.join('param ' + n for n in names)} = {', '.join(map(str, same))}"
                if scalars else "")
        if fewer:
            cond += (f"; at {', '.join(str(dict(kv)[scalars[0]]) for kv in fewer)} fewer lanes are active, with the "
                     f"same sectors (wavefronts) over ideal or per lane")
        return LinePrediction(value=v["value"], nway=v.get("nway"), condition=cond, **predicated_figures(v, by_value), **common)
    cond = "; ".join(f"{dict((names[scalars.index(k)], x) for k, x in kv)}: {val.get('value')}"
                     for kv, val in by_value.items())
    ways = [f[1] for f in vals if f[1] is not None]
    return LinePrediction(value=None, low=min(f[0] for f in vals), high=max(f[0] for f in vals),
                          nway_low=min(ways, default=None), nway_high=max(ways, default=None), condition=cond,
                          reason="varies with parameters nobody gave", **common)


def _fewer_lanes(x: Mapping[str, Any], base: Mapping[str, Any]) -> bool:
    """Whether a parameter trial's figure differs from the base trial's only because fewer lanes
    are active (a bounds guard cut them): fewer threads per request, and the same figure over ideal
    or per active lane (a strided access: one sector per lane however many)."""
    if x.get("value") is None or not x.get("ideal") or not base.get("ideal") or x.get("threads") is None:
        return False
    if base.get("threads") is None or x["threads"] >= base["threads"] or (x["value"], x.get("nway")) == (
            base["value"], base.get("nway")):
        return False
    return (abs(x["value"] / x["ideal"] - base["value"] / base["ideal"]) < 1e-6
            or abs(x["value"] / x["threads"] - base["value"] / base["threads"]) < 1e-6)


def _branch_predictions(module: PtxModule, fn: Function, res, cd) -> list[LinePrediction]:
    """Per line with conditional branches that survive in the PTX: the share of warp executions
    whose active lanes split (divergence, D1); null when the condition uses data loaded per lane."""
    groups: dict[tuple[str, int], list] = {}
    for idx, br in res.branches.items():
        ins = fn.instructions[idx]
        if ins.loc is not None:
            groups.setdefault((module.files.get(ins.loc.file, ""), ins.loc.line), []).append(br)
    out = []
    for (file, line), brs in sorted(groups.items()):
        req = sum(b.requests for b in brs)
        worst = max(brs, key=lambda b: b.taint)
        common = dict(kernel=fn.name, file=file, line=line, quantity=BRANCH_QUANTITY, instructions=len(brs), requests=req)
        if worst.taint >= 2:
            out.append(LinePrediction(value=None, reason=_null_reason(worst.why), **common))
        elif req:
            out.append(LinePrediction(value=round(sum(b.divergent for b in brs) / req, 4), **common))
    return out


def _indirect_predictions(module: PtxModule, fn: Function, res, known: set) -> list[LinePrediction]:
    """Null figures, naming the data, for the memory lines of the functions a kernel may reach through
    a pointer (a virtual call: the target is loaded from the object's table): the module's
    functions the kernel does not call by name. Generic accesses count as global and as shared
    (Nsight Compute attributes them by the address they reach)."""
    if not res.indirect:
        return []
    why = "; ".join(res.indirect)
    direct = {t for ins in fn.instructions if ins.base == "call" for t in ins.operands}
    out: list[LinePrediction] = []
    for f in module.functions:
        if f.is_entry or f.name in direct:
            continue
        for ins in f.instructions:
            if ins.base not in ("ld", "ldu", "st") or ins.loc is None or "param" in ins.parts or "local" in ins.parts:
                continue
            op = "store" if ins.base == "st" else "load"
            spaces = [s for s in ("global", "shared") if s in ins.parts] or ["global", "shared"]
            for space in spaces:
                key = (module.files.get(ins.loc.file, ""), ins.loc.line, QUANTITIES[(space, op)])
                if key not in known:
                    known.add(key)
                    out.append(LinePrediction(kernel=fn.name, file=key[0], line=key[1], quantity=key[2], value=None,
                                              reason=f"data-dependent: in a function the kernel reaches through a "
                                                     f"pointer (a virtual or indirect call) whose target is a {why}"))
    return out
