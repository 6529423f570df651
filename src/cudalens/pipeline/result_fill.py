"""Storing the analyses a run computed in the result cache (:mod:`cudalens.pipeline.result_cache`), each
with what proves it still holds (:mod:`cudalens.pipeline.result_deps`, ``consult``'s kernel fields).

``check`` stores each file's analysis as its worker's result arrives (:meth:`Filler.one`, called while the
other workers run: with ``-j N`` > 1 the parent's storing overlaps their work instead of following it), and
:meth:`Filler.all` stores whatever was not stored yet. Each stored analysis comes back with its JSON view's
kernel records (``kernels_json``), which the JSON report writes as they are, not rendered again.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cudalens.pipeline.result_cache import ResultCache, _elsewhere, _mentioned_elsewhere, _names_digest


@dataclass
class Filler:
    """The run's stores: ``keys`` (each path's key), ``hits`` (the analyses read from the cache: never
    stored again), the project and build the dependency lists come from."""

    cache: ResultCache
    keys: Mapping[str, str]
    hits: Mapping[str, Any]
    project: Any = None
    build: Any = None
    bare: Mapping[str, str] = field(default_factory=dict)  # each path's key with no launches (ResultCache.seen)
    stored: dict[str, Any] = field(default_factory=dict)  # path -> its analysis, with its kernel records
    words: dict[str, frozenset[str]] = field(default_factory=dict)  # (_mentioned_elsewhere's memo)

    def one(self, p: str, fa: Any) -> None:
        """Store ``fa``, the analysis of ``p`` computed now (a hit, a failure or one stored already: nothing)."""
        from cudalens.pipeline.analysis import FileAnalysis
        from cudalens.pipeline.result_deps import dependencies, probes

        if p not in self.keys or p in self.hits or p in self.stored or not isinstance(fa, FileAnalysis):
            return
        project, build, cache = self.project, self.build, self.cache
        through = [p, *project.includers(p)] if project is not None else [p]  # a header: its units' includes too
        manifest = {"deps": dependencies(p, fa, project, build), "shadows": probes(through, build),
                    "kernels": sorted(cache.defined.get(p, frozenset())),
                    "every": _names_digest(_elsewhere(cache, p)),
                    "elsewhere": _mentioned_elsewhere(cache, p, project, self.words)}
        records = cache.store(self.keys[p], fa, manifest, build)
        if records is not None and p in self.bare:
            cache.mark_seen(self.bare[p])
        self.stored[p] = dataclasses.replace(fa, kernels_json=records) if records is not None else fa

    def all(self, done: Sequence[Any]) -> list[Any]:
        """``done`` (the run's analyses, in order), each one computed now stored (once) and returned with
        its kernel records."""
        if all(p in self.hits for p in self.keys):
            return list(done)  # nothing computed now
        given = {os.path.realpath(p): p for p in self.keys}
        out = []
        for fa in done:
            p = given.get(os.path.realpath(fa.model.path), "")
            self.one(p, fa)
            out.append(self.stored.get(p, fa))
        return out
