"""Compile one .cu file to a cubin and read back what the compiler decided, per kernel.

Steps (each a tool call; see toolchain.py for which copies are used):

1. ``nvcc -cubin -arch=sm_XY -lineinfo -Xptxas -v [extra flags] -Xcompiler -MD,-MF,deps.d --keep tu.cu``,
   where ``tu.cu`` is a wrapper in a private folder that defines the macros and includes the file
   (invocation.py: no user text on nvcc's command line): the cubin, ptxas's resource report on
   stderr, the list of files the compiler read (written by the device preprocessor as it runs, not
   by a second pass: cache.compile_deps; the cache key) and, kept from the same compile, the PTX
   ptxas assembled (the compiled access model's input: one compile serves both). The same steps
   (preprocessor, cicc, ptxas) as a plain ``nvcc -cubin``, nothing added.
2. ``cuobjdump --dump-resource-usage`` on the cubin: the same resources as the binary records them,
   plus constant bank 0, which CUDA 13's ptxas no longer prints. The two reports are cross-checked;
   any disagreement is kept in ``CompiledKernel.cross_check``.
3. ``nvdisasm -gi -c -ndf`` on the cubin (sass.sass_command): the SASS with line info, classified by sass.py. Default
   rules read it (g4, g6, i2, i6, the SASS confirmation of findings, the shared load widths of the
   compiled access model). About 0.4 s of each call is nvdisasm's start, whatever the cubin.

Steps 2 and 3 run at the same time, and not at all when ptxas compiled no kernel. Step 3 may be handed
to a batch (``disassembler``): the units compiled ahead by ``check`` share one nvdisasm start. The result is
cached (cache.py) unless ``use_cache=False``.
"""

from __future__ import annotations

import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from cudalens.compiled import cache as _cache
from cudalens.compiled import invocation
from cudalens.compiled.model import (
    CompiledKernel,
    CompileError,
    CompileResult,
    CompilerMessage,
    Resources,
)
from cudalens.compiled.names import (
    base_name_from_demangled,
    base_name_from_mangled,
    demangle_all,
)
from cudalens.compiled.reports import (
    parse_diagnostics,
    parse_ptxas_verbose,
    parse_resource_usage,
)
from cudalens.compiled.sass import FunctionSass, disassemble_one
from cudalens.compiled.toolchain import FIX_COMMANDS, Toolchain, discover
from cudalens.errors import InputError, ToolchainError

#: step 3: (nvdisasm, cubin, cc, analyzed file, the toolchain's environment) -> the SASS of each function
#: (:func:`cudalens.compiled.sass.disassemble_one`)
Disassembler = Callable[[str, Path, str, str, Mapping[str, str]], dict[str, FunctionSass]]

#: Shared memory the driver reserves per block on CC >= 8.0; cuobjdump's SHARED includes it once a
#: kernel uses shared memory, ptxas's "bytes smem" does not.
_RESERVED_SMEM = 1024


def sm_arch(cc: str) -> str:
    """"9.0" -> "sm_90", "10.0" -> "sm_100"."""
    from cudalens.hardware.table import normalize_cc

    major, minor = normalize_cc(cc).split(".")
    return f"sm_{major}{minor}"


def build_flags(cc: str, defines: Mapping[str, str | None] | Iterable[str] | None, extra_flags: Iterable[str]) -> list[str]:
    """The nvcc flags cudalens compiles with (besides input and output)."""
    flags = ["-cubin", f"-arch={sm_arch(cc)}", "-lineinfo", "-Xptxas", "-v"]
    if isinstance(defines, Mapping):
        for k, v in defines.items():
            flags.append(f"-D{k}" if v is None else f"-D{k}={v}")
    elif defines:
        flags.extend(d if d.startswith("-D") else f"-D{d}" for d in defines)
    flags.extend(extra_flags)
    return flags


def _run(cmd: list[str], toolchain: Toolchain, cwd: str | None = None) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, env=toolchain.env(), timeout=600, cwd=cwd,
                              errors="replace", check=False)
    except OSError as exc:
        raise ToolchainError(f"cannot run {cmd[0]}: {exc}") from exc


def _resources(ptxas: dict[str, int], dump: dict[str, int] | None, cc_major: int) -> tuple[Resources, tuple[str, ...]]:
    notes: list[str] = []
    res = Resources(
        registers=ptxas.get("registers", dump.get("REG", 0) if dump else 0),
        static_shared_bytes=ptxas.get("static_shared_bytes", 0),
        local_bytes=ptxas.get("local_bytes", 0),
        spill_stores=ptxas.get("spill_stores", 0),
        spill_loads=ptxas.get("spill_loads", 0),
        constant_bytes=ptxas.get("constant_bytes", dump.get("CONSTANT[0]", 0) if dump else 0),
        barriers=ptxas.get("barriers", 0),
    )
    if dump is None:
        return res, ("cuobjdump has no resource record for this kernel",)
    if dump.get("REG") != res.registers:
        notes.append(f"registers: ptxas {res.registers}, cuobjdump {dump.get('REG')}")
    shared = dump.get("SHARED", 0)
    reserved = _RESERVED_SMEM if cc_major >= 8 else 0
    if shared not in (res.static_shared_bytes, res.static_shared_bytes + reserved):
        notes.append(f"static shared: ptxas {res.static_shared_bytes} B, cuobjdump {shared} B")
    stack = dump.get("STACK", 0)
    if stack < res.local_bytes:
        notes.append(f"stack: ptxas frame {res.local_bytes} B, cuobjdump {stack} B")
    return res, tuple(notes)


