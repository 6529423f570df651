"""Execute one PTX kernel for every lane of a set of thread blocks at once (numpy), as the warps would.

Lanes: the emulated blocks laid out one after another, each padded to whole warps (the hardware's
warp formation: linear thread id ``x + X*(y + Y*z)``). Every register holds one int64 or float64
per lane and a *taint*: 0 (follows from thread/block indices, parameters and constants), 1 (uses a
value loaded from an address that is the same for all lanes of each warp: a warp-uniform symbol,
given synthetic values per trial) or 2 (uses a value loaded per lane, or something not modelled).
Memory is not modelled: a load yields a synthetic value derived from its address and the trial's
seed, so a quantity that depends on loaded data shows up as a difference between trials.

Registers also carry the *form* of their values where it is known (float64, int64 in [0, 2**n),
any int64): reading a register at a type its form already satisfies, or storing values at a type
that leaves them unchanged, does no work (:func:`_same_as`, :func:`_stored_form`). The form is
only ever a fact about the values; dropping it changes no result, only the time.

Control flow: the basic block with the lowest position that has waiting lanes runs next, with
those lanes (min-PC scheduling; reconverges structured code, including loops). A conditional
branch splits the lanes; a loop's back edge is followed at most ``loop_cap`` times per entry of
the loop, after which the lanes leave through the block after the branch (the quantities of the
first iterations, with the trip count and whether it was cut recorded).

Pure: :func:`run` takes a parsed function and a launch and returns frozen per-instruction records.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Mapping

import numpy as np

from cudalens.access.ptx_forms import (
    _as,
    _form_of,
    _imm,
    _int_form,
    _read_form,
    _same_as,
    _store_as,
    _stored_form,
    _union,
)
from cudalens.compiled.ptx import Function, Instruction, PtxModule

WARP = 32
SHARED_BASE = 1 << 48  # generic address of shared offset 0
PARAM_BASE = 1 << 40  # global buffers: parameter k at (k + 1) << 36
_M32 = 0xFFFFFFFF


#: instructions the machine executes for nothing (barriers, fences, hints; ``cp`` is cp.async, whose
#: global read is recorded) and instructions it does not model (their results are tainted, counted)
NOOPS = frozenset({"bar", "barrier", "membar", "fence", "nanosleep", "prefetch", "prefetchu", "pmevent", "trap",
                   "brkpt", "griddepcontrol", "elect", "setmaxnreg", "discard", "applypriority", "createpolicy", "cp"})
UNMODELLED = frozenset({"tex", "tld4", "suld", "sust", "suq", "txq", "ldmatrix", "stmatrix", "wgmma", "mma", "wmma",
                        "isspacep", "istypep", "getctarank", "mapa", "tensormap", "stackrestore", "stacksave",
                        "alloca", "dp4a", "dp2a"})


class _NotModelled(Exception):
    pass


@dataclass(slots=True)
class Val:
    a: np.ndarray
    taint: int = 0
    why: str = ""
    # what the lanes' values are known to be, so that reading them at a type needs no conversion
    # (see _same_as): "f" float64, "uN" int64 in [0, 2**N), "i" int64; "" not known
    form: str = ""


@dataclass(frozen=True)
class Launch:
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    blocks: tuple[tuple[int, int, int], ...]  # the blocks emulated
    params: Mapping[int, Any]  # param index -> int/float value; pointers get distinct aligned buffers
    seed: int = 1
    loop_cap: int = 32
    max_steps: int = 40000
    # shared accesses ptxas merged into one wider SASS access: instruction index -> bytes per lane of
    # the merged access for the first of a group, 0 for the others (their lanes are counted with the
    # first), -w for one evaluated as the aligned w-byte access holding it (ptx_merges.shared_merges)
    merged: Mapping[int, int] = field(default_factory=dict)
    # several trials at once: (seed, params) per variant, each with its own copy of ``blocks``'
    # lanes (empty: the one variant (seed, params)); see ptx_run.run_variants
    variants: tuple[tuple[int, Mapping[int, Any]], ...] = ()
    # instructions to skip (ptx_slice.dead_instructions), when the caller has them; None: work them out
    dead: frozenset[int] | None = None
    # registers whose values may reach a figure (ptx_slice.slice_of); a load into others is counted
    # but its value is not made (nothing executed reads it). None: work them out
    needed: frozenset[str] | None = None
    # basic block -> the conditional branches that decide whether it runs (ptx_control.deciding);
    # None: work them out. A value written in a block decided by a branch on loaded data depends on
    # that data (an implicit flow)
    control: Mapping[int, tuple[int, ...]] | None = None
    # conditional branch -> its sides' instructions where ptxas may predicate them (ptx_control.branch_sides)
    sides: Mapping[int, tuple[frozenset[int], frozenset[int]]] | None = None
    # every loop runs up to ``loop_cap`` passes per entry however many steps were taken (no shorter
    # cap late in the budget): a second run for loops whose figures vary by iteration (ptx_eval)
    whole_loops: bool = False


@dataclass
class MemRecord:
    """One memory instruction's executions, summed over warps (per warp request)."""

    index: int
    space: str
    op: str
    width: int  # bytes per lane (vector width x element size)
    requests: int = 0  # warp executions (warps with a lane at the instruction)
    sectors: float = 0.0
    ideal: float = 0.0
    wavefronts: float = 0.0
    ideal_wavefronts: float = 0.0
    lanes: int = 0  # predicate-on lanes summed over requests
    taint: int = 0
    why: str = ""
    per_call: list = field(default_factory=list)  # per execution group: sectors (or wavefronts) per request
    skipped: int = 0  # executions by warps with no lane on the branch side holding it (ptx_predicated)
    # global accesses: the least and greatest address distance (bytes) between neighbouring active
    # lanes over all its requests (equal: one lane stride); None: no two neighbouring lanes active
    stride_lo: int | None = None
    stride_hi: int | None = None
    # global accesses: the gcd of 32 and every distance mod 32 (bytes) between a lane's address in the
    # second emulated block and in the first (32: the blocks' addresses differ by whole sectors, or
    # one block only); 32 // it blocks make the period of the sector alignment along blockIdx.x
    block_shift: int = 32


