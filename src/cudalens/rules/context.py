"""What rules read: every fact established for one analyzed file, by layer, and the one way to
build a finding (:meth:`RuleContext.finding`).

Fields are ``None`` when that layer was not run (no compiler, no built binary).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from cudalens.compiled.fatbin import FatbinContents
from cudalens.compiled.model import CompiledKernel
from cudalens.findings import Evidence, Finding, Layer
from cudalens.rules.catalog import CATALOG
from cudalens.source.callers import CallerFacts
from cudalens.source.model import SourceModel

#: A fact as rules pass it: (name, value) with any JSON-serializable value.
Fact = tuple[str, object]


@dataclass(frozen=True)
class RuleContext:
    source: SourceModel
    cc: str = "9.0"  # target compute capability
    compiled: Mapping[str, CompiledKernel] | None = None  # kernel name -> compiled facts
    binary: FatbinContents | None = None  # what a built executable/object carries (rule Y3, --binary)
    rule: str = ""  # the rule being run (set by the registry: ctx.finding uses its catalog entry)
    # the calls of the file's launching host functions (this file and its folder's sources) and the
    # error checks those sources see (cudalens.source.callers; rule Y1)
    callers: CallerFacts = field(default_factory=CallerFacts)

    def for_rule(self, rule_id: str) -> RuleContext:
        return self if self.rule == rule_id else dataclasses.replace(self, rule=rule_id)

    def kernel_line(self, name: str) -> int | None:
        """The line of kernel ``name``'s definition, when the front end found it."""
        return next((k.line for k in self.source.kernels if k.name == name), None)

    def finding(self, line: int | None, message: str, fix: str, *, kernel: str | None = None,
                file: str | None = None, layer: Layer = Layer.SOURCE, facts: Iterable[Fact] = (),
                evidence: Iterable[Evidence] = (), impact: float | None = None,
                impact_text: str | None = None) -> Finding:
        """A finding of the rule being run, at ``line`` of the analyzed file (or of ``file``).

        Priority and section come from the catalog. ``evidence`` is kept as given, then each
        ``(name, value)`` of ``facts`` is added as evidence of ``layer``.
        """
        from cudalens.rules.registry import RULES

        item = CATALOG.get(self.rule)
        if item is None:
            raise RuntimeError(f"ctx.finding outside a catalog rule (rule={self.rule!r})")
        spec = RULES.get(self.rule)
        return Finding(
            rule=self.rule, priority=item.priority, section=item.section, kernel=kernel,
            file=self.source.path if file is None else file, line=line, message=message, fix=fix,
            impact=impact, impact_text=impact_text, advisory=spec is not None and spec.advisory,
            evidence=(*evidence, *(Evidence(layer, name, value) for name, value in facts)),
        )