def compile_file(
    path: str | Path,
    cc: str = "9.0",
    defines: Mapping[str, str | None] | Iterable[str] | None = None,
    extra_flags: Iterable[str] = (),
    use_cache: bool = True,
    toolchain: Toolchain | None = None,
    *,
    through: str | Path | None = None,
    where: str = "--nvcc-flag",
    instantiate: Iterable[str] = (),
    disassembler: Disassembler | None = None,
    memo: _cache.RunMemo | None = None,
) -> CompileResult:
    """Compile ``path`` for ``cc`` and return its kernels' resources and SASS facts.

    nvcc never sees the user's file names or macro values on its command line: it compiles a
    wrapper translation unit in a private folder (see :mod:`cudalens.compiled.invocation`).
    ``through``: a translation unit that includes ``path`` (a header): that unit is compiled and
    line attribution is kept for ``path``. A header compiled without ``through`` is compiled on its
    own through the wrapper, never handed to nvcc as an input file. ``where`` names the origin of
    ``extra_flags`` in the one-line error a refused flag gives. ``instantiate``: template kernels the
    wrapper instantiates (``gemm<128,128,8>``); text that is not a template-id, or that the
    compiler rejects, is an InputError naming it. ``disassembler``: step 3 done by another
    (:class:`cudalens.compiled.sass_batch.SassBatch`: many units' cubins from one nvdisasm start);
    it is called with the cubin while the private folder exists and must return what
    :func:`cudalens.compiled.sass.disassemble_one` does. ``memo``: what a run of many compiles keeps of the
    files they share (:class:`cudalens.compiled.cache.RunMemo`).

    Raises InputError for a missing file or a refused flag, ToolchainError when a tool is missing or
    cannot run and CompileError (with the compiler's messages as file/line/message) when the code
    does not compile.
    """
    from cudalens.hardware.table import normalize_cc

    t0 = time.perf_counter()
    src = Path(path)
    if not src.is_file():
        raise InputError(f"{path}: no such file")
    src = src.resolve()
    unit = Path(through).resolve() if through is not None else src
    if through is not None and not unit.is_file():
        raise InputError(f"{through}: no such file")
    cc = normalize_cc(cc)
    tc = toolchain or discover()
    nvcc, cuobjdump, nvdisasm = tc.get("nvcc"), tc.get("cuobjdump"), tc.get("nvdisasm")
    if tc.host_compiler is None:
        raise ToolchainError(f"nvcc needs a host C++ compiler and none was found; fix: {FIX_COMMANDS['host compiler']}")
    flags = build_flags(cc, defines, extra_flags)
    insts = tuple(instantiate)
    for i, spec in enumerate(insts):
        invocation.instantiation_line(spec, i)  # refused text: InputError before any work

    key = None
    roots = tc.roots()
    if use_cache:
        key = _cache.manifest_key(str(src), flags, cc, tc.fingerprint(),
                                  extra=str(unit) + "".join(f"\0inst:{x}" for x in insts))
        entry = _cache.lookup(key, roots, memo=memo)
        if entry is not None:
            try:
                return _from_entry(entry, tc, time.perf_counter() - t0)
            except (KeyError, TypeError, ValueError):
                pass  # an entry of another shape: recompile and overwrite it

    with tempfile.TemporaryDirectory(prefix="cudalens-") as tmp:
        inv = invocation.prepare(unit, tmp, flags, where=where, instantiate=insts)
        cubin = Path(tmp) / "out.cubin"
        keep = Path(tmp) / "keep"
        keep.mkdir()
        proc = _run(nvcc_command(nvcc.path, inv.flags, inv.wrapper, cubin, keep), tc, cwd=tmp)
        output = inv.user_path(proc.stderr + proc.stdout)
        diagnostics = parse_diagnostics(output)
        # the wrapper's own warnings are noise; an error in it is the user's (a -D value, an unreadable
        # file): kept, named as the user's file, without the private folder
        messages = tuple(CompilerMessage(str(unit), None, _private_paths_out(m.message, tmp, unit), "error")
                         if _wrapper_noise(m) else m for m in diagnostics
                         if not _wrapper_noise(m) or m.severity == "error")
        for m in diagnostics:
            spec = inv.instantiation_at(m.line) if m.file and Path(m.file).name == invocation.WRAPPER else None
            if spec is not None and m.severity == "error":
                raise InputError(f"--instantiate {spec!r}: the compiler rejects it ({m.message})")
        if proc.returncode != 0 or not cubin.exists():
            if not any(m.severity == "error" for m in messages):
                tail = (_private_paths_out(" ".join(output.strip().splitlines()[-3:]), tmp, unit)
                        or f"nvcc exited with {proc.returncode}")
                messages = (*messages, CompilerMessage(None, None, tail, "error"))
            raise CompileError(messages, " ".join([nvcc.path, *flags, str(unit)]))
        deps = _cache.compile_deps(tmp, keep, leave_out=inv.wrapper, memo=memo)
        ptx = _kept_ptx(keep, cc)
        ptxas = parse_ptxas_verbose(output)
        # parsed while the private folder exists: line info of a file reached through a link names
        # the link, which is matched to the analyzed file by its real path
        sass, dump = (_binary_facts(cubin, cuobjdump.path, nvdisasm.path, cc, str(src), tc, disassembler)
                      if ptxas else ({}, {}))

    demangled = demangle_all(sorted(ptxas), tc.demangler)
    major = int(cc.split(".")[0])
    kernels: dict[str, CompiledKernel] = {}
    for mangled in sorted(ptxas):
        full = demangled.get(mangled, mangled)
        base = base_name_from_demangled(full) if full != mangled else base_name_from_mangled(mangled)
        res, notes = _resources(ptxas[mangled], dump.get(mangled), major)
        fs = sass.get(mangled)
        kernel = CompiledKernel(
            name=base,
            mangled=mangled,
            demangled=full,
            resources=res,
            sass_counts=fs.counts() if fs else {},
            sass_by_line=fs.by_line() if fs else {},
            shared_widths=fs.shared_widths() if fs else {},
            cross_check=notes,
            flags=tuple(flags),
            cc=cc,
        )
        name = base if base not in kernels else mangled  # overloads/templates: later ones by mangled name
        kernels[name] = kernel
    result = CompileResult(str(src), cc, kernels, messages, tc, time.perf_counter() - t0, False, tuple(flags),
                           tuple(deps), ptx)
    if use_cache and key is not None and deps:
        _cache.record(key, deps, {**result.to_dict(), "ptx": ptx}, roots, memo=memo)
    return result


