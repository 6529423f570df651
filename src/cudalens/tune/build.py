"""Compile one configuration of a kernel and read back what the compiler made of it.

A templated kernel (``--kernel 'gemm<BM,BN,BK,TM,TN>'``) is instantiated by a line that takes the
address of ``gemm<64,128,8,8,8>`` after the user's file: that forces nvcc to instantiate it without
the tuner having to know the parameter list. A kernel without template arguments gets the
parameters as ``-DNAME=VALUE`` instead (kernels tuned through macros). Then:

1. ``nvcc -cubin -arch=sm_XY -lineinfo -Xptxas -v -std=c++17 -D...`` (the flags of
   :func:`cudalens.compiled.compile.build_flags`) through the project's safe invocation
   (:func:`cudalens.compiled.invocation.nvcc_command`: a fixed-name wrapper includes the user's
   file, ``-D``/``-I`` values and the instantiation go into the wrapper, never onto nvcc's command
   line, and a ``--nvcc-flag`` with characters nvcc's shell would interpret is refused); ptxas's report
   parsed by :func:`cudalens.compiled.reports.parse_ptxas_verbose`;
2. ``nvdisasm -c`` on the cubin, classified by :func:`cudalens.compiled.sass.parse_nvdisasm`;
3. the kernel's entry is found among the cubin's functions by its base name and, when several
   share it, by its demangled template arguments; that mangled name is what the GPU worker loads.

:func:`cudalens.measure.kernels.compile_named` (compile by C++ name, #17) takes the same wrapper
route for nvcc, but prefers NVRTC, which gives no ptxas report, and keeps no per-configuration
cache; the pruning needs the report, so the tuner calls nvcc_command itself.

Results are cached on disk (cubin + facts JSON), keyed by everything they depend on (the user's
file and every quoted include it reaches, the instance, flags, compute capability, toolchain), so
a resumed or repeated sweep does not compile again. Compilation runs in a process pool
(:func:`build_all`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from cudalens.compiled import cache as _cache
from cudalens.compiled.compile import build_flags
from cudalens.compiled.model import Resources
from cudalens.compiled.names import base_name_from_mangled, demangle_all, split_top_level
from cudalens.compiled.reports import parse_diagnostics, parse_ptxas_verbose
from cudalens.compiled.sass import parse_nvdisasm
from cudalens.errors import InputError, ToolchainError
from cudalens.tune import expr as E


@dataclass(frozen=True)
class KernelSpec:
    """``gemm<BM,BN,BK,TM,TN>`` split into the name and the template argument texts."""

    name: str
    template_args: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> KernelSpec:
        text = text.strip()
        if "<" not in text:
            if not text.replace("_", "a").replace("::", "a").isalnum():
                raise InputError(f"--kernel {text!r}: not a kernel name")
            return cls(text)
        if not text.endswith(">"):
            raise InputError(f"--kernel {text!r}: template arguments must end with '>'")
        name, inner = text[: text.index("<")].strip(), text[text.index("<") + 1: -1]
        args = [a.strip() for a in split_top_level(inner)]
        if not name or any(not a for a in args):
            raise InputError(f"--kernel {text!r}: empty name or template argument")
        return cls(name, tuple(args))

    def instance(self, env: dict[str, int]) -> str:
        """The C++ name of the instantiation for ``env`` (``gemm<64, 128, 8>``)."""
        if not self.template_args:
            return self.name
        out = []
        for a in self.template_args:
            try:
                ex = E.parse(a, set(env), what="template argument")
            except InputError:
                out.append(a)  # a type such as float: passed as written
                continue
            out.append(str(ex.integer(env, "template argument")))
        return f"{self.name}<{', '.join(out)}>"


@dataclass(frozen=True)
class BuildJob:
    """Everything one compile needs (picklable: it crosses into pool processes and Ray tasks)."""

    source: str  # absolute path
    kernel: KernelSpec
    config_key: str
    env: tuple[tuple[str, int], ...]  # parameters and constants
    cc: str
    flags: tuple[str, ...] = ()
    cache_dir: str | None = None
    define_params: bool = True


@dataclass(frozen=True)
class BuildFacts:
    """What the compiler made of one configuration (or why it could not)."""

    config_key: str
    ok: bool
    error: str | None = None
    mangled: str = ""
    instance: str = ""
    resources: dict[str, int] = field(default_factory=dict)
    sass_counts: dict[str, int] = field(default_factory=dict)
    cubin_path: str = ""
    seconds: float = 0.0
    cache_hit: bool = False

    @property
    def res(self) -> Resources:
        return Resources(**self.resources)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> BuildFacts:
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})


def default_cache_dir() -> str:
    return str(_cache.cache_dir() / "tune")


def instantiations(job: BuildJob) -> tuple[str, ...]:
    """The template instance the wrapper instantiates (none for a kernel tuned through macros)."""
    return (job.kernel.instance(dict(job.env)),) if job.kernel.template_args else ()


def check_flags(source: str, flags: Sequence[str]) -> None:
    """InputError (one line) for a ``--nvcc-flag`` the safe invocation refuses, before any compile."""
    from cudalens.compiled.invocation import nvcc_command

    with tempfile.TemporaryDirectory(prefix="cudalens-tune-") as tmp:
        work = Path(tmp) / "w"
        work.mkdir()
        nvcc_command("nvcc", source, work, list(flags), Path(tmp) / "k.cubin", where="--nvcc-flag")


def _flags(job: BuildJob) -> list[str]:
    defines = {k: str(v) for k, v in job.env} if job.define_params else {}
    return build_flags(job.cc, defines, ["-std=c++17", *job.flags])


_INCLUDE_RE = re.compile(rb'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)


def _quoted_includes(path: Path, dirs: Sequence[Path]) -> list[Path]:
    """Every ``#include "..."`` file reachable from ``path`` (next to the includer or in ``dirs``)."""
    seen: list[Path] = []
    todo = [path]
    while todo:
        cur = todo.pop()
        try:
            data = cur.read_bytes()
        except OSError:
            continue
        for name in _INCLUDE_RE.findall(data):
            for d in [cur.parent, *dirs]:
                cand = (d / name.decode(errors="replace")).resolve()
                if cand.is_file():
                    if cand not in seen:
                        seen.append(cand)
                        todo.append(cand)
                    break
    return seen


