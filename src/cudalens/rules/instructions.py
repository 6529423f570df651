"""I-series: instruction-level patterns in device code (BPG 11.1, PG 5.4).

Every rule here reads device functions (kernels, ``__device__`` and ``__host__ __device__``) from
the tree the front end kept; nothing is guessed where the syntax does not say it.
"""

from __future__ import annotations

import math
from typing import Any, Iterator

from cudalens.findings import Finding, Priority
from cudalens.rules import _syntax as syn
from cudalens.rules._common import device_functions, finding, kernel_nodes
from cudalens.rules.registry import rule

_ARITH = {"+", "-", "*", "/"}
_POW = {"pow", "powf", "__powf"}


def _is_float_fn(call_name: str) -> bool:
    return call_name.endswith("f")


# ----------------------------------------------------------------------------- I1


def _runtime_pow2_names(body: Any) -> dict[str, str]:
    """Variables of a function that hold ``1 << k`` for a run-time k: name -> shift amount text."""
    out: dict[str, str] = {}
    for n in syn.nodes_of(body, "declaration", "assignment_expression"):
        pairs: list[tuple[str, Any]] = []
        if n.type == "declaration":
            pairs = syn.declared_names(n)
        elif n.type == "assignment_expression" and syn.text(n.child_by_field_name("operator")) == "=":
            pairs = [(syn.text(n.child_by_field_name("left")), n.child_by_field_name("right"))]
        for name, value in pairs:
            v = syn.strip_parens(value)
            if v is None or v.type != "binary_expression":
                continue
            if syn.text(v.child_by_field_name("operator")) != "<<":
                continue
            one = syn.const_eval(v.child_by_field_name("left"))
            k = v.child_by_field_name("right")
            if one is not None and one.value == 1 and syn.const_eval(k) is None:
                out[name] = syn.text(k)
    return out


@rule(id="I1", name="division-by-runtime-power-of-two", priority=Priority.LOW, section="BPG 11.1.1", layers="S")
def check_i1(ctx: Any) -> Iterator[Finding]:
    """Integer `/` or `%` by a power of two that the compiler cannot see.

    What it does:
        Flags `x / n` and `x % n` (and `/=`, `%=`) in device code where `n` is a power of two known
        only at run time: the built-in `warpSize`, or a variable set from `1 << k` with a run-time
        `k`. A literal divisor (`i / 32`, `i % 16`) is not flagged: the compiler already turns it
        into shifts and masks (with a couple of extra instructions for the rounding of negative
        signed values, which is not worth a finding).

    Why it matters:
        Integer division and modulo have no single instruction on the GPU; each becomes a sequence
        of some twenty instructions. When the divisor is a power of two, a shift and a mask give
        the same result for non-negative values in one instruction each, but the compiler can only
        use them when it can prove the divisor is a power of two.

    Example:
        ```cuda
        int lane = threadIdx.x % warpSize;
        int warp = threadIdx.x / warpSize;
        ```

    Fix:
        ```cuda
        int lane = threadIdx.x & 31;   // warpSize is 32 on every CUDA GPU so far
        int warp = threadIdx.x >> 5;
        // for n = 1 << k: i >> k and i & (n - 1)
        ```
    """
    src = ctx.source
    for fn in device_functions(src):
        pow2 = _runtime_pow2_names(fn.body)
        for n in syn.nodes_of(fn.body, "binary_expression", "assignment_expression"):
            if n.type == "binary_expression":
                op = syn.text(n.child_by_field_name("operator"))
            elif n.type == "assignment_expression":
                op = syn.text(n.child_by_field_name("operator")).rstrip("=")
            else:
                continue
            if op not in {"/", "%"}:
                continue
            rhs = syn.strip_parens(n.child_by_field_name("right"))
            name = syn.text(rhs) if rhs is not None and rhs.type == "identifier" else ""
            if name == "warpSize":
                alt = "& 31" if op == "%" else ">> 5"
                yield finding(
                    "I1", src, syn.line(n),
                    f"`{syn.text(n)}`: warpSize is read at run time, so this {'modulo' if op == '%' else 'division'}"
                    " compiles to an integer division sequence although the divisor is 32",
                    f"use `{alt}` (and a named constant for 32) instead of `{op} warpSize`",
                    kernel=fn.name, facts=(("divisor", "warpSize"),),
                )
            elif name in pow2:
                k = pow2[name]
                alt = f"& ({name} - 1)" if op == "%" else f">> ({k})"
                yield finding(
                    "I1", src, syn.line(n),
                    f"`{syn.text(n)}`: `{name}` is `1 << {k}`, a power of two known only at run time, so the"
                    f" {'modulo' if op == '%' else 'division'} becomes a full integer division sequence",
                    f"use `{alt}` (valid for non-negative values)",
                    kernel=fn.name, facts=(("divisor", name), ("shift", k)),
                )


