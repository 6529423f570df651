"""The SourceModel: what the CUDA C++ front end establishes about one file.

Frozen records. ``None`` wherever the front end cannot establish a value. Lines are 1-based lines of
the analyzed file. Tree-sitter nodes are kept (``node``) so that pattern rules can walk the syntax
of a kernel or of host code without re-parsing; they are excluded from equality and JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Param:
    name: str
    type: str  # as written, without the name: "const float *__restrict__"
    is_pointer: bool
    is_restrict: bool
    is_const: bool


@dataclass(frozen=True)
class ArrayDecl:
    """A __shared__, __constant__ or local (per-thread) array."""

    name: str
    space: str  # "shared" | "constant" | "local"
    element_type: str
    element_bytes: int | None
    shape: tuple[int | None, ...]  # None for a dimension not known (extern __shared__ x[])
    line: int


@dataclass(frozen=True)
class Loop:
    line: int
    end_line: int
    kind: str  # "for" | "while" | "do"
    induction_variable: str | None
    induction_type: str | None  # e.g. "int", "unsigned int"
    start: str | None  # expression text
    condition: str | None
    step: str | None
    # trips per entry the compiled code ran (evidence.compiled_figures), when known; None otherwise
    compiled_trips: float | None = None


@dataclass(frozen=True)
class Call:
    """A call in a kernel or in host code."""

    line: int
    name: str
    args: tuple[str, ...]  # argument texts
    loop_lines: tuple[int, ...]  # lines of the enclosing loops, innermost last
    node: Any = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Access:
    """One global/shared/constant/local array subscript, with the warp model's verdict."""

    line: int
    array: str
    space: str  # "global" | "shared" | "constant" | "local"
    op: str  # "load" | "store"
    bytes_per_thread: int | None
    index: str  # the subscript as written; for *(p + e): "e" (the offset of p itself is in index_expr)
    sectors_per_request: float | None = None
    ideal_sectors_per_request: float | None = None
    bank_conflict_ways: float | None = None
    distinct_addresses: float | None = None  # constant memory: distinct addresses per warp
    pattern: str | None = None  # coalesced | misaligned | strided-k | broadcast | data-dependent | ...
    loop_lines: tuple[int, ...] = ()
    # Added by the access model (cudalens.access); defaults keep older constructors valid.
    element_type: str | None = None  # as written ("float", "T", "float4")
    wavefronts_per_request: float | None = None  # shared memory: comparable with ncu wavefronts/instruction
    ideal_wavefronts_per_request: float | None = None
    lane_stride: int | None = None  # elements between consecutive active lanes, when constant
    stride_from_mask: bool = False  # the non-unit stride comes from idle lanes of a divergent branch (D1's cost)
    covered_by_siblings: bool = False  # strided, but the statement's sibling accesses fill every gap
    reuse: dict[str, Any] | None = None  # global loads: block-level re-use facts (for G8/SH2)
    row_pitch: int | None = None  # elements between rows (threadIdx.y -> threadIdx.y + 1), 2-D blocks
    assumptions: tuple[str, ...] = ()  # what the model assumed to reach its verdict
    # Global loads with a lane stride: could a shared-memory tile serve them coalesced? (for SH3; see
    # cudalens.access.staging.staging for the keys)
    staging: dict[str, Any] | None = None
    # Front end: the __shared__ array a global load's value is assigned to in the same expression
    # (``tile[ty][tx] = a[...]``), i.e. the load stages a tile; None otherwise.
    stored_to: str | None = None
    # Shared loads in a loop that advance one element per iteration: the wavefronts per request if the
    # compiler merges consecutive iterations into one wider load ({8: ..., 16: ...} bytes per lane);
    # the analyze pipeline uses the entry the SASS confirms (LDS.64 / LDS.128 on the line).
    vectorized_wavefronts: dict[int, float] | None = None
    # Symbolic forms (cudalens.source.expr tuples), built by the front end for the access model.
    index_expr: Any = field(default=None, compare=False, repr=False)
    mask_expr: Any = field(default=None, compare=False, repr=False)  # conditions guarding it, None: always
    loop_context: tuple[Any, ...] = field(default=(), compare=False, repr=False)  # (symbol, start, step, line)
    # which layer gave the figures above: "source" (this model) or "compiled-ptx" (the warp access
    # model on the compiled code, where this model had none: evidence.compiled_figures)
    figures_from: str = "source"
    # figures that hold over trials of parameters nobody gave (evidence.compiled_figures): the lane
    # stride named by its parameter ("= height elements (height = 256..4096 tried)"), the low end of
    # a sectors range whose every value is a finding (``sectors_per_request`` is the high end), and
    # notes every message about the figures carries (edge warps of a bounds guard, ...)
    lane_stride_text: str | None = None
    sectors_low: float | None = None
    figure_notes: tuple[str, ...] = ()
    # compiled run of a loop whose executions differ: the lowest and highest figure of one execution
    # over its iterations (shared: conflict ways; the figures above are then the loop-weighted ones)
    iteration_range: tuple[float, float] | None = None
    # the file of ``line`` when it is not the kernel's: a __device__ function of a header inlined into
    # the kernel (evidence.inlined_accesses); None: the kernel's own file
    file: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            **({"file": self.file} if self.file else {}),
            "line": self.line,
            "array": self.array,
            "space": self.space,
            "op": self.op,
            "bytes_per_thread": self.bytes_per_thread,
            "sectors_per_request": self.sectors_per_request,
            "ideal_sectors_per_request": self.ideal_sectors_per_request,
            "bank_conflict_ways": self.bank_conflict_ways,
            "pattern": self.pattern,
            "distinct_addresses": self.distinct_addresses,
            "wavefronts_per_request": self.wavefronts_per_request,
            # a stride that follows a parameter nobody gave is not one number: its text says which
            "lane_stride": None if self.lane_stride_text else self.lane_stride,
            "index": self.index,
            **({"lane_stride_text": self.lane_stride_text} if self.lane_stride_text else {}),
            **({"sectors_low": self.sectors_low} if self.sectors_low is not None else {}),
            **({"figure_notes": list(self.figure_notes)} if self.figure_notes else {}),
            **({"iteration_range": list(self.iteration_range)} if self.iteration_range else {}),
        }


