"""Synthetic inputs for the guided tests: counters, kernel records, measurements."""

from __future__ import annotations

import dataclasses

from cudalens.evidence.join import CompiledLoad, KernelRecord
from cudalens.profile.ncu import LegacyMetrics
from cudalens.source.model import Access, Branch, Kernel


def metrics(kernel: str, **values) -> LegacyMetrics:
    """LegacyMetrics with every field None (launches 1) except ``values``."""
    fields = {f.name: None for f in dataclasses.fields(LegacyMetrics)}
    fields.update(kernel=kernel, launches=1)
    fields.update(values)
    return LegacyMetrics(**fields)


def access(line, space, op, *, sectors=None, ideal=None, ways=None, waves=None, width=4, pattern="p", array="a"):
    return Access(line, array, space, op, width, "i", sectors_per_request=sectors, ideal_sectors_per_request=ideal,
                  bank_conflict_ways=ways, wavefronts_per_request=waves, pattern=pattern)


def branch(line, divergent):
    return Branch(line, "c", divergent)


def kernel(name, accesses=(), branches=(), occupancy=None, file="k.cu", line=1, predicated=None, unmodelled=None,
           loads=(), sass=None):
    """A kernel record; ``branches`` as {"line", "divergent"} dicts, (line, divergent) pairs or Branch objects, ``predicated`` per branch,
    ``loads`` the compiled loads per access (CompiledLoad or None)."""
    bs = tuple(b if isinstance(b, Branch) else branch(b["line"], b["divergent"]) if isinstance(b, dict)
               else branch(*b) for b in branches)
    k = Kernel(name, file, line, line, (), False, None, accesses=tuple(accesses), branches=bs)
    occ = None
    if occupancy is not None:
        occ = {"threads_per_block": 256, "active_blocks_per_sm": 4, "active_warps_per_sm": 32,
               "occupancy": occupancy, "limiters": ["registers"]}
    return KernelRecord(k, None, tuple(loads), None if predicated is None else tuple(predicated),
                        None if unmodelled is None else tuple(unmodelled), sass=sass, occupancy=occ)


def compiled_load(wavefronts, load_bytes=16, requests=0.25):
    return CompiledLoad(load_bytes, wavefronts, requests)


def report(*kernels):
    """The records of a synthetic analysis (what guided/ reads)."""
    return tuple(kernels)