# ----------------------------------------------------------------------------- I2

_UNSIGNED_TYPES = {"size_t", "uint32_t", "uint64_t", "unsigned", "uint", "uint16_t", "uint8_t"}


def _is_unsigned(type_text: str) -> bool:
    words = type_text.replace("const", " ").split()
    return "unsigned" in words or any(w in _UNSIGNED_TYPES for w in words)


@rule(id="I2", name="unsigned-loop-counter", priority=Priority.MEDIUM_LOW, section="BPG 11.1.2", layers="S")
def check_i2(ctx: Any) -> Iterator[Finding]:
    """Loop counter of an unsigned type in device code.

    What it does:
        Flags `for` loops in device code whose induction variable is declared in the loop header
        with an unsigned type (`unsigned`, `unsigned int`, `size_t`, `uint32_t`, ...).

    Why it matters:
        Unsigned overflow is defined to wrap around in C++, so the compiler must keep the wrap-around
        possible and gives up optimizations such as strength reduction of the index arithmetic.
        Signed overflow is undefined, which lets the compiler assume the counter never wraps and
        optimize more aggressively.

    Example:
        ```cuda
        for (unsigned int i = threadIdx.x; i < n; i += blockDim.x) sum += x[i];
        ```

    Fix:
        ```cuda
        for (int i = threadIdx.x; i < n; i += blockDim.x) sum += x[i];
        ```
    """
    src = ctx.source
    for fn in device_functions(src):
        for n in syn.nodes_of(fn.body, "for_statement"):
            if n.type != "for_statement":
                continue
            init = n.child_by_field_name("initializer")
            if init is None or init.type != "declaration":
                continue
            ty = syn.text(init.child_by_field_name("type"))
            if not _is_unsigned(ty):
                continue
            names = [name for name, _ in syn.declared_names(init)]
            yield finding(
                "I2", src, syn.line(n),
                f"loop counter `{', '.join(names)}` is `{ty}`: defined wrap-around blocks loop optimizations",
                f"declare the counter as `int` (or `long long` when the range needs it)",
                kernel=fn.name, facts=(("induction_type", ty),),
            )


# ----------------------------------------------------------------------------- I3

_SQRT = {"sqrt", "sqrtf"}


@rule(id="I3", name="reciprocal-of-sqrt", priority=Priority.INFO, section="BPG 11.1.3", layers="S")
def check_i3(ctx: Any) -> Iterator[Finding]:
    """`1 / sqrt(x)` written out instead of the reciprocal square root.

    What it does:
        Flags divisions whose numerator is the constant 1 and whose denominator is a call of
        `sqrt` or `sqrtf`, in device code.

    Why it matters:
        The GPU has a reciprocal square root instruction. Written as a division of a square root,
        the expression costs a square root and a division; the compiler only fuses the two in some
        flag combinations (it must keep IEEE-correct division and square root by default).

    Example:
        ```cuda
        float inv = 1.0f / sqrtf(d2);
        ```

    Fix:
        ```cuda
        float inv = rsqrtf(d2);   // rsqrt() for double
        ```
    """
    src = ctx.source
    for fn in device_functions(src):
        for n in syn.nodes_of(fn.body, "binary_expression"):
            if n.type != "binary_expression" or syn.text(n.child_by_field_name("operator")) != "/":
                continue
            num = syn.const_eval(n.child_by_field_name("left"))
            den = syn.strip_parens(n.child_by_field_name("right"))
            if num is None or num.value != 1 or den is None or den.type != "call_expression":
                continue
            name = syn.call_name(den)
            if name not in _SQRT:
                continue
            args = syn.call_args(den)
            arg = syn.text(args[0]) if args else "x"
            alt = f"rsqrtf({arg})" if name == "sqrtf" else f"rsqrt({arg})"
            yield finding(
                "I3", src, syn.line(n),
                f"`{syn.text(n)}` computes a square root and a division",
                f"use `{alt}`",
                kernel=fn.name, facts=(("expression", syn.text(n)),),
            )


