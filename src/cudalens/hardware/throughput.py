"""Per-SM arithmetic throughput by compute capability, and the peak rates it implies.

The Programming Guide (section 5.4.1, table "Throughput of Native Arithmetic Instructions") gives,
per compute capability, how many *results* one multiprocessor produces per clock cycle for each
class of native instruction. One warp instruction yields 32 results, so a rate of N means N/32
warp instructions per clock per SM. Multiply by the number of SMs and the SM clock for the device:

    peak ops/s   = SMs x SM clock (Hz) x results per clock per SM
    peak FLOP/s  = the same x 2 for multiply-add rows (one FMA counts as two floating-point ops)

Source note (``THROUGHPUT_SOURCE``): values were transcribed by hand from the CUDA 12.x edition of
the table for CC 5.0-9.0 (columns 5.0/5.2, 5.3, 6.0, 6.1, 6.2, 7.x, 8.0, 8.6, 8.9, 9.0) and from
the CUDA 11 edition for Kepler 3.5/3.7. ``None`` means *not established*: either the table says
the operation takes multiple instructions there, or it has no column for that CC (8.7, 10.x,
11.0, 12.x are not transcribed), or our copies disagreed (FP16 on 8.6 and 8.9). Each ``Rate``
carries the reason. The __syncthreads() row comes from the text of PG 5.4.3, not from the table.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from cudalens.hardware.table import limits, normalize_cc

THROUGHPUT_SOURCE = (
    "CUDA C++ Programming Guide 5.4.1, table 'Throughput of Native Arithmetic Instructions' "
    "(results per clock cycle per multiprocessor); CUDA 12.x edition for CC 5.0-9.0, CUDA 11 "
    "edition for 3.5/3.7; __syncthreads() from PG 5.4.3 text. Transcribed by hand: verify "
    "against the guide before relying on a single cell."
)


@dataclass(frozen=True)
class Operation:
    """One row of the throughput table."""

    key: str
    description: str
    is_fma: bool  # a multiply-add row: one result = 2 floating-point operations


OPERATIONS: tuple[Operation, ...] = (
    Operation("fp16_add_mul_fma", "16-bit floating-point add, multiply, multiply-add "
              "(half2 vector instructions give two results per thread)", True),
    Operation("fp32_add_mul_fma", "32-bit floating-point add, multiply, multiply-add", True),
    Operation("fp64_add_mul_fma", "64-bit floating-point add, multiply, multiply-add", True),
    Operation("fp32_special", "32-bit special functions: reciprocal, reciprocal square root, "
              "__log2f, exp2f, __sinf, __cosf", False),
    Operation("int32_add_sub", "32-bit integer add/subtract (incl. extended precision)", False),
    Operation("int32_mul_mad", "32-bit integer multiply, multiply-add", False),
    Operation("int32_shift", "32-bit integer shift", False),
    Operation("compare_min_max", "compare, minimum, maximum", False),
    Operation("int32_bitwise", "32-bit bitwise AND, OR, XOR", False),
    Operation("popc", "population count", False),
    Operation("warp_shuffle", "warp shuffle", False),
    Operation("cvt_8_16_to_32", "type conversion from 8- and 16-bit integers to 32-bit types", False),
    Operation("cvt_64", "type conversion from and to 64-bit types", False),
    Operation("cvt_other", "all other type conversions", False),
    Operation("syncthreads", "__syncthreads() (PG 5.4.3 text)", False),
)

_MULTI = "M"  # the table says: implemented with multiple instructions
_NA = "NA"  # the table says: not available

# Columns of the table. Each CC maps to one column; 7.0/7.2/7.5 share "7.x" (7.5 has footnotes).
_COLUMN_OF = {
    "3.5": "3.x", "3.7": "3.x", "5.0": "5.x", "5.2": "5.x", "5.3": "5.3", "6.0": "6.0",
    "6.1": "6.1", "6.2": "6.2", "7.0": "7.x", "7.2": "7.x", "7.5": "7.x", "8.0": "8.0",
    "8.6": "8.6", "8.9": "8.9", "9.0": "9.0",
}
_COLUMNS = ("3.x", "5.x", "5.3", "6.0", "6.1", "6.2", "7.x", "8.0", "8.6", "8.9", "9.0")
_UNSURE = "U"  # our transcriptions disagree: left unknown

# One row per operation, values in the order of _COLUMNS.
_ROWS: dict[str, tuple] = {
    "fp16_add_mul_fma": (_NA, _NA, 256, 128, 2, 256, 128, 256, _UNSURE, _UNSURE, 256),
    "fp32_add_mul_fma": (192, 128, 128, 64, 128, 128, 64, 64, 128, 128, 128),
    "fp64_add_mul_fma": (64, 4, 4, 32, 4, 4, 32, 32, 2, 2, 64),
    "fp32_special": (32, 32, 32, 16, 32, 32, 16, 16, 16, 16, 16),
    "int32_add_sub": (160, 128, 128, 64, 128, 128, 64, 64, 64, 64, 64),
    "int32_mul_mad": (32, _MULTI, _MULTI, _MULTI, _MULTI, _MULTI, 64, 64, 64, 64, 64),
    "int32_shift": (64, 64, 64, 32, 64, 64, 64, 64, 64, 64, 64),
    "compare_min_max": (160, 64, 64, 32, 64, 64, 64, 64, 64, 64, 64),
    "int32_bitwise": (160, 128, 128, 64, 128, 128, 64, 64, 64, 64, 64),
    "popc": (32, 32, 32, 16, 32, 32, 16, 16, 16, 16, 16),
    "warp_shuffle": (32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32),
    "cvt_8_16_to_32": (128, 32, 32, 16, 32, 32, 16, 16, 16, 16, 16),
    "cvt_64": (32, 4, 4, 16, 4, 4, 16, 16, 2, 2, 16),
    "cvt_other": (32, 32, 32, 16, 32, 32, 16, 16, 16, 16, 16),
    # PG 5.4.3: 128 on 3.x, 64 on 5.x/6.1/6.2, 32 on 6.0, 16 on 7.x; the text names no later CC.
    "syncthreads": (128, 64, 64, 32, 64, 64, 16, None, None, None, None),
}

# Footnotes that change a cell for one CC inside a shared column.
_OVERRIDES: dict[tuple[str, str], tuple[int, str]] = {
    ("7.5", "fp64_add_mul_fma"): (2, "7.5 footnote: 2 (7.0/7.2: 32)"),
    ("7.5", "cvt_64"): (2, "7.5 footnote: 2 (7.0/7.2: 16)"),
}
_NOTES: dict[tuple[str, str], str] = {
    ("3.x", "fp64_add_mul_fma"): "GeForce Kepler parts: 8",
    ("3.x", "cvt_64"): "GeForce Kepler parts: 8",
    ("6.1", "fp16_add_mul_fma"): "deliberately low on 6.1 (compatibility path, not a fast path)",
    ("8.0", "fp16_add_mul_fma"): "__nv_bfloat16 may run at half this rate",
    ("9.0", "fp16_add_mul_fma"): "__nv_bfloat16 may run at half this rate",
}


@dataclass(frozen=True)
class Rate:
    """Results per clock cycle per SM for one operation on one CC; ``value`` None = not known."""

    key: str
    value: int | None
    note: str = ""


@dataclass(frozen=True)
class Throughputs:
    """All per-SM rates of one compute capability, with the source they came from."""

    cc: str
    column: str | None  # the table column used, None if the CC is not transcribed
    rates: tuple[Rate, ...]
    source: str = THROUGHPUT_SOURCE

    def rate(self, key: str) -> Rate:
        for r in self.rates:
            if r.key == key:
                return r
        raise KeyError(key)

    def to_dict(self) -> dict:
        return asdict(self)


def throughputs(cc: str | float | tuple[int, int]) -> Throughputs:
    """Per-SM results per clock for ``cc`` (which must be a CC of the hardware table)."""
    key = limits(cc).cc  # validates: InputError for an unknown CC
    column = _COLUMN_OF.get(key)
    rates = []
    for op in OPERATIONS:
        if column is None:
            rates.append(Rate(op.key, None, f"CC {key} not transcribed from the table"))
            continue
        raw = _ROWS[op.key][_COLUMNS.index(column)]
        note = _NOTES.get((column, op.key), "")
        if (key, op.key) in _OVERRIDES:
            raw, note = _OVERRIDES[(key, op.key)]
        if raw == _MULTI:
            rates.append(Rate(op.key, None, "multiple instructions (no native instruction)"))
        elif raw == _NA:
            rates.append(Rate(op.key, None, "not available on this CC"))
        elif raw == _UNSURE:
            rates.append(Rate(op.key, None, "not established: our transcriptions disagree"))
        elif raw is None:
            rates.append(Rate(op.key, None, "the guide's text gives no value for this CC"))
        else:
            rates.append(Rate(op.key, int(raw), note))
    return Throughputs(cc=key, column=column, rates=tuple(rates))


def operation(key: str) -> Operation:
    for op in OPERATIONS:
        if op.key == key:
            return op
    raise KeyError(key)


def peak_ops_per_s(rate_per_sm: int, sm_count: int, sm_clock_hz: float, *, fma: bool) -> float:
    """SMs x clock x results per clock per SM, x 2 when each result is a multiply-add."""
    return sm_count * sm_clock_hz * rate_per_sm * (2 if fma else 1)


@dataclass(frozen=True)
class Peak:
    """Device-wide peak of one operation (FLOP/s for floating-point FMA rows, ops/s otherwise)."""

    key: str
    per_s: float | None
    unit: str  # "FLOP/s" or "results/s"
    formula: str


def peaks(cc: str | float | tuple[int, int], sm_count: int, sm_clock_hz: float) -> tuple[Peak, ...]:
    """Peak rate of every operation for a device with ``sm_count`` SMs at ``sm_clock_hz``."""
    normalize_cc(cc)
    table = throughputs(cc)
    out = []
    for op in OPERATIONS:
        r = table.rate(op.key)
        unit = "FLOP/s" if op.is_fma else "results/s"
        if r.value is None:
            out.append(Peak(op.key, None, unit, r.note))
            continue
        value = peak_ops_per_s(r.value, sm_count, sm_clock_hz, fma=op.is_fma)
        factor = " x 2 (FMA)" if op.is_fma else ""
        out.append(Peak(op.key, value, unit,
                        f"{sm_count} SMs x {sm_clock_hz / 1e6:g} MHz x {r.value}/clk/SM{factor}"))
    return tuple(out)
