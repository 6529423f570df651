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