# ----------------------------------------------------------------------------- I4


def _types_used(fn_node: Any) -> set[str]:
    out = set()
    for n in syn.nodes_of(fn_node, "primitive_type", "type_identifier"):
        if n.type in {"primitive_type", "type_identifier"}:
            out.add(syn.text(n))
    return out


def _constant_root(lit: Any) -> Any:
    """Climb from a literal through the enclosing constant subexpression."""
    node = lit
    while node.parent is not None:
        p = node.parent
        if p.type in {"parenthesized_expression"}:
            node = p
            continue
        if p.type == "unary_expression" and syn.const_eval(p) is not None:
            node = p
            continue
        if p.type == "binary_expression" and syn.const_eval(p) is not None:
            node = p
            continue
        break
    return node


@rule(id="I4", name="double-literal-in-float-code", priority=Priority.LOW, section="BPG 11.1.4", layers="S C")
def check_i4(ctx: Any) -> Iterator[Finding]:
    """Double-precision constant in single-precision arithmetic.

    What it does:
        Flags floating-point literals without an `f` suffix (`0.5`, `1e-3`, `2.0`) used as an
        operand of `+ - * /` (or `+= -= *= /=`) next to a non-constant operand, in device functions
        that work in `float` and declare nothing as `double`. Functions that use `double` on purpose
        are left alone; so are literals that only initialize a variable (`float a = 0.5;` is
        converted at compile time) and comparisons.

    Why it matters:
        C++ promotes `x * 0.5` to double when `x` is a float: the value is converted to double, the
        multiply runs on the double-precision units (a small fraction of the float throughput on
        most GPUs) and the result is converted back. The compiler can narrow a single operation back
        to float only when the constant is exact in float and the result is stored as float at once;
        the compiled layer (F2F and DMUL/DFMA in SASS) tells which case occurred.

    Example:
        ```cuda
        y[i] = 0.5 * x[i] + 0.1;
        ```

    Fix:
        ```cuda
        y[i] = 0.5f * x[i] + 0.1f;
        ```
    """
    src = ctx.source
    for fn in device_functions(src):
        types = _types_used(fn.node)
        if "double" in types or not any(t.startswith("float") for t in types):
            continue
        seen: set[tuple[int, int]] = set()
        for n in syn.nodes_of(fn.body, "number_literal"):
            if n.type != "number_literal":
                continue
            c = syn.parse_number(syn.text(n))
            if c is None or c.kind != "double":
                continue
            root = _constant_root(n)
            parent = root.parent
            if parent is None:
                continue
            op = syn.text(parent.child_by_field_name("operator"))
            if parent.type == "binary_expression" and op in _ARITH:
                other = parent.child_by_field_name("right" if parent.child_by_field_name("left") == root else "left")
                if not syn.has_non_constant(other):
                    continue
            elif parent.type == "assignment_expression" and op in {"+=", "-=", "*=", "/="}:
                if parent.child_by_field_name("right") != root:
                    continue
            else:
                continue
            key = (root.start_byte, root.end_byte)
            if key in seen:
                continue
            seen.add(key)
            lit = syn.text(root)
            yield finding(
                "I4", src, syn.line(n),
                f"`{lit}` is a double constant in float arithmetic (`{syn.text(parent)}`): the operation is"
                " promoted to double precision",
                "add the `f` suffix to the constant (e.g. `0.5f`), or use `-Werror` with a double-promotion warning",
                kernel=fn.name, facts=(("literal", lit),),
            )


# ----------------------------------------------------------------------------- pow family (I5, I8, I9)

