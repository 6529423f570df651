"""An nvcc command line no shell can misread: user text never reaches nvcc's command line.

nvcc runs its own steps (host preprocessor, cudafe++, cicc, ptxas) through a shell, with the input
file name and many flag values pasted into the command text, so a file named
``k;$(touch x).cu`` would run ``touch x``. The guarantee here is structural, not an escaping:

* nvcc compiles a **wrapper translation unit** with a fixed name (``tu.cu``) in a private
  temporary folder. The wrapper holds the user's macros as ``#define`` lines (``-D``/``-U``
  never go on the command line) and then ``#include``-s the user's file by its absolute path.
  File names travel inside file *contents*, which no shell reads; ``#line`` information,
  diagnostics and ``-lineinfo`` therefore name the user's own file.
* A path that cannot be written inside ``#include "..."`` (it holds ``"``, ``\\`` or a control
  character such as a newline) is reached through symbolic links with fixed names: ``f/u.cu``
  points at the file and ``d`` at its folder, which is given as ``-iquote`` so the file's own
  ``#include "x.h"`` and ``"../common/x.h"`` still resolve. Messages naming the link are mapped
  back to the user's path (:meth:`SafeInvocation.user_path`).
* ``-I``/``-isystem`` folders whose names are not plain (see :data:`PLAIN`) are reached through a
  link ``iN`` the same way; plain ones are passed as absolute paths.
* Every other flag must consist of plain characters only; anything else is refused with one line
  naming the flag (:class:`~cudalens.errors.InputError`). ``--options-file FILE`` (CMake's
  response files) is read here and its flags go through the same checks.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from cudalens.errors import InputError, ToolchainError

#: Characters a flag value may hold and reach nvcc's shell unchanged: no blanks, quotes, ``$``,
#: backticks, ``;``, ``&``, ``|``, ``<``, ``>``, ``(``, ``)``, ``*``, ``?``, ``[``, ``~``, ``#``, ``!``.
PLAIN = re.compile(r"[A-Za-z0-9_+=.,/:@%-]+")
_MACRO_NAME = re.compile(r"[A-Za-z_]\w*(\([A-Za-z_0-9, .]*\))?")
_UNINCLUDABLE = re.compile(r'["\\\x00-\x1f\x7f]')
_DIR_FLAGS = {"-I": "-I", "--include-path": "-I", "-isystem": "-isystem", "--system-include": "-isystem"}
WRAPPER = "tu.cu"
#: Flags that choose outputs or dependency files: ours to choose, dropped with their value.
#: (--keep and its folder included: the compile keeps its intermediate files where cudalens reads the PTX)
_DROPPED_WITH_VALUE = ("-o", "--output-file", "-x", "--x", "-MF", "-MT", "-MQ", "--dependency-output",
                       "--dependency-target-name", "--keep-dir", "-keep-dir")
_DROPPED = ("-c", "--compile", "-M", "-MM", "-MD", "-MMD", "-MP", "--generate-dependencies",
            "--generate-nonsystem-dependencies", "--generate-dependencies-with-compile",
            "--generate-nonsystem-dependencies-with-compile", "--generate-dependency-targets", "--keep", "-keep",
            "--save-temps", "-save-temps")


@dataclass(frozen=True)
class SafeInvocation:
    """What to hand nvcc: ``flags`` (plain text only) and the wrapper to compile; ``links`` maps
    each link created in the private folder back to the user's path."""

    flags: tuple[str, ...]
    wrapper: Path
    links: tuple[tuple[str, str], ...] = ()
    #: (line of the wrapper, ``--instantiate`` text) of each explicit instantiation it holds
    instantiations: tuple[tuple[int, str], ...] = ()

    def instantiation_at(self, line: int | None) -> str | None:
        """The ``--instantiate`` text written on wrapper line ``line`` (None: not one of those)."""
        return next((spec for ln, spec in self.instantiations if ln == line), None)

    def user_path(self, text: str) -> str:
        """``text`` with the private folder's links replaced by the user's paths."""
        for link, real in self.links:
            text = text.replace(link, real)
        return text


def is_plain(text: str) -> bool:
    return bool(PLAIN.fullmatch(text))