def cache_key(job: BuildJob, fingerprint: str) -> str:
    """SHA-256 of the user's file and every quoted include it reaches (by content), the flags, the
    instance, the compute capability and the toolchain fingerprint."""
    flags = _flags(job)
    dirs = [Path(f[2:]) for f in flags if f.startswith("-I") and len(f) > 2]
    source = Path(job.source)
    h = hashlib.sha256(f"cudalens-tune/2\0{job.cc}\0{fingerprint}\0".encode())
    h.update("\0".join([*flags, job.kernel.instance(dict(job.env)), *instantiations(job)]).encode())
    for f in [source, *_quoted_includes(source, dirs)]:
        h.update(b"\0" + str(f).encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def build_one(job: BuildJob, toolchain: Any = None) -> BuildFacts:
    """Compile ``job``; a compile error is a BuildFacts with ok=False and the first error, never an exception."""
    from cudalens.compiled.toolchain import discover

    t0 = time.perf_counter()
    tc = toolchain or discover()
    try:
        nvcc, nvdisasm = tc.get("nvcc").path, tc.get("nvdisasm").path
    except Exception as exc:  # noqa: BLE001 - ToolchainError: reported per configuration
        return BuildFacts(job.config_key, False, str(exc))
    root = Path(job.cache_dir or default_cache_dir())
    root.mkdir(parents=True, exist_ok=True)
    try:
        key = cache_key(job, tc.fingerprint())
    except OSError as exc:
        return BuildFacts(job.config_key, False, f"cannot read {job.source}: {exc.strerror or exc}")
    facts_file, cubin_file = root / key[:2] / f"{key}.json", root / key[:2] / f"{key}.cubin"
    try:
        cached = json.loads(facts_file.read_text())
        if not cached.get("ok") or cubin_file.exists():
            cached.update(config_key=job.config_key, cache_hit=True, seconds=time.perf_counter() - t0)
            return BuildFacts.from_dict(cached)
    except (OSError, ValueError):
        pass
    facts = _compile(job, tc, nvcc, nvdisasm, cubin_file)
    facts = BuildFacts(**{**facts.to_dict(), "seconds": time.perf_counter() - t0})
    cubin_file.parent.mkdir(parents=True, exist_ok=True)
    _cache.atomic_write(facts_file, json.dumps(facts.to_dict()).encode())
    return facts


def _compile(job: BuildJob, tc: Any, nvcc: str, nvdisasm: str, cubin_file: Path) -> BuildFacts:
    from cudalens.compiled.invocation import nvcc_command

    inst = job.kernel.instance(dict(job.env))
    with tempfile.TemporaryDirectory(prefix="cudalens-tune-") as tmp:
        out, work = Path(tmp) / "k.cubin", Path(tmp) / "w"
        work.mkdir()
        try:
            cmd, _ = nvcc_command(nvcc, job.source, work, _flags(job), out, where="--nvcc-flag",
                                  instantiate=instantiations(job))
        except (InputError, ToolchainError) as exc:
            return BuildFacts(job.config_key, False, f"not compiled: {exc}", instance=inst)
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, env=tc.env(), timeout=600, check=False)
        except (OSError, subprocess.SubprocessError) as exc:
            return BuildFacts(job.config_key, False, f"nvcc could not run: {exc}", instance=inst)
        output = proc.stderr + proc.stdout
        if proc.returncode != 0 or not out.exists():
            errs = [m for m in parse_diagnostics(output) if m.severity == "error"]
            msg = errs[0].message if errs else (output.strip().splitlines() or [f"nvcc exited {proc.returncode}"])[-1]
            return BuildFacts(job.config_key, False, f"does not compile: {msg}", instance=inst)
        ptxas = parse_ptxas_verbose(output)
        mangled = _pick(job.kernel, inst, sorted(ptxas), tc.demangler)
        if mangled is None:
            return BuildFacts(job.config_key, False, f"no kernel {inst} in the compiled file", instance=inst)
        sass = subprocess.run([nvdisasm, "-c", str(out)], capture_output=True, text=True, env=tc.env(), timeout=600,
                              check=False)
        counts = {}
        if sass.returncode == 0:
            fs = parse_nvdisasm(sass.stdout, None).get(mangled)
            counts = fs.counts() if fs else {}
        cubin_file.parent.mkdir(parents=True, exist_ok=True)
        _cache.atomic_write(cubin_file, out.read_bytes())
    p = ptxas[mangled]
    res = Resources(registers=p.get("registers", 0), static_shared_bytes=p.get("static_shared_bytes", 0),
                    local_bytes=p.get("local_bytes", 0), spill_stores=p.get("spill_stores", 0),
                    spill_loads=p.get("spill_loads", 0), constant_bytes=p.get("constant_bytes", 0),
                    barriers=p.get("barriers", 0))
    return BuildFacts(job.config_key, True, None, mangled, inst, res.to_dict(), counts, str(cubin_file))