# exponent -> (double form, float form); `x` stands for the base.
_FRACTIONS: dict[tuple[int, int], str] = {
    (1, 2): "sqrt(x)", (-1, 2): "rsqrt(x)",
    (1, 3): "cbrt(x)", (-1, 3): "rcbrt(x)",
    (1, 4): "sqrt(sqrt(x))", (-1, 4): "rsqrt(sqrt(x))",
    (1, 6): "cbrt(sqrt(x))", (-1, 6): "rcbrt(sqrt(x))",
    (1, 9): "cbrt(cbrt(x))", (-1, 9): "rcbrt(cbrt(x))",
    (2, 3): "r = cbrt(x); r * r", (-2, 3): "r = rcbrt(x); r * r",
    (3, 4): "r = sqrt(x); r * sqrt(r)", (-3, 4): "r = rsqrt(x); r * sqrt(r)",
    (4, 3): "x * cbrt(x)", (-4, 3): "rcbrt(x) / x",
    (3, 2): "x * sqrt(x)", (-3, 2): "rsqrt(x) / x",
    (5, 4): "x * sqrt(sqrt(x))", (-5, 4): "rsqrt(sqrt(x)) / x",
    (7, 6): "x * cbrt(sqrt(x))", (-7, 6): "rcbrt(sqrt(x)) / x",
}


def _float_form(expr: str) -> str:
    for f in ("rsqrt", "rcbrt", "sqrt", "cbrt"):
        expr = expr.replace(f"{f}(", f"{f}\0(")
    return expr.replace("\0", "f")


def _match_fraction(value: float) -> tuple[int, int] | None:
    for (p, q) in _FRACTIONS:
        if abs(value - p / q) < 1e-3:
            return (p, q)
    return None


def _pow_calls(src: Any) -> Iterator[tuple[Any, Any, Any, Any]]:
    """(function, call, base node, exponent node) for every two-argument pow in device code."""
    for fn in device_functions(src):
        for c in syn.calls(fn.body):
            if syn.call_name(c) in _POW:
                args = syn.call_args(c)
                if len(args) == 2:
                    yield fn, c, args[0], args[1]


def _is_truncating_int_division(node: Any) -> bool:
    node = syn.strip_parens(node)
    if node is None or node.type != "binary_expression" or syn.text(node.child_by_field_name("operator")) != "/":
        return False
    a = syn.const_eval(node.child_by_field_name("left"))
    b = syn.const_eval(node.child_by_field_name("right"))
    return (a is not None and b is not None and a.kind == b.kind == "int" and b.value != 0
            and a.value % b.value != 0)


@rule(id="I5", name="fractional-power-via-pow", priority=Priority.INFO, section="BPG 11.1.5", layers="S")
def check_i5(ctx: Any) -> Iterator[Finding]:
    """`pow()` with a constant fractional exponent that roots express faster.

    What it does:
        Flags `pow`/`powf` calls in device code whose exponent folds to one of ±1/2, ±1/3, ±1/4,
        ±1/6, ±1/9, ±2/3, ±3/4, ±4/3, ±3/2, ±5/4, ±7/6, and suggests the equivalent built from
        `sqrt`, `rsqrt`, `cbrt` and `rcbrt`. It also flags exponents written as an integer division
        such as `1/3`, which C++ evaluates to 0.

    Why it matters:
        `pow` is a general routine (logarithm, multiply, exponential, plus special-case handling).
        The root functions are much cheaper and usually at least as accurate. Note the sign
        handling differs: `cbrt` accepts negative arguments where `pow(x, 1.0/3)` returns NaN.

    Example:
        ```cuda
        float r = powf(v, 1.0f / 3.0f);
        float s = pow(d, -0.5);
        ```

    Fix:
        ```cuda
        float r = cbrtf(v);
        float s = rsqrt(d);
        ```
    """
    src = ctx.source
    for fn, c, base, expo in _pow_calls(src):
        if _is_truncating_int_division(expo):
            yield finding(
                "I5", src, syn.line(c),
                f"`{syn.text(c)}`: the exponent `{syn.text(expo)}` is an integer division and equals"
                f" {syn.const_eval(expo).value}",
                "write the exponent in floating point, or better use the root function it stands for"
                " (e.g. `cbrt(x)` for 1/3)",
                kernel=fn.name, facts=(("exponent", syn.text(expo)),),
            )
            continue
        e = syn.const_eval(expo)
        if e is None or e.kind == "int":
            continue
        frac = _match_fraction(float(e.value))
        if frac is None:
            continue
        alt = _FRACTIONS[frac]
        if _is_float_fn(syn.call_name(c)) or e.kind == "float":
            alt = _float_form(alt)
        alt = alt.replace("x", syn.text(base)) if base.type == "identifier" else alt
        yield finding(
            "I5", src, syn.line(c),
            f"`{syn.text(c)}` raises to the constant power {frac[0]}/{frac[1]} with the general pow routine",
            f"use `{alt}`",
            kernel=fn.name, facts=(("exponent", f"{frac[0]}/{frac[1]}"),),
        )


