"""What rules read: every fact established for one analyzed file (or one traced program), by
layer, and the one way to build a finding (:meth:`RuleContext.finding`).

Fields are ``None`` when that layer was not run (no compiler, no built binary, no trace, no
counters). A detector declares the layers it reads (``@rule(requires=...)``) and runs only when
they are all present (:meth:`RuleContext.has`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from cudalens.compiled.fatbin import FatbinContents
from cudalens.compiled.model import CompiledKernel
from cudalens.findings import Evidence, Finding, Layer
from cudalens.rules.catalog import ITEMS
from cudalens.rules.layers import ChecksLayer, KernelCounters, TracedKernel, TraceLayer
from cudalens.source.callers import CallerFacts, DeferredCallerFacts
from cudalens.source.model import SourceModel

#: A fact as rules pass it: (name, value) with any JSON-serializable value.
Fact = tuple[str, object]


@dataclass(frozen=True)
class RuleContext:
    source: SourceModel
    cc: str = "9.0"  # target compute capability
    compiled: Mapping[str, CompiledKernel] | None = None  # kernel name -> compiled facts
    binary: FatbinContents | None = None  # what a built executable/object carries (rule Y3, --binary)
    trace: TraceLayer | None = None  # a traced run of the whole program
    trace_kernel: TracedKernel | None = None  # one kernel of a traced run
    counters: KernelCounters | None = None  # Nsight Compute counters of one traced kernel
    checks: ChecksLayer | None = None  # predictions compared with counters
    has_source: bool = True  # False for a context built from other layers only (:meth:`without_source`)
    rule: str = ""  # the rule being run (set by the registry: ctx.finding uses its catalog entry)
    advisory: bool = False  # the rule being run is advisory (set by the registry)
    # the calls of the file's launching host functions (this file and its folder's sources) and the
    # error checks those sources see (cudalens.source.callers; rule Y1)
    callers: CallerFacts | DeferredCallerFacts = field(default_factory=CallerFacts)

    @classmethod
    def without_source(cls, file: str, **layers: object) -> RuleContext:
        """A context of layers other than the source (a trace, counters, checks) about ``file``."""
        empty = SourceModel(path=file, text="", kernels=(), device_functions=(), defines={}, host_calls=(),
                            launch_sites=())
        return cls(source=empty, has_source=False, **layers)  # type: ignore[arg-type]

    def has(self, layer: str) -> bool:
        """Whether the layer ``layer`` (a name of :data:`cudalens.rules.layers.LAYERS`) is present."""
        if layer == "source":
            return self.has_source
        return getattr(self, layer) is not None

    def for_rule(self, rule_id: str, advisory: bool = False) -> RuleContext:
        if self.rule == rule_id and self.advisory == advisory:
            return self
        return dataclasses.replace(self, rule=rule_id, advisory=advisory)

    def kernel_line(self, name: str) -> int | None:
        """The line of kernel ``name``'s definition, when the front end found it."""
        return next((k.line for k in self.source.kernels if k.name == name), None)

    def finding(self, line: int | None, message: str, fix: str, *, kernel: str | None = None,
                file: str | None = None, layer: Layer = Layer.SOURCE, facts: Iterable[Fact] = (),
                evidence: Iterable[Evidence] = (), impact: float | None = None,
                impact_text: str | None = None, status: str = "flagged") -> Finding:
        """A finding of the rule being run, at ``line`` of the analyzed file (or of ``file``).

        Priority and section come from the catalog. ``evidence`` is kept as given, then each
        ``(name, value)`` of ``facts`` is added as evidence of ``layer``. ``status``: "confirmed"
        where the layer measured what the finding states (a trace, counters).
        """
        item = ITEMS.get(self.rule)
        if item is None:
            raise RuntimeError(f"ctx.finding outside a catalog rule (rule={self.rule!r})")
        return Finding(
            rule=self.rule, priority=item.priority, section=item.section, kernel=kernel,
            file=self.source.path if file is None else file, line=line, message=message, fix=fix,
            impact=impact, impact_text=impact_text, advisory=self.advisory, status=status,
            evidence=(*evidence, *(Evidence(layer, name, value) for name, value in facts)),
        )