def nvcc_command(nvcc: str, flags: Iterable[str], unit: str | Path, cubin: str | Path, keep: str | Path) -> list[str]:
    """The compile of step 1 (run in the folder that gets the dependency list, cache.DEPFILE): ``flags``
    from :func:`build_flags` (through invocation.prepare), ``unit`` the wrapper, ``keep`` the folder
    nvcc keeps its intermediate files in (the PTX, the preprocessed unit)."""
    return [nvcc, *flags, *_cache.DEPENDENCY_FLAGS, "--keep", "--keep-dir", str(keep), str(unit), "-o", str(cubin)]


def _binary_facts(cubin: Path, cuobjdump: str, nvdisasm: str, cc: str, source: str, tc: Toolchain,
                  disassembler: Disassembler | None = None) -> tuple[dict[str, FunctionSass], dict[str, dict[str, int]]]:
    """Steps 2 and 3, at the same time: (the SASS of each function, cuobjdump's resources of each)."""
    dump_p = subprocess.Popen([cuobjdump, "--dump-resource-usage", str(cubin)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=tc.env())
    try:
        sass = (disassembler or disassemble_one)(nvdisasm, cubin, cc, source, tc.env())
    finally:
        dump_out, dump_err = dump_p.communicate(timeout=600)
    if dump_p.returncode != 0:
        raise ToolchainError(f"cuobjdump failed: {dump_err.strip()[:300]}")
    return sass, parse_resource_usage(dump_out)


def _kept_ptx(keep: Path, cc: str) -> str:
    """The PTX nvcc kept for ``cc`` (``tu.ptx``; with several targets the one for ``cc``), or ""."""
    target = f".target {sm_arch(cc)}"
    texts = []
    for f in sorted(keep.glob("*.ptx")):
        try:
            texts.append(f.read_text(errors="replace"))
        except OSError:
            continue
    return next((t for t in texts if target in t), texts[0] if texts else "")


def _private_paths_out(text: str, tmp: str, unit: Path) -> str:
    """``text`` with the private wrapper named as the user's file and the private folder left out."""
    text = text.replace(str(Path(tmp) / invocation.WRAPPER), str(unit))
    for folder in {tmp, str(Path(tmp).resolve())}:
        text = text.replace(folder + "/", "").replace(folder, "")
    return text


def _wrapper_noise(m: CompilerMessage) -> bool:
    """Messages about the generated wrapper itself (``In file included from .../tu.cu``)."""
    return bool(m.file) and Path(m.file).name == invocation.WRAPPER and "cudalens-" in m.file


def _from_entry(entry: dict, tc: Toolchain, seconds: float) -> CompileResult:
    kernels = {name: CompiledKernel.from_dict(d) for name, d in entry["kernels"].items()}
    errors = tuple(CompilerMessage(**m) for m in entry["errors"])
    return CompileResult(entry["path"], entry["cc"], kernels, errors, tc, seconds, True, tuple(entry["flags"]),
                         tuple(entry.get("deps", ())), str(entry["ptx"]))  # no "ptx": an older entry, recompiled