def private_dir_ok(path: str | Path) -> None:
    """The private folder itself goes on nvcc's command line: refuse one that is not plain."""
    if not is_plain(str(path)):
        raise ToolchainError(f"temporary folder {str(path)!r} holds characters nvcc's shell would interpret; "
                             "set TMPDIR to a plain path such as /tmp")


def _define_line(spec: str, where: str) -> str:
    name, eq, value = spec.partition("=")
    if not _MACRO_NAME.fullmatch(name):
        raise InputError(f"{where} -D{spec}: {name!r} is not a macro name")
    if "\n" in value or "\r" in value or "\x00" in value:
        raise InputError(f"{where} -D{name}: a macro value cannot hold a line break")
    if value.rstrip().endswith("\\"):
        raise InputError(f"{where} -D{name}: a macro value cannot end with a backslash (it would continue the "
                         "#define over the line that includes your file)")
    if value.count("/*") > value.count("*/"):
        raise InputError(f"{where} -D{name}: a macro value cannot open a comment it does not close")
    return f"#define {name} {value if eq else '1'}"


def _expand_options_files(flags: Sequence[str], where: str) -> list[str]:
    out: list[str] = []
    it = iter(flags)
    for f in it:
        if f in ("--options-file", "-optf") or f.startswith(("--options-file=", "-optf=")):
            name = f.split("=", 1)[1] if "=" in f else next(it, None)
            if name is None:
                raise InputError(f"{where} {f}: needs a file")
            try:
                text = Path(name).read_text(encoding="utf-8", errors="replace")
            except OSError as exc:
                raise InputError(f"{where} {f} {name}: cannot read ({exc.strerror})") from None
            try:
                out.extend(shlex.split(text))
            except ValueError as exc:
                raise InputError(f"{where} {f} {name}: {exc}") from None
        else:
            out.append(f)
    return out


def _split(flags: Sequence[str], where: str) -> list[tuple[str, str | None]]:
    """(flag, value) pairs; separate-value forms of -D/-U/-I/-isystem/-include are joined."""
    pairs: list[tuple[str, str | None]] = []
    it = iter(flags)
    for f in it:
        for opt in ("-D", "--define-macro", "-U", "--undefine-macro", "-I", "--include-path", "-isystem",
                    "--system-include", "-include", "--pre-include", *_DROPPED_WITH_VALUE):
            if f == opt:
                value = next(it, None)
                if value is None:
                    raise InputError(f"{where} {f}: needs a value")
                pairs.append((opt, value))
                break
            if f.startswith(opt + "=") and opt.startswith("--"):
                pairs.append((opt, f[len(opt) + 1:]))
                break
            if opt in ("-D", "-U", "-I") and f.startswith(opt) and len(f) > 2:
                pairs.append((opt, f[2:]))
                break
            if opt in ("-isystem", "-include") and f.startswith(opt) and len(f) > len(opt):
                pairs.append((opt, f[len(opt):]))
                break
        else:
            pairs.append((f, None))
    return pairs