def _norm(text: str) -> str:
    return "".join(text.split())


def _pick(kernel: KernelSpec, inst: str, mangled: list[str], demangler: str | None) -> str | None:
    base = kernel.name.split("::")[-1]
    cands = [m for m in mangled if base_name_from_mangled(m) == base]
    if len(cands) <= 1:
        return cands[0] if cands else None
    full = demangle_all(cands, demangler)
    want = _norm(inst.split("::")[-1])
    for m in cands:
        if want in _norm(full.get(m, "")):
            return m
    return None


def _build_in_pool(job: BuildJob) -> BuildFacts:
    return build_one(job)


def build_all(jobs: Sequence[BuildJob], workers: int | None = None,
              on_done: Callable[[BuildFacts], None] | None = None) -> dict[str, BuildFacts]:
    """Compile ``jobs`` in a process pool (``workers`` processes, default: the CPU count)."""
    workers = max(1, workers or os.cpu_count() or 1)
    out: dict[str, BuildFacts] = {}
    if workers == 1 or len(jobs) <= 1:
        for j in jobs:
            out[j.config_key] = f = build_one(j)
            if on_done:
                on_done(f)
        return out
    with ProcessPoolExecutor(max_workers=min(workers, len(jobs))) as pool:
        for f in pool.map(_build_in_pool, jobs, chunksize=1):
            out[f.config_key] = f
            if on_done:
                on_done(f)
    return out


def jobs_for(source: str, kernel: KernelSpec, configs: Iterable[Any], env_of: Callable[[Any], dict[str, int]],
             cc: str, flags: Sequence[str] = (), cache_dir: str | None = None) -> list[BuildJob]:
    src = str(Path(source).resolve())
    # Parameters become -D macros only for kernels without template arguments: a macro named like a
    # template parameter (-DBM=64 with template <int BM>) would break the template.
    define = not kernel.template_args
    return [BuildJob(src, kernel, c.key, tuple(sorted(env_of(c).items())), cc, tuple(flags), cache_dir, define)
            for c in configs]