@dataclass(frozen=True)
class Branch:
    line: int
    condition: str
    divergent: bool | None  # None: the condition depends on data the model cannot see
    loop_lines: tuple[int, ...] = ()
    kind: str = "if"
    divergent_warps: int | None = None  # warps of the representative block whose lanes split
    warps: int | None = None
    lanes_taken: int | None = None  # most lanes taking the branch in a split warp (1: a single-lane guard)
    condition_expr: Any = field(default=None, compare=False, repr=False)
    mask_expr: Any = field(default=None, compare=False, repr=False)
    loop_context: tuple[Any, ...] = field(default=(), compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "divergent": self.divergent, "condition": self.condition,
                "divergent_warps": self.divergent_warps, "warps": self.warps}


@dataclass(frozen=True)
class LaunchSite:
    """A host-side launch ``kernel<<<grid, block, smem, stream>>>(args)``."""

    line: int
    kernel: str
    grid: str
    block: str
    shared_mem: str | None
    stream: str | None
    args: tuple[str, ...]
    block_dims: tuple[int, int, int] | None  # when literal or derivable
    grid_dims: tuple[int, int, int] | None
    loop_lines: tuple[int, ...] = ()
    node: Any = field(default=None, compare=False, repr=False)
    # One entry per argument: its value where it is a number literal or follows from #defines, file-level
    # constants or host locals set once before the launch (see HostEnv.value); None otherwise.
    arg_values: tuple[int | float | None, ...] = ()


@dataclass(frozen=True)
class Kernel:
    name: str
    file: str
    line: int
    end_line: int
    params: tuple[Param, ...]
    is_template: bool
    launch_bounds: tuple[int, ...] | None  # (maxThreadsPerBlock[, minBlocksPerSM[, maxBlocksPerCluster]])
    arrays: tuple[ArrayDecl, ...] = ()
    loops: tuple[Loop, ...] = ()
    calls: tuple[Call, ...] = ()
    accesses: tuple[Access, ...] = ()
    branches: tuple[Branch, ...] = ()
    block_dims: tuple[int, int, int] | None = None  # the block the access model used
    node: Any = field(default=None, compare=False, repr=False)
    template_params: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()  # what the front end or the access model could not model here
    # the launch the models evaluated it under (cudalens.project.launches.ResolvedLaunch), set by the access model
    launch: Any = field(default=None, compare=False)
    # every distinct launch the project makes of it, the representative (``launch``) first
    # (LaunchTable.distinct); a profiled launch among them is evaluated when counters are compared
    launches: tuple[Any, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class SourceModel:
    path: str
    text: str
    kernels: tuple[Kernel, ...]
    device_functions: tuple[str, ...]
    defines: dict[str, str]
    host_calls: tuple[Call, ...]  # calls outside __global__/__device__ functions
    launch_sites: tuple[LaunchSite, ...]
    problems: tuple[str, ...] = ()  # what the front end could not model (lowers confidence)
    tree: Any = field(default=None, compare=False, repr=False)
