"""The launch layer: every kernel's launches across the project, resolved once.

Contract shared by the source model, the compiled model, occupancy and the rules (issue #26).
Nothing else decides which block, grid or parameter values a kernel is evaluated under.

A :class:`ResolvedLaunch` is one distinct launch of one kernel with the values the program passes.
Each value is either a number (known from the source: literal, constant, macro from the build,
host variable set once), a :class:`ValueRange` (depends on ``argv`` or another input: the range the
program's defaults and checks allow, with its condition), or absent (unknown: the models try the
plausible values and must name the parameter wherever a figure depends on it).

``origin`` says where the launch came from, and every figure and finding carries it:

- ``"launch"``: a launch site was found; ``site`` is ``"file:line"`` of the launch.
- ``"user"``: ``--block``/``--define`` (possibly per kernel: ``--block transpose=32,8``).
- ``"assumed"``: no launch was found; ``assumption`` says what was used ("256 threads, no launch found").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Origin = Literal["launch", "user", "assumed"]
Dim3 = tuple[int, int, int]


@dataclass(frozen=True)
class ValueRange:
    """A value the program computes from its input: ``lo..hi`` under ``condition``
    (``"argv[1], default 1024"``)."""

    lo: int | float
    hi: int | float
    condition: str


@dataclass(frozen=True)
class ResolvedLaunch:
    kernel: str  # the kernel's name as declared (not mangled); templates: the instantiation, e.g. "gemm<128, 8>"
    origin: Origin
    site: str | None = None  # "runner.cu:42" for origin "launch"
    block: Dim3 | ValueRange | None = None
    grid: Dim3 | ValueRange | None = None
    dynamic_smem: int | ValueRange | None = None
    # scalar kernel parameters by name: a number, a range, or left out when unknown
    params: tuple[tuple[str, int | float | ValueRange], ...] = ()
    template_args: tuple[str, ...] = ()
    assumption: str | None = None  # for origin "assumed": what was used and why
    via: str | None = None  # how the site reaches the kernel: "chevrons", "cudaLaunchKernel", "dispatch table", ...
    notes: tuple[str, ...] = field(default=())

    def describe(self) -> str:
        """``launch: runner.cu:42`` / ``--block`` / ``assumed: 256 threads, no launch found``."""
        if self.origin == "launch":
            return f"launch: {self.site}"
        if self.origin == "user":
            return "launch: given on the command line"
        return f"assumed: {self.assumption}"

    def to_dict(self) -> dict[str, object]:
        """The ``launch`` object of a kernel in the JSON report."""
        return {"origin": self.origin, "from": self.describe(), "site": self.site, "via": self.via,
                "block": _json(self.block), "grid": _json(self.grid), "dynamic_smem": _json(self.dynamic_smem),
                "params": {name: _json(v) for name, v in self.params}, "template_args": list(self.template_args),
                "assumption": self.assumption, "notes": list(self.notes)}


def _json(v: object) -> object:
    if isinstance(v, ValueRange):
        return {"lo": v.lo, "hi": v.hi, "condition": v.condition}
    if isinstance(v, tuple):
        return list(v)
    return v