@rule(id="I8", name="small-integer-power-via-pow", priority=Priority.MEDIUM, section="BPG 11.1.6", layers="S")
def check_i8(ctx: Any) -> Iterator[Finding]:
    """`pow()` with a small constant integer exponent.

    What it does:
        Flags `pow`/`powf` calls in device code whose exponent is the constant 2, 3 or 4 (written
        as `2`, `2.0`, `3.0f`, ...).

    Why it matters:
        `pow` handles any real exponent, with a logarithm, an exponential and special cases; for a
        square or a cube one or two multiplications give the result much faster (and exactly
        rounded for the square).

    Example:
        ```cuda
        float e = powf(dx, 2.0f) + powf(dy, 2.0f);
        ```

    Fix:
        ```cuda
        float e = dx * dx + dy * dy;
        ```
    """
    src = ctx.source
    for fn, c, base, expo in _pow_calls(src):
        e = syn.const_eval(expo)
        if e is None or float(e.value) not in {2.0, 3.0, 4.0}:
            continue
        k = int(e.value)
        b = syn.text(base)
        alt = " * ".join([b if base.type == "identifier" else "t"] * k)
        if base.type != "identifier":
            alt = f"t = {b}; {alt}"
        yield finding(
            "I8", src, syn.line(c),
            f"`{syn.text(c)}` computes a power {k} with the general pow routine",
            f"multiply: `{alt}`",
            kernel=fn.name, facts=(("exponent", k),),
        )


@rule(id="I9", name="pow-of-two-or-ten", priority=Priority.MEDIUM, section="BPG 11.1.6", layers="S")
def check_i9(ctx: Any) -> Iterator[Finding]:
    """`pow(2, x)` or `pow(10, x)` instead of the dedicated exponentials.

    What it does:
        Flags `pow`/`powf` calls in device code whose base is the constant 2 or 10 and whose
        exponent is not a constant.

    Why it matters:
        `exp2` and `exp10` (and their `f` versions) compute these powers directly; `pow` goes
        through its general path (logarithm of the base, multiply, exponential) and special-case
        checks.

    Example:
        ```cuda
        float scale = powf(2.0f, e);
        ```

    Fix:
        ```cuda
        float scale = exp2f(e);   // exp10f(e) for base 10; ldexpf(1.0f, n) for an integer n
        ```
    """
    src = ctx.source
    for fn, c, base, expo in _pow_calls(src):
        b = syn.const_eval(base)
        if b is None or float(b.value) not in {2.0, 10.0} or syn.const_eval(expo) is not None:
            continue
        f = "f" if _is_float_fn(syn.call_name(c)) or b.kind == "float" else ""
        func = ("exp2" if b.value == 2 else "exp10") + f
        yield finding(
            "I9", src, syn.line(c),
            f"`{syn.text(c)}` raises {int(b.value)} to a run-time power through the general pow routine",
            f"use `{func}({syn.text(expo)})`",
            kernel=fn.name, facts=(("base", int(b.value)),),
        )


# ----------------------------------------------------------------------------- I7, I10

_SIN = {"sin": "sincos", "sinf": "sincosf", "__sinf": "__sincosf", "sinpi": "sincospi", "sinpif": "sincospif"}
_COS = {"cos": "sincos", "cosf": "sincosf", "__cosf": "__sincosf", "cospi": "sincospi", "cospif": "sincospif"}


