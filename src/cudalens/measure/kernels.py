"""Compile any kernel by its C++ name: ``ns::kernel<float, 128>`` (templates, namespaces, overloads).

Public API (used by ``cudalens bench --kernel``, the labs and the tuner):

- :func:`compile_named` ``(source, names, arch, build=...)`` -> :class:`NamedCubin`: one cubin and,
  for every *name expression*, the lowered (mangled) symbol the driver knows it by. No GPU needed.
- :func:`load_kernel` ``(cubin, name)`` -> a ``cuda.core`` kernel, launchable with
  ``cuda.core.launch`` (needs a GPU; the device must be current).
- :class:`BuildContext`: include directories, macros and extra flags of the user's build.
- :func:`normalize_name` / :func:`parse_kernel_names`: the name grammar and its one-line errors.

Two compilers, in this order:

1. **NVRTC through cuda.core** (``Program(...).compile("cubin", name_expressions=...)``): NVRTC
   instantiates each template named and reports its lowered name. It compiles device code only,
   so files with host code (``main``, ``<stdio.h>``, ``<<<...>>>`` launches) fail there.
2. **nvcc** (the toolchain's finder: wheels first): the file is compiled with ``-cubin`` after a
   line that takes each named kernel's address (which instantiates templates the file itself never
   launches); the lowered names are found by demangling the cubin's symbols and matching them to
   the name expressions (spaces ignored). This is what handles whole programs such as cuda-samples.

``compiler="nvrtc"`` or ``"nvcc"`` forces one; ``"auto"`` tries NVRTC, then nvcc, and the error of
both is reported when neither works.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from cudalens.compiled.names import parameters_start
from cudalens.errors import InputError, ToolchainError

COMPILERS = ("auto", "nvrtc", "nvcc")
_IDENT = r"[A-Za-z_]\w*"
_NAME_RE = re.compile(rf"^(::)?{_IDENT}(::{_IDENT})*(<.*>)?$")


@dataclass(frozen=True)
class BuildContext:
    """How the user's code is built: ``-I`` directories, ``-D`` macros (``NAME`` or ``NAME=VALUE``),
    the C++ standard and any further flags (passed to nvcc as given; NVRTC gets those it knows)."""

    include_dirs: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    std: str = "c++17"

    @classmethod
    def of(cls, build: Any) -> "BuildContext":
        """A BuildContext from another build-context record (duck-typed: ``include_dirs``,
        ``defines``, ``flags``/``extra_flags``, ``std``), a mapping with those keys, or None."""
        if build is None:
            return cls()
        if isinstance(build, cls):
            return build
        get = build.get if isinstance(build, Mapping) else (lambda k, d=None: getattr(build, k, d))
        defines = get("defines", ()) or ()
        if isinstance(defines, Mapping):
            defines = [k if v is None else f"{k}={v}" for k, v in defines.items()]
        flags = get("flags", None) or get("extra_flags", ()) or ()
        return cls(tuple(map(str, get("include_dirs", ()) or ())), tuple(map(str, defines)),
                   tuple(map(str, flags)), str(get("std", None) or "c++17"))

    def to_dict(self) -> dict[str, Any]:
        return {"include_dirs": list(self.include_dirs), "defines": list(self.defines),
                "flags": list(self.flags), "std": self.std}


@dataclass(frozen=True)
class NamedCubin:
    """A compiled cubin and the lowered symbol of each requested name expression."""

    cubin: bytes
    symbols: Mapping[str, str]  # normalized name expression -> lowered (mangled) name
    arch: str
    compiler: str  # "nvrtc 13.0" or "nvcc 13.0.88 (/path/to/nvcc)"
    options: tuple[str, ...]
    origin: str = "<string>"
    log: str = field(default="", compare=False)

    def symbol(self, name: str) -> str:
        key = normalize_name(name)
        if key not in self.symbols:
            raise InputError(f"kernel {name!r} was not compiled (compiled: {', '.join(self.symbols)})")
        return self.symbols[key]

    def certificate(self) -> dict[str, Any]:
        return {"compiler": self.compiler, "arch": self.arch, "options": list(self.options),
                "symbols": dict(self.symbols), "origin": self.origin}


def normalize_name(name: str) -> str:
    """``ns::k< float ,128 >`` -> ``ns::k<float,128>``: whitespace dropped except between words
    (``unsigned int``), so the user's spelling and the demangler's compare equal."""
    text = " ".join(name.split())
    return re.sub(r"\s*([<>,:*&()\[\]])\s*", r"\1", text)


def parse_kernel_names(text: str | Iterable[str]) -> tuple[str, ...]:
    """Validate one name expression (or several); InputError names the bad one."""
    names = [text] if isinstance(text, str) else list(text)
    out = []
    for raw in names:
        name = raw.strip()
        if not name or not _NAME_RE.match(name) or name.count("<") != name.count(">"):
            raise InputError(
                f"--kernel {raw!r}: expected a kernel name such as saxpy, ns::kernel or "
                "ns::kernel<float, 128> (a C++ name expression)")
        out.append(name)
    return tuple(out)


def arch_of(cc: tuple[int, int] | str) -> str:
    """(9, 0) / "9.0" / "sm_90" -> "sm_90"."""
    if isinstance(cc, str):
        if cc.startswith(("sm_", "compute_")):
            return cc
        major, _, minor = cc.partition(".")
        return f"sm_{int(major)}{int(minor or 0)}"
    return f"sm_{cc[0]}{cc[1]}"


def _wheel_include() -> list[str]:
    from cudalens.compiled.toolchain import wheel_root  # noqa: PLC0415

    root = wheel_root()
    inc = root / "include" if root is not None else None
    if inc is None or not inc.is_dir():
        return []
    # CCCL (nv/target, cuda/std) sits in include/cccl in the nvidia-cuda-cccl wheel
    return [str(inc)] + ([str(inc / "cccl")] if (inc / "cccl").is_dir() else [])


def _split_define(d: str) -> str | tuple[str, str]:
    name, eq, value = d.partition("=")
    return (name, value) if eq else name


_NVRTC_FLAGS = {"--use_fast_math": "use_fast_math", "-use_fast_math": "use_fast_math",
                "-lineinfo": "lineinfo", "--generate-line-info": "lineinfo", "-O3": None}


def _program_options(arch: str, build: BuildContext, name: str) -> Any:
    """cuda.core ProgramOptions for ``build``; InputError for a flag NVRTC cannot take."""
    from cuda.core import ProgramOptions  # noqa: PLC0415

    kw: dict[str, Any] = {}
    for flag in build.flags:
        if flag in _NVRTC_FLAGS:
            if _NVRTC_FLAGS[flag]:
                kw[_NVRTC_FLAGS[flag]] = True
        elif flag.startswith(("-maxrregcount=", "--maxrregcount=")):
            kw["max_register_count"] = int(flag.split("=", 1)[1])
        else:
            raise ToolchainError(f"flag {flag!r} is not passed to NVRTC")
    includes = list(build.include_dirs) + _wheel_include()
    defines = [_split_define(d) for d in build.defines]
    return ProgramOptions(name=name, arch=arch, std=build.std, include_path=includes or None,
                          define_macro=defines or None, **kw)


def _nvrtc(source: str, names: Sequence[str], arch: str, build: BuildContext, origin: str) -> NamedCubin:
    try:
        from cuda.bindings import nvrtc  # noqa: PLC0415
        from cuda.core import Program  # noqa: PLC0415

        version = nvrtc.nvrtcVersion()
        if int(version[0]) != 0:
            raise ToolchainError("libnvrtc did not report its version")
    except ToolchainError:
        raise
    except Exception as exc:  # noqa: BLE001 - libnvrtc missing: pip install nvidia-cuda-nvrtc
        raise ToolchainError(f"NVRTC unavailable ({type(exc).__name__}; pip install nvidia-cuda-nvrtc)") from None
    opts = _program_options(arch, build, os.path.basename(origin))
    try:
        obj = Program(source, "c++", options=opts).compile("cubin", name_expressions=list(names))
    except Exception as exc:  # noqa: BLE001 - NVRTC's compile log is in the message
        raise ToolchainError(f"NVRTC could not compile {origin}: {str(exc).strip()[-1500:]}") from None
    lowered = getattr(obj, "symbol_mapping", None) or getattr(obj, "_sym_map", {})  # cuda.core < 0.4: private
    symbols = {normalize_name(n): (lowered[n].decode() if isinstance(lowered[n], bytes) else lowered[n])
               for n in names}
    flags = [f"-arch={arch}", f"-std={build.std}", *(f"-I{i}" for i in build.include_dirs),
             *(f"-D{d}" for d in build.defines), *build.flags]
    return NamedCubin(bytes(obj.code), symbols, arch, f"nvrtc {version[1]}.{version[2]}", tuple(flags), origin)


def _instantiation_lines(names: Sequence[str]) -> str:
    lines = ["", "// cudalens: take each named kernel's address so templates are instantiated"]
    for i, n in enumerate(names):
        lines.append(f"static void* const __cudalens_keep_{i} __attribute__((unused)) = (void*)&{n};")
    return "\n".join(lines) + "\n"


_LITERAL_SUFFIX = re.compile(r"\b(\d+)(?:[uU][lL]{0,2}|[lL]{1,2}[uU]?)\b")
_CAST_LITERAL = re.compile(r"\((?:unsigned|signed|int|long|short|char|size_t|std::size_t|\s)+\)(-?\d+)")


def _match_key(name: str) -> str:
    """A name for matching a demangled symbol: normalized, leading ``::`` dropped, integer literals
    plain. GNU c++filt writes an ``unsigned`` template argument 256 as ``256u`` and ``true``;
    cu++filt writes ``(unsigned int)256`` and ``(bool)1``; the user writes ``256``/``256U``/``true``."""
    text = normalize_name(name).lstrip(":")
    text = text.replace("(bool)1", "true").replace("(bool)0", "false")
    text = _CAST_LITERAL.sub(r"\1", text)
    return _LITERAL_SUFFIX.sub(r"\1", normalize_name(text))


def _function_head(demangled: str) -> str:
    """``void ns::k<float, (unsigned int)256>(float*, int)`` -> ``ns::k<float, (unsigned int)256>``:
    the text before the parameter list (the first ``(`` outside template brackets), without the
    return type."""
    head = demangled[:parameters_start(demangled)].strip()
    depth, start = 0, 0
    for i, ch in enumerate(head):  # the return type ends at the last space outside brackets
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == " " and depth == 0:
            start = i + 1
    return head[start:]


def _cubin_symbols(cubin: bytes) -> list[str]:
    """Mangled function names in a cubin (ELF symbol strings starting with _Z, plus plain names)."""
    found = sorted({m.decode() for m in re.findall(rb"_Z[A-Za-z0-9_]+", cubin)})
    return [s for s in found if not s.startswith("_ZZ")]


def _match_symbols(names: Sequence[str], mangled: Sequence[str], demangled: Mapping[str, str],
                   cubin: bytes) -> dict[str, str]:
    by_name: dict[str, str] = {}
    for sym in mangled:
        by_name.setdefault(_match_key(_function_head(demangled.get(sym, sym))), sym)
    out = {}
    for n in names:
        key = _match_key(n)
        if key in by_name:
            out[normalize_name(n)] = by_name[key]
        elif "<" not in key and "::" not in key and re.search(rb"\x00" + key.encode() + rb"\x00", cubin):
            out[normalize_name(n)] = key  # extern "C"
        else:
            near = [k for k in by_name if k.split("<")[0] == key.split("<")[0]]
            hint = f" (the cubin has {', '.join(near[:4])})" if near else ""
            raise InputError(f"kernel {n!r} not found in the compiled file{hint}")
    return out


def _nvcc(source: str, names: Sequence[str], arch: str, build: BuildContext, origin: str) -> NamedCubin:
    from cudalens.compiled.names import demangle_all  # noqa: PLC0415
    from cudalens.compiled.toolchain import discover  # noqa: PLC0415

    tc = discover()
    tool = tc.tools.get("nvcc")
    if tool is None:
        raise ToolchainError("nvcc not found (pip install nvidia-cuda-nvcc)")
    base_dir = os.path.dirname(os.path.abspath(origin)) if origin != "<string>" else None
    includes = ([base_dir] if base_dir else []) + list(build.include_dirs)
    flags = [f"-arch={arch}", f"-std={build.std}", *(f"-I{i}" for i in includes),
             *(f"-D{d}" for d in build.defines), *build.flags]
    with tempfile.TemporaryDirectory(prefix="cudalens_named_") as tmp:
        src, out = os.path.join(tmp, "kernel.cu"), os.path.join(tmp, "kernel.cubin")
        with open(src, "w", encoding="utf-8") as fh:
            fh.write(f'#line 1 "{origin}"\n' + source + _instantiation_lines(names))
        from cudalens.compiled.invocation import nvcc_command  # noqa: PLC0415

        work = os.path.join(tmp, "w")
        os.mkdir(work)
        # -D/-I values go into a wrapper file, never onto nvcc's command line (nvcc uses a shell)
        cmd, _ = nvcc_command(tool.path, src, work, ["-cubin", *flags], out, where="build context")
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=600, env=tc.env())
        if proc.returncode != 0:
            bad = sorted({int(i) for i in re.findall(r"__cudalens_keep_(\d+)", proc.stderr)})
            if bad:
                raise InputError(f"kernel {names[bad[0]]!r} not found in {origin} (no such kernel, or the "
                                 "template arguments do not fit it)")
            raise ToolchainError(f"nvcc could not compile {origin}: {proc.stderr.strip()[-1500:]}")
        with open(out, "rb") as fh:
            cubin = fh.read()
    mangled = _cubin_symbols(cubin)
    symbols = _match_symbols(names, mangled, demangle_all(mangled, tc.demangler), cubin)
    return NamedCubin(cubin, symbols, arch, f"nvcc {tool.version} ({tool.origin})", tuple(flags), origin,
                      proc.stderr.strip())


def compile_named(source: str, names: str | Sequence[str], cc: tuple[int, int] | str = (9, 0), *,
                  build: Any = None, origin: str = "<string>", compiler: str = "auto") -> NamedCubin:
    """Compile ``source`` for ``cc`` and find each kernel of ``names`` (C++ name expressions).

    ``build``: a :class:`BuildContext` (or any record/mapping with include_dirs/defines/flags/std).
    ``origin``: the file's path, for messages and for resolving its own ``#include "..."``.
    Raises InputError for a bad or missing name, ToolchainError when no compiler can build it.
    """
    if compiler not in COMPILERS:
        raise InputError(f"compiler {compiler!r}: choose from {', '.join(COMPILERS)}")
    wanted = parse_kernel_names(names)
    ctx = BuildContext.of(build)
    arch = arch_of(cc)
    if compiler == "nvcc":
        return _nvcc(source, wanted, arch, ctx, origin)
    if origin != "<string>":  # the file's own directory, as nvcc would search it
        ctx_nvrtc = BuildContext(ctx.include_dirs + (os.path.dirname(os.path.abspath(origin)),),
                                 ctx.defines, ctx.flags, ctx.std)
    else:
        ctx_nvrtc = ctx
    try:
        return _nvrtc(source, wanted, arch, ctx_nvrtc, origin)
    except ToolchainError as nvrtc_error:
        if compiler == "nvrtc":
            raise
        try:
            return _nvcc(source, wanted, arch, ctx, origin)
        except ToolchainError as nvcc_error:
            raise ToolchainError(f"{nvrtc_error}; and {nvcc_error}") from None


def load_kernel(compiled: NamedCubin, name: str) -> Any:
    """The ``cuda.core`` kernel ``name`` of ``compiled`` (current device; needs a GPU)."""
    from cuda.core import ObjectCode  # noqa: PLC0415

    sym = compiled.symbol(name)
    mapping = {normalize_name(name): sym.encode()}
    obj = ObjectCode.from_cubin(compiled.cubin, name=compiled.origin, symbol_mapping=mapping)
    return obj.get_kernel(normalize_name(name))
