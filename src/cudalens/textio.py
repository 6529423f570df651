"""Reading the user's text files totally: any common encoding, any nesting, one line for each failure.

``decode`` takes UTF-8 (with or without a byte-order mark) and UTF-16/32 with a byte-order mark;
``load_json``/``load_toml`` turn every failure (unreadable, not a regular file, too large, bad
encoding, bad syntax, nested past what the parser can hold) into one ``ValueError`` line naming the
file, never an exception class name. ``printable`` neutralises terminal escape sequences in text
shown to a terminal (file names, messages).
"""

from __future__ import annotations

import codecs
import json
import os
import re
import stat
import sys
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

#: the largest configuration, baseline or result file read (a larger one is refused)
MAX_BYTES = 256 * 1024 * 1024
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def read_bytes(path: str | os.PathLike) -> bytes:
    """A regular file's bytes (ValueError, one line, for a FIFO, device, folder or a huge file)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise ValueError(f"{path}: cannot read ({exc.strerror or 'error'})") from None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(f"{path}: not a regular file")
        if st.st_size > MAX_BYTES:
            raise ValueError(f"{path}: larger than {MAX_BYTES // 2**20} MB")
        return fh.read(MAX_BYTES + 1)


def decode(data: bytes, path: str | os.PathLike) -> str:
    for bom, enc in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(enc)
            except UnicodeDecodeError:
                raise ValueError(f"{path}: not valid {enc.split('-sig')[0].upper()} text") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from None


def load_json(path: str | os.PathLike) -> Any:
    text = decode(read_bytes(path), path)
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError(f"{path}: JSON nested too deeply to read") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    except ValueError as exc:  # e.g. a number too long to convert
        raise ValueError(f"{path}: not valid JSON ({str(exc)[:120]})") from None


def load_toml(path: str | os.PathLike) -> dict[str, Any]:
    text = decode(read_bytes(path), path)
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise ValueError(f"{path}: TOML nested too deeply to read") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: not valid TOML ({exc})") from None
    except ValueError as exc:
        raise ValueError(f"{path}: not valid TOML ({str(exc)[:120]})") from None


def neutral(text: str) -> str:
    """``text`` with each control character replaced by ``?`` (same length: styled spans stay put)."""
    return _CONTROL.sub("?", text)


def printable(text: object) -> str:
    """``text`` with control characters (terminal escapes, bidirectional overrides) shown as ``\\xNN``."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 256 else f"\\u{ord(m.group()):04x}",
                        str(text))


#: an output never goes to a file with one of these suffixes (a source, header or build file)
SOURCE_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".hh", ".hxx", ".inl", ".inc", ".c", ".cc", ".cpp", ".cxx", ".py",
                   ".toml", ".cmake")


def refuse_clobber(output: str | os.PathLike, inputs: list[str] | tuple[str, ...], option: str = "-o") -> None:
    """ValueError (one line) when ``output`` is a source or project file (by suffix, or CMakeLists.txt) or
    resolves to one of ``inputs``: a report written there would replace the code it reports on."""
    out = os.fspath(output)
    if out.lower().endswith(SOURCE_SUFFIXES) or os.path.basename(out) == "CMakeLists.txt":
        raise ValueError(f"{option} {out}: names a source or project file; refused, so that a report never "
                         "replaces code (name a .json, .sarif, .html or .txt file)")
    real = os.path.realpath(out)
    for p in inputs:
        try:
            same = os.path.realpath(p) == real or (os.path.exists(out) and os.path.samefile(p, out))
        except OSError:
            same = False
        if same:
            raise ValueError(f"{option} {out}: is an analysed file; refused")


def write_atomic(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, then rename it over ``path`` (a reader never
    sees half a report; an interrupted write leaves the old file). OSError as from open()."""
    write_atomic_bytes(path, text.encode("utf-8"), keep_mode=True)


def write_atomic_bytes(path: str | os.PathLike, data: bytes, *, keep_mode: bool = False, sync: bool = False) -> None:
    """Write ``data`` so that a reader sees the old file or the whole new one, never a part: a
    temporary file in the same folder (flushed to disk with ``sync``), then renamed over ``path``.
    ``keep_mode``: the new file gets the old one's permissions (else those a new file gets)."""
    import tempfile

    target = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(target))
    fd, tmp = tempfile.mkstemp(prefix=".cudalens-", suffix=".part", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if sync:
                fh.flush()
                os.fsync(fh.fileno())
        if keep_mode and os.path.exists(target):
            try:
                os.chmod(tmp, os.stat(target).st_mode & 0o777)
            except OSError:
                pass
        elif keep_mode:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise