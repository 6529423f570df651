"""Synthetic inputs for the guided tests: counters, report kernels, measurements."""

from __future__ import annotations

import dataclasses

from cudalens.profile.ncu import LegacyMetrics


def metrics(kernel: str, **values) -> LegacyMetrics:
    """LegacyMetrics with every field None (launches 1) except ``values``."""
    fields = {f.name: None for f in dataclasses.fields(LegacyMetrics)}
    fields.update(kernel=kernel, launches=1)
    fields.update(values)
    return LegacyMetrics(**fields)


def access(line, space, op, *, sectors=None, ideal=None, ways=None, waves=None, width=4, pattern="p", array="a"):
    return {"line": line, "array": array, "space": space, "op": op, "bytes_per_thread": width,
            "sectors_per_request": sectors, "ideal_sectors_per_request": ideal, "bank_conflict_ways": ways,
            "wavefronts_per_request": waves, "pattern": pattern}


def kernel(name, accesses=(), branches=(), occupancy=None, file="k.cu", line=1):
    k = {"name": name, "file": file, "line": line, "accesses": list(accesses), "branches": list(branches)}
    if occupancy is not None:
        k["occupancy"] = {"threads_per_block": 256, "active_blocks_per_sm": 4, "active_warps_per_sm": 32,
                          "occupancy": occupancy, "limiters": ["registers"]}
    return k


def report(*kernels, findings=()):
    return {"schema": "cudalens/analysis-1", "cc": "9.0", "kernels": list(kernels), "findings": list(findings)}
