"""What the models say about one configuration before it runs: pruned (and why) or a predicted cost.

Pure functions of compiled facts (:class:`~cudalens.tune.build.BuildFacts`), the launch geometry and
the device's limits; nothing here launches anything.

Pruned, each with its reason:

* **compile**: the compiler rejected the configuration (e.g. more static shared memory than 48 KiB);
* **launch**: a block of more than 1024 threads or a grid dimension out of range, or the occupancy
  calculator (:mod:`cudalens.occupancy.calculator`, CUDA 13.0's rules) fits **0 blocks** on an SM
  (registers or shared memory); such a launch fails;
* **spills**: ptxas spilled registers to local memory (``--keep-spills`` keeps them);
* **occupancy**: fewer resident warps than ``min_occupancy`` of the SM's maximum (default: one warp
  per scheduler, 4/64 on Hopper: a scheduler with no warp issues nothing).

Survivors get a **predicted cost**, a relative number used only to order them (lower first):
``instructions per FP32 operation`` from the SASS counts (memory, shared and control instructions
the kernel issues per arithmetic instruction: register blocking lowers it) divided by the **wave
efficiency** (blocks / (waves x resident blocks x SMs): the idle SMs of the last wave) and by a
latency-hiding factor (resident warps per scheduler, saturating at 4). Where the source-level warp
access model (:mod:`cudalens.access`) establishes them, predicted global sectors per request above
the ideal and shared-memory bank-conflict ways multiply the cost of the instructions they concern;
where it does not (data-dependent indices), nothing is assumed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from cudalens.errors import InputError
from cudalens.occupancy.calculator import calculate
from cudalens.tune.build import BuildFacts

MAX_THREADS = 1024
MAX_GRID = (2**31 - 1, 65535, 65535)
_MEMORY_CLASSES = ("ldg", "stg", "lds", "sts", "ldsm", "ldl", "stl", "ld", "st", "atom")


@dataclass(frozen=True)
class Launch:
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_bytes: int = 0

    @property
    def threads(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def blocks(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]


@dataclass(frozen=True)
class AccessFacts:
    """Predictions of the warp access model for one configuration (None: not established)."""

    global_excess: float | None = None  # mean sectors per request / ideal, over global accesses it modelled
    shared_ways: float | None = None  # mean bank-conflict ways over shared accesses it modelled
    modelled: int = 0
    unmodelled: int = 0


@dataclass(frozen=True)
class Verdict:
    """The models' decision on one configuration."""

    config_key: str
    pruned: bool
    reason: str | None  # "<kind>: <why>" when pruned
    predicted_cost: float | None = None
    facts: dict[str, Any] = field(default_factory=dict)  # occupancy, waves, counts: the evidence

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _counts_by_family(counts: Mapping[str, int]) -> dict[str, int]:
    fam: dict[str, int] = {}
    for cls, n in counts.items():
        fam[cls.split(".")[0]] = fam.get(cls.split(".")[0], 0) + n
    return fam


