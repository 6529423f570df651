"""Which nvcc flags may come from a repository: only those on an allow-list of flags that run nothing.

A repository under review must not choose a program for cudalens to run. nvcc flags can: ``-ccbin``
names the host compiler, ``-Xcompiler -wrapper,PROG`` / ``-B DIR`` / ``-fplugin=LIB`` /
``-specs=FILE`` make the host compiler run or load one, ``-Xlinker``/``-Xnvlink``/``-l``/``-L``
reach the linker, ``--run`` runs the result. So every flag from ``[tool.cudalens]``,
``compile_commands.json``, an options file (``--options-file``, ``-optf``) and ``--nvcc-flag``
goes through :func:`check_flags`: a flag that is not on the list (or a host-compiler option that is
not on the host list) is refused with one line naming the file or option it came from, unless the
user passes ``--trust-project-flags``. Options files are read here (regular files only, 1 MB at
most) and their flags checked the same way, naming the options file.
"""

from __future__ import annotations

import os
import re
import shlex
import stat
from collections.abc import Iterable, Sequence

from cudalens.errors import InputError

#: flags (the part before ``=``) that choose language, optimisation, warnings, targets or
#: preprocessing, and run nothing
_NVCC_ALLOWED = frozenset("""
-D --define-macro -U --undefine-macro -I --include-path -isystem --system-include -include --pre-include
-std --std -O --optimize -dopt --dopt -g --debug -G --device-debug -lineinfo --generate-line-info
-use_fast_math --use_fast_math -ftz --ftz -prec-div --prec-div -prec-sqrt --prec-sqrt -fmad --fmad
-maxrregcount --maxrregcount -rdc --relocatable-device-code -dc --device-c -dw --device-w
-expt-relaxed-constexpr --expt-relaxed-constexpr -expt-extended-lambda --expt-extended-lambda
-extended-lambda --extended-lambda -arch --gpu-architecture -code --gpu-code -gencode --generate-code
-m64 -m32 --machine -default-stream --default-stream -restrict --restrict -res-usage --resource-usage
-t --threads -split-compile --split-compile -w --disable-warnings -Werror --Werror -Wreorder
-Wno-deprecated-gpu-targets -Wno-deprecated-declarations -Wext-lambda-captures-this
-Wdefault-stream-launch -Wmissing-launch-bounds -Wall -Wextra
-diag-suppress --diag-suppress -diag-error --diag-error -diag-warn --diag-warn
-err-no --display-error-number -no-err-no --no-display-error-number
-src-in-ptx --source-in-ptx -cudart --cudart -cudadevrt --cudadevrt -x --x -c --compile -o --output-file
-M -MM -MD -MMD -MP -MF -MT -MQ -E -cubin --cubin -ptx --ptx -fatbin --fatbin -keep --keep -keep-dir --keep-dir
-save-temps --save-temps -v --verbose -allow-unsupported-compiler --allow-unsupported-compiler
-static-global-template-stub --static-global-template-stub -dlto --dlink-time-opt -lto
-Xptxas --ptxas-options -Xcompiler --compiler-options -Xcudafe
-fno-exceptions -fPIC -fpic -pthread -openmp -fopenmp
-forward-unknown-to-host-compiler --forward-unknown-to-host-compiler
""".split())
#: host-compiler options (after -Xcompiler, comma-separated) that run or load nothing
_HOST_ALLOWED = re.compile(
    r"-(O[0-3sgfz]?|g[0-3]?|ggdb|w|W(?![lap],)[A-Za-z0-9_=+-]*|f(?!plugin|use-ld|profile-use|auto-profile)"
    r"[A-Za-z0-9_=+.-]*|m[A-Za-z0-9_=.-]+|std=[A-Za-z0-9+]+|ansi|pedantic|pedantic-errors|pthread|fPIC|fpic|"
    r"D[A-Za-z_][A-Za-z0-9_]*(=[A-Za-z0-9_.+-]*)?|U[A-Za-z_][A-Za-z0-9_]*|Werror|openmp|"
    r"/(?:O[12dx]|W[0-4]|EH[a-z]+|MD|MT|MDd|MTd|Zi|nologo|bigobj|permissive-?|wd\d+))")
#: values of -Xptxas / --ptxas-options and -Xcudafe that are options, not files or programs
_TOOL_VALUE = re.compile(r"-{1,2}[A-Za-z][A-Za-z0-9_]*(=[A-Za-z0-9_.,+-]*)?")
#: the flags whose value is the next word when written apart
_TAKES_VALUE = frozenset("""
-D --define-macro -U --undefine-macro -I --include-path -isystem --system-include -include --pre-include
-Xptxas --ptxas-options -Xcompiler --compiler-options -Xcudafe -o --output-file -x --x -MF -MT -MQ
-arch --gpu-architecture -code --gpu-code -gencode --generate-code -maxrregcount -t --threads
-keep-dir --keep-dir -default-stream --machine -ccbin --compiler-bindir -Xlinker --linker-options -Xnvlink
--nvlink-options -Xarchive --archive-options -l --library -L --library-path -odir --output-directory
--options-file -optf -run-args --run-args
-std --std --optimize -dopt --dopt -ftz --ftz -prec-div --prec-div -prec-sqrt --prec-sqrt -fmad --fmad
-rdc --relocatable-device-code -split-compile --split-compile -diag-suppress --diag-suppress -diag-error
--diag-error -diag-warn --diag-warn --maxrregcount -cudart --cudart -cudadevrt --cudadevrt
""".split())
_OPTIONS_FILE = ("--options-file", "-optf")
MAX_OPTIONS_FILE = 1_000_000
TRUST = "--trust-project-flags"