@rule(id="I7", name="sin-and-cos-of-one-argument", priority=Priority.INFO, section="BPG 11.1.6", layers="S")
def check_i7(ctx: Any) -> Iterator[Finding]:
    """Sine and cosine of the same argument computed separately.

    What it does:
        Flags a device function that calls both `sin` and `cos` (or `sinf`/`cosf`, `__sinf`/
        `__cosf`, `sinpi`/`cospi`) on the same argument, as written. The finding is on the first
        of the two calls.

    Why it matters:
        Both functions start with the same argument reduction. `sincos` computes the two results
        with one reduction, which saves most of the second call.

    Example:
        ```cuda
        float c = cosf(theta);
        float s = sinf(theta);
        ```

    Fix:
        ```cuda
        float s, c;
        sincosf(theta, &s, &c);
        ```
    """
    src = ctx.source
    for fn in device_functions(src):
        sins: dict[tuple[str, str], Any] = {}
        coss: dict[tuple[str, str], Any] = {}
        for c in syn.calls(fn.body):
            name = syn.call_name(c)
            args = syn.call_args(c)
            if len(args) != 1:
                continue
            key_arg = syn.norm(args[0])
            if name in _SIN:
                sins.setdefault((_SIN[name], key_arg), c)
            elif name in _COS:
                coss.setdefault((_COS[name], key_arg), c)
        for key in sorted(set(sins) & set(coss), key=lambda k: min(sins[k].start_byte, coss[k].start_byte)):
            a, b = sorted((sins[key], coss[key]), key=lambda n: n.start_byte)
            func, arg = key
            yield finding(
                "I7", src, syn.line(a),
                f"`{syn.text(a)}` and `{syn.text(b)}` (line {syn.line(b)}) reduce the same argument twice",
                f"compute both with `{func}({syn.text(syn.call_args(a)[0])}, &s, &c)`",
                kernel=fn.name, facts=(("argument", arg), ("lines", (syn.line(a), syn.line(b)))),
            )


_TRIG = {"sin": "sinpi", "cos": "cospi", "sinf": "sinpif", "cosf": "cospif",
         "sincos": "sincospi", "sincosf": "sincospif"}
_PI_NAMES = {"M_PI", "CUDART_PI", "CUDART_PI_F", "M_PI_F", "PI", "pi", "kPi", "PI_F"}


def _pi_names(src: Any) -> set[str]:
    names = set(_PI_NAMES)
    for name, value in (getattr(src, "defines", None) or {}).items():
        c = syn.parse_number(str(value).strip("() "))
        if c is not None and abs(float(c.value) - math.pi) < 1e-3:
            names.add(name)
    return names


def _is_pi(node: Any, names: set[str]) -> bool:
    node = syn.strip_parens(node)
    if node is None:
        return False
    if node.type == "identifier":
        return syn.text(node) in names
    if node.type == "number_literal":
        c = syn.parse_number(syn.text(node))
        return c is not None and c.kind != "int" and abs(float(c.value) - math.pi) < 1e-3
    return False


def _numerator_factors(node: Any) -> list[Any]:
    """Factors of a product, following `*` and the left side of `/`."""
    node = syn.strip_parens(node)
    if node is not None and node.type == "binary_expression":
        op = syn.text(node.child_by_field_name("operator"))
        if op == "*":
            return _numerator_factors(node.child_by_field_name("left")) + _numerator_factors(
                node.child_by_field_name("right"))
        if op == "/":
            return _numerator_factors(node.child_by_field_name("left"))
    return [node] if node is not None else []


@rule(id="I10", name="trig-of-pi-times-x", priority=Priority.INFO, section="BPG 11.1.6", layers="S")
def check_i10(ctx: Any) -> Iterator[Finding]:
    """`sin(π·x)` written with an explicit π.

    What it does:
        Flags `sin`, `cos`, `sincos` (and `f` versions) in device code whose argument is a product
        with a factor π: `M_PI`, `CUDART_PI(_F)`, a `#define` equal to π, or a literal such as
        `3.14159f`.

    Why it matters:
        `sinpi(x)` computes sin(πx) without first multiplying by a rounded π, so it is both faster
        (a simpler argument reduction) and more accurate, especially for large `x`.

    Example:
        ```cuda
        float w = sinf(3.14159265f * x);
        ```

    Fix:
        ```cuda
        float w = sinpif(x);
        ```
    """
    src = ctx.source
    names = _pi_names(src)
    for fn in device_functions(src):
        for c in syn.calls(fn.body):
            name = syn.call_name(c)
            args = syn.call_args(c)
            if name not in _TRIG or not args:
                continue
            factors = _numerator_factors(args[0])
            if len(factors) < 2 or not any(_is_pi(f, names) for f in factors):
                continue
            yield finding(
                "I10", src, syn.line(c),
                f"`{syn.text(c)}` multiplies by π before the {name} call",
                f"use `{_TRIG[name]}()` on the argument divided by π (drop the π factor)",
                kernel=fn.name, facts=(("call", name),),
            )