@dataclass
class BranchRecord:
    index: int
    requests: int = 0
    divergent: int = 0
    taint: int = 0
    why: str = ""


@dataclass
class RunResult:
    mem: dict[int, MemRecord]
    branches: dict[int, BranchRecord]
    back_edges: dict[int, int]  # back-edge instruction -> times taken (summed over entries)
    truncated: set[int]  # back edges whose loops were cut at loop_cap
    steps: int
    complete: bool
    unmodelled: dict[str, int]
    calls: int
    indirect: tuple[str, ...] = ()  # per indirect call: what its target depends on (the line it was loaded at)


class _Specials(dict):
    """The special registers (%tid.x, %ctaid.y, %laneid, ...) per lane, each made when first read."""

    NAMES = frozenset({"%tid.x", "%tid.y", "%tid.z", "%laneid", "%warpid", "%nwarpid",
                       *(f"%{k}.{c}" for k in ("ntid", "nctaid", "ctaid") for c in "xyz")})

    def __init__(self, launch: Launch, tid: np.ndarray, per: int, variants: int, warps: int) -> None:
        super().__init__()  # no reference to the machine: a cycle would keep its lanes alive until a collection
        self.launch, self.tid, self.per, self.variants, self.warps = launch, tid, per, variants, warps

    def __contains__(self, name: object) -> bool:
        return name in self.NAMES

    def __missing__(self, name: str) -> np.ndarray:
        if name not in self.NAMES:
            raise KeyError(name)
        launch, tid, (bx, by, _bz) = self.launch, self.tid, self.launch.block
        kind, _, c = name[1:].partition(".")
        i = "xyz".index(c) if c else 0
        if kind == "tid":
            arr = tid % bx if c == "x" else (tid // bx) % by if c == "y" else tid // (bx * by)
        elif kind in ("laneid", "warpid"):
            arr = tid % WARP if kind == "laneid" else tid // WARP
        elif kind == "ctaid":
            arr = np.tile(np.repeat([b[i] for b in launch.blocks], self.per), self.variants)
        else:  # the launch's sizes: the same in every lane
            arr = np.full(len(tid), {"ntid": launch.block[i], "nctaid": launch.grid[i], "nwarpid": self.warps}[kind])
        self[name] = arr
        return arr


class Machine:
    def __init__(self, module: PtxModule, fn: Function, launch: Launch) -> None:
        self.fn, self.launch = fn, launch
        bx, by, bz = launch.block
        nthr = bx * by * bz
        self.nw = -(-nthr // WARP)
        per = self.nw * WARP
        variants = launch.variants or ((launch.seed, launch.params),)
        self.V = len(variants)
        nb = len(launch.blocks)
        self.T = per * nb * self.V
        self.lanes = (self.T,)  # the shape of a register's values
        tid = np.tile(np.arange(per), nb * self.V)
        self.variant = np.repeat(np.arange(self.V), per * nb)  # lanes: variant-major, then blocks
        self.row_variant = self.variant[::WARP]
        seeds = np.asarray([sd for sd, _p in variants], dtype=np.int64)
        self.seed_lane = seeds[self.variant]
        self.valid = tid < nthr
        # the seed's part of a synthetic loaded value (ptx_run._synthetic), and the lanes (lo, hi) of seed 0
        self.seed_term = self.seed_lane * 7919
        lanes = per * nb  # (each variant's)
        self.zero_seed = [(v * lanes, (v + 1) * lanes) for v in np.flatnonzero(seeds == 0).tolist()]
        self.special = _Specials(launch, tid, per, self.V, self.nw)
        self.regs: dict[str, Val] = {}
        self.ctl: tuple[int, str] = (0, "")  # taint of the branches deciding the block now running, and why
        self.ctl_taint = 0  # its first part (read on every write)
        self.symbols: dict[str, int] = {}
        off = 0
        for d in [*module.globals, *fn.locals]:
            if d.space != "shared":
                if d.space in ("global", "const"):
                    self.symbols[d.name] = PARAM_BASE + (1 << 35) + len(self.symbols) * (1 << 24)
                continue
            if d.size is None:
                continue
            off = -(-off // max(d.align, 1)) * max(d.align, 1)
            self.symbols[d.name] = off  # shared-window address; cvta.shared makes it generic
            off += d.size
        for d in [*module.globals, *fn.locals]:
            if d.space == "shared" and d.size is None:
                off = -(-off // 16) * 16
                self.symbols[d.name] = off
        self.params: dict[str, tuple[int, list[Any]]] = {}  # name -> (position, value per variant)
        for k, p in enumerate(fn.params):
            vals = [vp.get(k) for _sd, vp in variants]
            self.params[p.name] = (k, [("ptr", PARAM_BASE + ((k + 1) << 36)) if v is None else v for v in vals])
        self.mem_v: list[dict[int, MemRecord]] = [{} for _ in range(self.V)]
        self.branches_v: list[dict[int, BranchRecord]] = [{} for _ in range(self.V)]
        self.unmodelled: dict[str, int] = {}
        self.calls = 0
        self.indirect: list[str] = []
        # executions of memory accesses whose requests, lanes and sectors (wavefronts) are counted at
        # the end of the run, by (space, width): (addresses, or (base, offset) whose sum they are, active
        # lanes, rows present, variants, their records' positions in ``records``)
        self.deferred: dict[tuple[str, int], list[tuple[Any, np.ndarray, np.ndarray, list, list]]] = {}
        self.records: list[MemRecord] = []  # every record an execution was deferred for
        self.record_id: dict[int, int] = {}  # id(record) -> its position in ``records``
        # (instruction, variants) -> (them, their records' ids, the least taint of those records)
        self.record_sets: dict[tuple[int, bytes], tuple[list, list, int]] = {}
        self._imms: dict[tuple[str, bool], Val] = {}  # symbols' addresses, read-only arrays made once
        # immediates and special registers alike (their lanes depend on T alone, on the launch's sizes and
        # blocks: machines alike may share them, ptx_run)
        self._consts: dict[tuple[str, bool], Val] = {}
        self._specials: dict[str, Val] = {}
        # the last mask checked, whether it holds all lanes, and its lanes' span (:meth:`span`; None: not known)
        self._full: tuple[np.ndarray | None, bool, tuple[int, int] | None] = (None, False, None)
        self.rows_of: tuple[Any, ...] = (None,)  # the last block mask recorded at, its rows present, their variants

    def full(self, mask: np.ndarray) -> bool:
        """Whether ``mask`` holds every lane (remembered for the last mask asked about)."""
        last, ans, _ = self._full
        if last is not mask:
            ans = np.count_nonzero(mask) == mask.size
            self._full = (mask, ans, None)
        return ans

    def span(self, mask: np.ndarray) -> tuple[int, int]:
        """The lanes from ``mask``'s first to its last held (all: none held), remembered with :meth:`full`."""
        self.full(mask)
        last, ans, got = self._full
        if got is None:
            got = (int(mask.argmax()), mask.size - int(mask[::-1].argmax()))
            self._full = (last, ans, got)
        return got

    # ---------------------------------------------------------------- operands
    def read(self, tok: str, typ: str) -> Val:
        tok = tok.strip()
        neg = tok.startswith("!")
        if neg:
            tok = tok[1:]
        v = self.regs.get(tok)
        if v is not None:
            if not neg and _same_as(v.form, typ):
                return v
            if typ[0] == "s" and v.form == "u" + typ[1:]:  # already in [0, 2**n): sign extension only
                half = 1 << (int(typ[1:]) - 1)
                out = Val((v.a ^ half) - half, v.taint, v.why, "i")
            else:
                out = Val(_as(v.a, typ), v.taint, v.why, _read_form(typ)) if typ != "pred" else v
        elif tok in self.special:
            out = self._specials.get(tok)  # type: ignore[assignment]
            if out is None:
                arr = self.special[tok]
                arr.flags.writeable = False
                out = self._specials[tok] = Val(arr, form=_form_of(arr))
        elif tok in self.symbols:
            out = self._imms.get((tok, False))  # type: ignore[assignment]
            if out is None:
                arr = np.full(self.T, self.symbols[tok], dtype=np.int64)
                arr.flags.writeable = False
                out = self._imms[(tok, False)] = Val(arr, form=self._int_form(self.symbols[tok]))
        elif tok.startswith("%lanemask_"):
            lane = self.special["%laneid"]
            kind = tok.split("_", 1)[1]
            m = {"eq": 1 << lane, "lt": (1 << lane) - 1, "le": (2 << lane) - 1, "gt": 0xFFFFFFFF ^ ((2 << lane) - 1),
                 "ge": 0xFFFFFFFF ^ ((1 << lane) - 1)}.get(kind)
            if m is None:
                return Val(np.zeros(self.T, dtype=np.int64), 2, f"special register {tok}")
            out = Val(np.asarray(m, dtype=np.int64))
        elif tok == "WARP_SZ":
            out = Val(np.full(self.T, 32, dtype=np.int64))
        elif tok.startswith("__local_depot"):
            out = Val(np.zeros(self.T, dtype=np.int64))  # a thread's local frame: addresses relative to it
        elif tok.startswith("%"):
            if tok.startswith(("%clock", "%globaltimer", "%smid", "%nsmid", "%lanemask", "%dynamic_smem", "%total_smem",
                               "%envreg", "%pm")):
                return Val(np.zeros(self.T, dtype=np.int64), 2, f"special register {tok}")
            out = Val(np.zeros(self.T, dtype=np.int64))  # never written: 0
        else:
            key = (tok, typ.startswith("f"))
            out = self._consts.get(key)  # type: ignore[assignment]
            if out is None:
                c = _imm(tok)
                if c is None:
                    return Val(np.zeros(self.T, dtype=np.int64), 2, f"operand {tok} not modelled")
                floats = isinstance(c, float) or key[1]
                arr = np.full(self.T, c, dtype=np.float64 if floats else np.int64)
                arr.flags.writeable = False
                out = self._consts[key] = Val(arr, form="f" if floats else self._int_form(c))
        if neg:
            out = Val((out.a == 0).astype(np.int64), out.taint, out.why, "u1")
        return out

    def _int_form(self, c: int) -> str:
        """The form of ``T`` lanes all holding ``c`` (:func:`_form_of`, without looking at them)."""
        return _int_form(c, c) if self.T else "i"

    def write(self, tok: str, val: Val, typ: str, mask: np.ndarray) -> None:
        self.put(tok.strip(), val, typ, mask)

    def put(self, tok: str, val: Val, typ: str, mask: np.ndarray) -> None:
        """:meth:`write` to the register named ``tok`` (no spaces around it)."""
        if self.ctl_taint > val.taint:  # written under a branch on loaded data: the value depends on it
            val = Val(val.a, self.ctl_taint, self.ctl[1], val.form)
        same, form = _stored_form(val.form, typ)
        if same:
            new = val.a
        else:
            new = _store_as(val.a, typ) if typ != "pred" else (np.asarray(val.a) != 0).astype(np.int64)
        old = self.regs.get(tok)
        if old is None or (self._full[1] if self._full[0] is mask else self.full(mask)):  # registers (and values)
            # are never changed in place: no copy needed
            if new is val.a and form == val.form and new.shape == self.lanes:
                self.regs[tok] = val  # (the value as it stands)
            else:
                self.regs[tok] = Val(new if new.shape == self.lanes else np.broadcast_to(new, self.lanes).copy(),
                                     val.taint, val.why, form)
            return
        lo, hi = self.span(mask) if old.a.dtype == new.dtype else (0, self.T)
        if hi - lo < self.T:  # lanes outside the span keep their values: set within it only
            a = old.a.copy()
            np.copyto(a[lo:hi], new[lo:hi] if new.shape == self.lanes else new, where=mask[lo:hi])
        else:
            a = np.where(mask, new, old.a if old.a.dtype == new.dtype else old.a.astype(new.dtype))
        t = val.taint if val.taint >= old.taint else old.taint
        self.regs[tok] = Val(a, t, val.why if val.taint >= old.taint else old.why,
                             _union(form, old.form) if old.a.dtype == new.dtype else "")

    def address(self, tok: str) -> tuple[Val, str | None]:
        """[reg+off] / [sym+off] / [param] -> (address, param name when a param)."""
        v, off, pname = self.address_base(tok)
        return offset_address(v, off), pname

    def address_base(self, tok: str) -> tuple[Val, int, str | None]:
        """[reg+off] / [sym+off] / [param] -> (the base's lanes read as s64, off, param name when a
        param: then its lanes hold off, and off is 0)."""
        base, off = _address_parts(tok)
        if base in self.params:
            return Val(np.full(self.T, off, dtype=np.int64)), 0, base
        return self.read(base, "s64"), off, None


#: decoded instructions (cudalens.access.ptx_decode): an operand's lanes at one type, and a step
#: (machine, lanes on, lanes of the block, the guard's taint and why)
Reader = Callable[[Machine], Val]
Step = Callable[[Machine, np.ndarray, np.ndarray, tuple[int, str]], None]


def offset_address(base: Val, off: int) -> Val:
    """The addresses ``base + off`` (of :meth:`Machine.address_base`'s parts), ``base`` itself when ``off`` is 0."""
    return base if not off else Val(base.a + off, base.taint, base.why, "i")


@lru_cache(maxsize=65536)
def _address_parts(tok: str) -> tuple[str, int]:
    """``[base+off]`` (or ``-off``, or ``[base]``) -> (base, off)."""
    inner = tok.strip()[1:-1].replace(" ", "")
    for sep in ("+", "-"):
        if sep in inner[1:]:
            b, o = inner.rsplit(sep, 1)
            c = _imm(o)
            if c is not None:
                return b, int(c) * (1 if sep == "+" else -1)
    return inner, 0


_CMP: dict[str, Callable[[Any, Any], Any]] = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
    "lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal,
    "equ": np.equal, "neu": np.not_equal, "ltu": np.less, "leu": np.less_equal, "gtu": np.greater,
    "geu": np.greater_equal, "num": lambda a, b: np.isfinite(a) & np.isfinite(b),
    "nan": lambda a, b: ~(np.isfinite(a) & np.isfinite(b)),
}


def _merge(*vals: Val) -> tuple[int, str]:
    worst = vals[0]
    for v in vals[1:]:
        if v.taint > worst.taint:
            worst = v
    return worst.taint, worst.why


def loc_line(ins: Instruction) -> int:
    return ins.loc.line if ins.loc else 0