def decide(facts: BuildFacts, launch: Launch | None, *, cc: str, sm_count: int, launch_error: str | None = None,
           keep_spills: bool = False, min_occupancy: float | None = None,
           access: AccessFacts | None = None) -> Verdict:
    """Prune ``facts`` or give it a predicted cost (see the module docstring)."""
    key = facts.config_key
    if not facts.ok:
        reason = facts.error or "does not compile"
        return Verdict(key, True, reason if reason.startswith(("does not compile", "no kernel")) else f"compile: {reason}")
    if launch_error is not None or launch is None:
        return Verdict(key, True, f"launch: {launch_error or 'no launch geometry'}")
    if launch.threads > MAX_THREADS or launch.threads < 1:
        return Verdict(key, True, f"launch: a block of {launch.threads} threads (the limit is {MAX_THREADS})")
    for axis, (n, lim) in enumerate(zip(launch.grid, MAX_GRID)):
        if not 1 <= n <= lim:
            return Verdict(key, True, f"launch: grid dimension {'xyz'[axis]} = {n} (allowed 1..{lim})")
    res = facts.res
    try:
        occ = calculate(cc, launch.threads, res.registers, launch.shared_bytes, static_shared_mem=res.static_shared_bytes,
                        block_barriers=max(1, res.barriers))
    except InputError as exc:
        return Verdict(key, True, f"launch: {exc}")
    evidence: dict[str, Any] = {
        "registers": res.registers, "static_shared_bytes": res.static_shared_bytes,
        "dynamic_shared_bytes": launch.shared_bytes, "threads_per_block": launch.threads, "blocks": launch.blocks,
        "active_blocks_per_sm": occ.active_blocks_per_sm, "occupancy": round(occ.occupancy, 4),
        "occupancy_limiters": sorted(occ.limiters), "spill_stores": res.spill_stores, "spill_loads": res.spill_loads,
    }
    if occ.active_blocks_per_sm == 0:
        return Verdict(key, True, f"launch: 0 active blocks per SM ({occ.reason or occ.limiter_text})", facts=evidence)
    if (res.spill_stores or res.spill_loads) and not keep_spills:
        return Verdict(key, True, f"spills: {res.spill_stores} B of spill stores, {res.spill_loads} B of spill loads "
                       f"at {res.registers} registers", facts=evidence)
    floor = 4 / occ.max_warps_per_sm if min_occupancy is None else min_occupancy
    if occ.occupancy + 1e-12 < floor:
        return Verdict(key, True, f"occupancy: {occ.active_warps_per_sm} resident warps per SM "
                       f"({occ.occupancy:.1%}, below {floor:.1%}; limited by {', '.join(sorted(occ.limiters))})",
                       facts=evidence)
    per_wave = occ.active_blocks_per_sm * max(1, sm_count)
    waves = math.ceil(launch.blocks / per_wave)
    wave_eff = launch.blocks / (waves * per_wave)
    fam = _counts_by_family(facts.sass_counts)
    arith = fam.get("fp32", 0) + fam.get("fp16", 0) + fam.get("fp64", 0) + fam.get("hmma", 0)
    mem = sum(fam.get(c, 0) for c in _MEMORY_CLASSES)
    other = fam.get("bar", 0) + fam.get("branch", 0)
    if access is not None and access.global_excess:
        mem += (access.global_excess - 1.0) * (fam.get("ldg", 0) + fam.get("stg", 0))
    if access is not None and access.shared_ways:
        mem += (access.shared_ways - 1.0) * (fam.get("lds", 0) + fam.get("sts", 0))
    per_op = (mem + other + 1) / max(1, arith)
    warps_per_scheduler = occ.active_warps_per_sm / 4
    hiding = min(1.0, warps_per_scheduler / 4)
    cost = (1.0 + per_op) / (wave_eff * hiding)
    evidence.update({"waves": waves, "wave_efficiency": round(wave_eff, 4), "instructions_per_arith": round(per_op, 4),
                     "warps_per_scheduler": warps_per_scheduler})
    if access is not None:
        evidence["access"] = asdict(access)
    return Verdict(key, False, None, cost, evidence)


def access_facts(model: Any, kernel_name: str, block: tuple[int, int, int], env: Mapping[str, int]) -> AccessFacts | None:
    """The warp access model's predictions for ``kernel_name`` at ``block`` with ``env`` bound
    (template parameters and constants); None when the model cannot run on this file."""
    try:
        from cudalens.access.model import analyze_model

        am = analyze_model(model, block=block, defines=dict(env))
    except Exception:  # noqa: BLE001 - the access model is evidence where available, never required
        return None
    kernels = [k for k in am.kernels if k.name == kernel_name.split("::")[-1]]
    if not kernels:
        return None
    glob, shared, unmodelled = [], [], 0
    for a in kernels[0].accesses:
        if a.space == "global" and a.sectors_per_request and a.ideal_sectors_per_request:
            glob.append(a.sectors_per_request / a.ideal_sectors_per_request)
        elif a.space == "shared" and a.bank_conflict_ways:
            shared.append(float(a.bank_conflict_ways))
        elif a.space in ("global", "shared"):
            unmodelled += 1
    return AccessFacts(sum(glob) / len(glob) if glob else None, sum(shared) / len(shared) if shared else None,
                       len(glob) + len(shared), unmodelled)


def rank_survivors(verdicts: Sequence[Verdict]) -> list[Verdict]:
    """Survivors, lowest predicted cost first (ties: the space's order)."""
    alive = [v for v in verdicts if not v.pruned]
    return sorted(alive, key=lambda v: (v.predicted_cost if v.predicted_cost is not None else math.inf))