def prepare(source: str | Path, workdir: str | Path, flags: Iterable[str], *, where: str = "flag",
            includes: Sequence[str | Path] = (), instantiate: Sequence[str] = ()) -> SafeInvocation:
    """Write the wrapper for ``source`` into ``workdir`` (a fresh private folder) and return the
    plain flags to compile it with. ``where`` names the origin of the flags in error messages
    (``--nvcc-flag``, ``compile_commands.json``); ``includes`` are further files the wrapper
    includes after ``source`` (none usually); ``instantiate``: template kernels to instantiate
    (``gemm<128,128,8>``), checked by :func:`instantiation_line`."""
    work = Path(workdir)
    private_dir_ok(work)
    src = Path(source).resolve()
    out_flags: list[str] = []
    head: list[str] = []
    links: list[tuple[str, str]] = []
    n_links = 0

    def link_dir(real: Path) -> str:
        nonlocal n_links
        n_links += 1
        link = work / f"i{n_links}"
        os.symlink(real, link, target_is_directory=True)
        links.append((str(link), str(real)))
        return str(link)

    for flag, value in _split(_expand_options_files(list(flags), where), where):
        if flag in ("-D", "--define-macro"):
            head.append(_define_line(value or "", where))
        elif flag in ("-U", "--undefine-macro"):
            if not _MACRO_NAME.fullmatch(value or ""):
                raise InputError(f"{where} -U{value}: not a macro name")
            head.append(f"#undef {value}")
        elif flag in _DIR_FLAGS:
            real = Path(value or "").expanduser().resolve()
            out_flags += [_DIR_FLAGS[flag], str(real) if is_plain(str(real)) else link_dir(real)]
        elif flag in ("-include", "--pre-include"):
            real = Path(value or "").resolve()
            head.append(_include_line(real, work, links, f"p{len(head)}"))
        elif (flag.split("=", 1)[0] in _DROPPED_WITH_VALUE or flag in _DROPPED
              or flag.endswith((".cu", ".cpp", ".cc", ".o"))):
            continue  # outputs and dependency files are ours to choose
        elif is_plain(flag):
            out_flags.append(flag)
        else:
            raise InputError(f"{where} {flag!r}: holds characters nvcc's shell would interpret "
                             "(only letters, digits and _+=.,/:@%- are passed through)")
    if _UNINCLUDABLE.search(str(src)):
        (work / "f").mkdir()
        os.symlink(src, work / "f" / "u.cu")
        links.append((str(work / "f" / "u.cu"), str(src)))
        d = link_dir(src.parent)
        out_flags = ["-Xcompiler", f"-iquote,{d}", *out_flags]
        body = '#include "f/u.cu"'
    else:
        body = f'#include "{src}"'
    extra = [_include_line(Path(p).resolve(), work, links, f"x{i}") for i, p in enumerate(includes)]
    lines = [*head, body, *extra]
    insts: list[tuple[int, str]] = []
    for i, spec in enumerate(instantiate):
        lines.append(instantiation_line(spec, i))
        insts.append((len(lines), spec))
    wrapper = work / WRAPPER
    wrapper.write_text("\n".join(lines) + "\n", encoding="utf-8")
    # longest link first, so that f/u.cu is replaced before a folder link that is its prefix
    links.sort(key=lambda kv: -len(kv[0]))
    return SafeInvocation(tuple(out_flags), wrapper, tuple(links), tuple(insts))


#: ``--instantiate`` text: a (qualified) template name and its argument list, with only the
#: characters template arguments need: no ``;``, braces, quotes, ``#``, ``/``, ``\`` or line breaks,
#: so the text cannot end the declaration it is written into or open a comment or a directive.
_TEMPLATE_ID = re.compile(r"[ \t]*(?:::)?[A-Za-z_]\w*(?:[ \t]*::[ \t]*[A-Za-z_]\w*)*[ \t]*<[\w \t,:<>().*&+\-]*>[ \t]*",
                          re.ASCII)


def instantiation_line(spec: str, n: int) -> str:
    """The wrapper's line that instantiates template kernel ``spec`` (``gemm<128,128,8>``): taking
    the kernel's address in host code makes nvcc instantiate it without knowing its parameter
    types. InputError (one line naming the argument) for text that is not a template-id."""
    if not _TEMPLATE_ID.fullmatch(spec) or spec.count("(") != spec.count(")") or spec.count("<") < 1:
        raise InputError(f"--instantiate {spec!r}: not a template kernel with its arguments, "
                         "e.g. 'gemm<128,128,8>' or 'reduce<float,256>'")
    return f"static auto* __cudalens_inst_{n} = &{spec.strip()};"


def _include_line(real: Path, work: Path, links: list[tuple[str, str]], name: str) -> str:
    if not _UNINCLUDABLE.search(str(real)):
        return f'#include "{real}"'
    link = work / f"{name}{real.suffix if is_plain(real.suffix) else ''}"
    os.symlink(real, link)
    links.append((str(link), str(real)))
    return f'#include "{link.name}"'


def nvcc_command(nvcc: str, source: str | Path, workdir: str | Path, flags: Iterable[str], output: str | Path,
                 *, where: str = "flag", instantiate: Sequence[str] = ()) -> tuple[list[str], SafeInvocation]:
    """The argument list that compiles ``source`` with ``flags`` into ``output`` through the wrapper
    (for callers that run nvcc themselves: ``-D``/``-I`` values never reach its command line).
    ``workdir`` must be a fresh private folder; ``output`` a plain path in it."""
    inv = prepare(source, workdir, flags, where=where, instantiate=instantiate)
    if not is_plain(str(output)):
        raise ToolchainError(f"output path {str(output)!r} is not plain")
    return [nvcc, *inv.flags, str(inv.wrapper), "-o", str(output)], inv
