"""Device copies of arguments and outputs: one upload for every caller, poisoning, read-back.

- :class:`ArgSets`: the array arguments of a kernel copied to the device, ``rotate`` independent
  sets (cycling through them defeats a kernel that caches its output by pointer); ``upload(k)``
  copies the host values again (the one argument upload of the harness).
- :func:`device_array`: pointer, size, dtype and shape of a framework's device array (anything with
  ``__cuda_array_interface__``: PyTorch, CuPy, Numba).
- :func:`poison` / :func:`unwritten` / :func:`read_array`: fill outputs with 0xFF bytes before a
  checked run (NaN for floats, -1 for integers), count elements still holding it, copy back.
- :func:`first_run_check`: the check of the run before the timed samples.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from cudalens.errors import InputError
from cudalens.measure.certificate import compare_outputs

POISON_BYTE = 0xFF  # outputs are filled with this before a checked run: NaN for floats, -1 for ints


class ArgSets:
    """Device copies of the array arguments: ``rotate`` independent sets, uploaded by one function."""

    def __init__(self, cu: Any, host: Sequence[Any], rotate: int) -> None:
        self.cu, self.host = cu, list(host)
        self.buffers: list[Any] = []
        self.packed: list[list[tuple[Any, str]]] = []
        for _ in range(rotate):
            packed = []
            for v in self.host:
                if isinstance(v, np.ndarray):
                    buf = cu.DeviceBuffer(max(v.nbytes, 1))
                    self.buffers.append(buf)
                    packed.append((buf.ptr, "u8"))
                else:
                    packed.append((v, v.dtype.str))
            self.packed.append(packed)
        for k in range(rotate):
            self.upload(k)

    def upload(self, k: int = 0) -> None:
        for v, (ptr, _) in zip(self.host, self.packed[k]):
            if isinstance(v, np.ndarray) and v.nbytes:
                self.cu.check(self.cu._driver().cuMemcpyHtoD(ptr, v.ctypes.data, v.nbytes), "cuMemcpyHtoD")

    def ptr(self, k: int, idx: int) -> int:
        return int(self.packed[k][idx][0])

    def close(self) -> None:
        for b in reversed(self.buffers):
            try:
                b.close()
            except Exception:  # noqa: BLE001 - a dead context after a fault
                pass


def device_array(obj: Any) -> tuple[int, int, np.dtype, tuple[int, ...]]:
    """(pointer, bytes, dtype, shape) of a contiguous device array (``__cuda_array_interface__``)."""
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is None:
        raise InputError(f"outputs: {type(obj).__name__} has no __cuda_array_interface__ (torch, CuPy, Numba do)")
    if cai.get("strides") not in (None, ()) and obj is not None:
        shape, dt = tuple(cai["shape"]), np.dtype(cai["typestr"])
        expect = tuple(int(np.prod(shape[i + 1:])) * dt.itemsize for i in range(len(shape)))
        if tuple(cai["strides"]) != expect:
            raise InputError("outputs: only contiguous device arrays can be checked")
    dt = np.dtype(cai["typestr"])
    shape = tuple(int(x) for x in cai["shape"])
    return int(cai["data"][0]), int(np.prod(shape)) * dt.itemsize, dt, shape


def read_array(cu: Any, ptr: int, nbytes: int, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    out = np.empty(shape, dtype)
    if nbytes:
        cu.check(cu._driver().cuMemcpyDtoH(out.ctypes.data, ptr, nbytes), "cuMemcpyDtoH")
    return out


def poison(cu: Any, ptr: int, nbytes: int) -> None:
    if nbytes:
        cu.check(cu._driver().cuMemsetD8(ptr, POISON_BYTE, nbytes), "cuMemsetD8(poison)")


def unwritten(arr: np.ndarray) -> int:
    """Elements still holding the poison pattern."""
    raw = np.ascontiguousarray(arr).view(np.uint8).reshape(arr.size, -1) if arr.size else np.zeros((0, 1), np.uint8)
    return int(np.all(raw == POISON_BYTE, axis=1).sum())


def first_run_check(outs: Mapping[int, np.ndarray], expected: Mapping[int, np.ndarray] | None,
                     rtol: float, atol: float) -> dict[str, Any]:
    if expected is not None:
        return compare_outputs(outs, expected, rtol, atol, against="the reference")
    left = {str(i): unwritten(a) for i, a in outs.items()}
    ok = all(left[str(i)] < a.size or a.size == 0 for i, a in outs.items())
    ok = ok and all(v == 0 for i, v in left.items() if outs[int(i)].dtype.kind in "fc")
    res = {"checked": True, "ok": ok, "against": "poison (every output element written)", "unwritten": left}
    if not ok:
        res["reason"] = f"the first run left outputs unwritten: {left}"
    return res