def _name(flag: str) -> str:
    whole = flag.split("=", 1)[0]
    if whole in _NVCC_ALLOWED or whole in _TAKES_VALUE:
        return whole
    if flag.startswith(("-D", "-U", "-I", "-O", "-l", "-L")) and not flag.startswith("--") and len(flag) > 2:
        return flag[:2]
    if flag.startswith("-isystem") and len(flag) > len("-isystem"):
        return "-isystem"
    if flag.startswith("-include") and len(flag) > len("-include"):
        return "-include"
    return flag.split("=", 1)[0]


def _refuse(where: str, text: str, why: str) -> InputError:
    return InputError(f"{where}: {text!r} {why}; refused (flags from a repository may not name a program; "
                      f"give {TRUST} to allow it)")


def _host_ok(value: str) -> bool:
    parts = [part for part in re.split(r"[,\s]+", value) if part]
    return not any(p in ("-Wl", "-Wa", "-Wp") for p in parts) and all(_HOST_ALLOWED.fullmatch(p) for p in parts)


def read_options_file(path: str, where: str) -> list[str]:
    """The flags of an options file (a regular file of at most 1 MB, split as a shell would, without one)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise InputError(f"{where}: options file {path}: cannot read ({exc.strerror or 'error'})") from None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_OPTIONS_FILE:
            raise InputError(f"{where}: options file {path}: not a regular file of at most 1 MB; refused")
        text = fh.read(MAX_OPTIONS_FILE).decode("utf-8", "replace")
    try:
        return shlex.split(text)
    except ValueError as exc:
        raise InputError(f"{where}: options file {path}: {exc}") from None


def expand(flags: Sequence[str], where: str, base: str | None = None, depth: int = 0) -> list[tuple[str, str]]:
    """(flag, where it came from) with every options file replaced by its flags (nested up to 8 deep)."""
    out: list[tuple[str, str]] = []
    it = iter(flags)
    for f in it:
        if f in _OPTIONS_FILE or f.startswith(tuple(o + "=" for o in _OPTIONS_FILE)):
            name = f.split("=", 1)[1] if "=" in f else next(it, None)
            if not name:
                raise InputError(f"{where}: {f} needs a file")
            if depth >= 8:
                raise InputError(f"{where}: options files nested more than 8 deep")
            path = name if os.path.isabs(name) or base is None else os.path.join(base, name)
            inner = f"{path} (options file named by {where})"
            out += expand(read_options_file(path, where), inner, os.path.dirname(path), depth + 1)
        else:
            out.append((f, where))
    return out


def check_flags(flags: Iterable[str], where: str, *, trusted: bool = False, base: str | None = None) -> tuple[str, ...]:
    """``flags`` with options files expanded, each checked against the allow-list (InputError, one
    line naming ``where`` or the options file, for the first that is not on it). ``trusted``:
    options files are still expanded, nothing is refused."""
    pairs = expand(list(flags), where, base)
    out: list[str] = []
    i = 0
    while i < len(pairs):
        f, src = pairs[i]
        i += 1
        name = _name(f)
        value: str | None = f.split("=", 1)[1] if "=" in f and name == f.split("=", 1)[0] else None
        shown = f
        if name in _TAKES_VALUE and value is None and f == name and i < len(pairs):
            value = pairs[i][0]
            out.append(f)
            f = pairs[i][0]
            shown = f"{name} {value}"
            i += 1
        out.append(f)
        if trusted:
            continue
        if f.startswith("@") or (value or "").startswith("@"):
            raise _refuse(src, shown, "is a response file the host compiler would read")
        if name not in _NVCC_ALLOWED and not (value is None and _host_ok(f)):  # a host option nvcc forwards
            raise _refuse(src, shown, "is not on the list of nvcc flags that run nothing")
        if name in ("-Xcompiler", "--compiler-options") and not _host_ok(value or ""):
            raise _refuse(src, f"{name} {value}", "passes a host-compiler option that is not on the list of "
                                                  "options that run nothing")
        if name in ("-Xptxas", "--ptxas-options", "-Xcudafe") and not all(
                _TOOL_VALUE.fullmatch(v) for v in (value or "").split(",") if v):
            raise _refuse(src, f"{name} {value}", "passes a value that is not a plain option")
    return tuple(out)
