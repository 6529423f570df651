"""Errors of our own type. The CLI turns each into one line on stderr and exit code 2."""


class CudalensError(Exception):
    """Base of every error cudalens raises on purpose; its message is meant for the user."""


class InputError(CudalensError, ValueError):
    """Invalid input: an unknown compute capability, a negative size, a file that is not CUDA."""


class ToolchainError(CudalensError):
    """A CUDA tool (nvcc, ptxas, cuobjdump, nvdisasm, ncu) is missing or failed."""


class NoDeviceError(CudalensError):
    """The work needs a GPU and none is usable here."""


def read_text(path: str, what: str) -> str:
    """The text of the file ``path`` (undecodable bytes replaced); an :class:`InputError`
    ``"PATH: cannot read WHAT (reason)"`` when it cannot be read."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError as exc:
        raise InputError(f"{path}: cannot read {what} ({exc.strerror})") from None


def what_failed(exc: BaseException) -> str:
    """Words for a failure shown to the user, never a Python class name: ``compile error: MSG``,
    ``out of memory``, ``nested too deeply``, ``internal error: MSG`` ..."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    name = type(exc).__name__
    kind = {"CompileError": "compile error", "ToolchainError": "toolchain", "InputError": "bad input",
            "MemoryError": "out of memory", "RecursionError": "nested too deeply", "Unknown": "unknown value",
            "BudgetExceeded": "budget spent", "TimeoutExpired": "timed out"}.get(name, "internal error")
    if name in ("MemoryError", "RecursionError"):
        return kind
    return f"{kind}: {text}" if text else kind