# ----------------------------------------------------------------------------- I13, I14

_HALF_TYPES = {"__half", "half", "__nv_bfloat16", "nv_bfloat16"}
_HALF_SCALAR_INTRINSICS = {"__hadd", "__hsub", "__hmul", "__hdiv", "__hfma", "__hneg", "__hadd_sat",
                           "__hmul_sat", "__hfma_sat", "__hfma_relu"}


def _half_names(fn_node: Any) -> set[str]:
    """Variables and pointer parameters of scalar half/bfloat16 type in a function."""
    out: set[str] = set()
    for n in syn.nodes_of(fn_node, "declaration", "parameter_declaration"):
        if n.type in {"declaration", "parameter_declaration"}:
            ty = syn.text(n.child_by_field_name("type")).replace("const", "").strip()
            if ty in _HALF_TYPES:
                if n.type == "declaration":
                    out.update(name for name, _ in syn.declared_names(n))
                else:
                    out.update(name for name, _ in syn.declared_names(n) if name)
    return out


def _is_half_operand(node: Any, halves: set[str]) -> bool:
    node = syn.strip_parens(node)
    if node is None:
        return False
    if node.type == "identifier":
        return syn.text(node) in halves
    if node.type == "subscript_expression":
        return syn.text(node.child_by_field_name("argument")) in halves
    return False


@rule(id="I13", name="scalar-half-arithmetic-in-loop", priority=Priority.INFO, section="PG 5.4.1", layers="S")
def check_i13(ctx: Any) -> Iterator[Finding]:
    """Scalar `__half`/`__nv_bfloat16` arithmetic inside a loop.

    What it does:
        Flags loops in device code that do arithmetic (`+ - * /`, compound assignments, or the
        scalar intrinsics `__hadd`, `__hmul`, `__hfma`, ...) on variables or arrays of type
        `__half`, `half` or `__nv_bfloat16`. One finding per innermost loop, on its first such
        operation.

    Why it matters:
        The half-precision units process two values per instruction when they are packed in a
        `__half2` (`__nv_bfloat162`). Scalar half arithmetic uses half of that throughput; in a
        loop that is the bulk of the work.

    Example:
        ```cuda
        for (int i = tid; i < n; i += stride) y[i] = __hfma(a, x[i], y[i]);
        ```

    Fix:
        ```cuda
        // n even, data 4-byte aligned: process pairs
        for (int i = tid; i < n / 2; i += stride) y2[i] = __hfma2(a2, x2[i], y2[i]);
        ```
    """
    src = ctx.source
    for fn in device_functions(src):
        halves = _half_names(fn.node)
        if not halves:
            continue
        reported: set[int] = set()
        for n in syn.nodes_of(fn.body, "binary_expression", "assignment_expression", "call_expression"):
            hit = False
            if n.type == "binary_expression" and syn.text(n.child_by_field_name("operator")) in _ARITH:
                hit = _is_half_operand(n.child_by_field_name("left"), halves) or _is_half_operand(
                    n.child_by_field_name("right"), halves)
            elif n.type == "assignment_expression" and syn.text(n.child_by_field_name("operator")) in {
                    "+=", "-=", "*=", "/="}:
                hit = _is_half_operand(n.child_by_field_name("left"), halves)
            elif n.type == "call_expression" and syn.call_name(n) in _HALF_SCALAR_INTRINSICS:
                hit = True
            if not hit:
                continue
            loops = syn.enclosing_loops(n)
            if not loops or loops[0].start_byte in reported:
                continue
            reported.add(loops[0].start_byte)
            yield finding(
                "I13", src, syn.line(n),
                f"scalar half-precision arithmetic `{syn.text(n)}` in the loop at line {syn.line(loops[0])}"
                " uses half of the half-precision throughput",
                "pack pairs into `__half2` / `__nv_bfloat162` and use the paired intrinsics (`__hadd2`, `__hfma2`, ...)",
                kernel=fn.name, facts=(("loop_line", syn.line(loops[0])),),
            )


@rule(id="I14", name="legacy-mul24", priority=Priority.INFO, section="PG 5.4.1", layers="S")
def check_i14(ctx: Any) -> Iterator[Finding]:
    """`__mul24`/`__umul24` in device code.

    What it does:
        Flags calls of the 24-bit multiply intrinsics `__mul24` and `__umul24`.

    Why it matters:
        They were a speed trick on the first CUDA GPUs. Since compute capability 2.0 the GPU has a
        native 32-bit integer multiply and the 24-bit forms are emulated with several instructions:
        they are slower, and they silently drop the high bits of the operands.

    Example:
        ```cuda
        int i = __mul24(blockIdx.x, blockDim.x) + threadIdx.x;
        ```

    Fix:
        ```cuda
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        ```
    """
    src = ctx.source
    for fn in device_functions(src):
        for c in syn.calls(fn.body):
            name = syn.call_name(c)
            if name in {"__mul24", "__umul24"}:
                args = syn.call_args(c)
                expr = " * ".join(syn.text(a) for a in args) if len(args) == 2 else "a * b"
                yield finding(
                    "I14", src, syn.line(c),
                    f"`{syn.text(c)}` is emulated on current GPUs and truncates its operands to 24 bits",
                    f"use a plain multiply: `{expr}`",
                    kernel=fn.name, facts=(("intrinsic", name),),
                )


# ----------------------------------------------------------------------------- I17


def _written_pointers(body: Any) -> set[str]:
    """Names of pointers the body stores through (`p[i] = ...`, `*p = ...`, `p[i]++`, atomics)."""
    out: set[str] = set()
    for n in syn.nodes_of(body, "assignment_expression", "update_expression", "call_expression"):
        target = None
        if n.type == "assignment_expression":
            target = n.child_by_field_name("left")
        elif n.type == "update_expression":
            target = n.child_by_field_name("argument")
        elif n.type == "call_expression" and syn.call_name(n).startswith("atomic"):
            args = syn.call_args(n)
            target = args[0] if args else None
        target = syn.strip_parens(target)
        if target is None:
            continue
        if target.type in {"subscript_expression", "pointer_expression"} or (
                n.type == "call_expression"):
            name = syn.base_name(target)
            if name:
                out.add(name)
    return out


@rule(id="I17", name="pointer-params-without-restrict", priority=Priority.INFO, section="PG 5.4", layers="S")
def check_i17(ctx: Any) -> Iterator[Finding]:
    """Kernel pointer parameters that may alias.

    What it does:
        Flags a kernel with two or more pointer parameters, at least one of them written through,
        where some pointer parameters lack `__restrict__`. Kernels with a single pointer, or that
        write through none, are left alone.

    Why it matters:
        Without `__restrict__` the compiler must assume that a store through one pointer can change
        what another pointer reads, so it reloads values after every store and cannot keep them in
        registers or move loads earlier; `const __restrict__` inputs may also go through the
        read-only data cache. The promise must be true: the pointers must not overlap. More
        registers may be used, which can lower occupancy.

    Example:
        ```cuda
        __global__ void axpy(float a, const float *x, float *y, int n);
        ```

    Fix:
        ```cuda
        __global__ void axpy(float a, const float *__restrict__ x, float *__restrict__ y, int n);
        ```
    """
    src = ctx.source
    for k, node in kernel_nodes(src):
        ptrs = [p for p in k.params if p.is_pointer]
        if len(ptrs) < 2:
            continue
        plain = [p for p in ptrs if not p.is_restrict]
        if not plain:
            continue
        written = _written_pointers(node.child_by_field_name("body")) & {p.name for p in ptrs}
        if not written:
            continue
        names = ", ".join(p.name for p in plain)
        yield finding(
            "I17", src, k.line,
            f"kernel `{k.name}` writes through {', '.join(sorted(written))} while pointer parameters"
            f" {names} lack `__restrict__`: the compiler must assume they alias",
            "mark the pointer parameters `__restrict__` (and inputs `const`) if they never overlap",
            kernel=k.name, facts=(("unrestricted", tuple(p.name for p in plain)), ("written", tuple(sorted(written)))),
        )
