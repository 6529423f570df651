"""Generic launcher (runs on the GPU machine, possibly under ncu): loads one translation unit's cubin
and launches each planned kernel once with zero-filled buffers (benchmarks/realworld/realworld_validate.py
says how the plan chooses arguments and launch configurations).

Usage: python3 _realworld_launch.py ROOT LIST.json   (LIST: [[tu, kernel name], ...], launched in order)
Prints ``START tu kernel`` before and ``OK tu kernel`` after each kernel (flushing), so a driver can
tell which kernel faulted or hung. Uses CuPy's driver bindings when present, else cuda.bindings.
"""

from __future__ import annotations

import ctypes
import json
import struct
import sys
from pathlib import Path


def _pack(p: dict, ptr: int) -> bytes:
    k = p["kind"]
    if k == "ptr":
        return struct.pack("<Q", ptr)
    if k == "f32":
        return struct.pack("<f", float(p["value"]))
    if k == "f64":
        return struct.pack("<d", float(p["value"]))
    if k == "bytes":
        return bytes(p["size"])
    size = p["size"]
    return int(p["value"]).to_bytes(size, "little", signed=True)


class _Cupy:
    def __init__(self) -> None:
        import cupy

        self.cp = cupy
        self.mods: dict = {}
        self.bufs: list = []

    def load(self, cubin: Path) -> None:
        if str(cubin) not in self.mods:
            mod = self.cp.cuda.function.Module()
            mod.load_file(str(cubin))
            self.mods[str(cubin)] = mod
        self.mod = self.mods[str(cubin)]

    def buffer(self, k: int, nbytes: int) -> int:
        while len(self.bufs) <= k:
            self.bufs.append(self.cp.zeros(nbytes, dtype=self.cp.uint8))
        self.bufs[k].fill(0)
        return int(self.bufs[k].data.ptr)

    def launch(self, name: str, grid, block, smem: int, params_ptr: int) -> None:
        f = self.mod.get_function(name)
        if smem > 48 * 1024:
            self.cp.cuda.driver.funcSetAttribute(f.ptr, 8, smem)
        self.cp.cuda.driver.launchKernel(f.ptr, *grid, *block, smem, 0, params_ptr, 0)
        self.cp.cuda.runtime.deviceSynchronize()


class _Bindings:
    def __init__(self) -> None:
        from cuda.bindings import driver as cu

        self.cu = cu
        self._ok(cu.cuInit(0))
        dev = self._ok(cu.cuDeviceGet(0))
        ctx = self._ok(cu.cuDevicePrimaryCtxRetain(dev))
        self._ok(cu.cuCtxSetCurrent(ctx))
        self.mods: dict = {}
        self.bufs: list = []

    def load(self, cubin: Path) -> None:
        if str(cubin) not in self.mods:
            self.mods[str(cubin)] = self._ok(self.cu.cuModuleLoadData(cubin.read_bytes()))
        self.mod = self.mods[str(cubin)]

    def _ok(self, res):
        err, *rest = res if isinstance(res, tuple) else (res,)
        if int(err) != 0:
            raise RuntimeError(f"CUDA error {err}")
        return rest[0] if len(rest) == 1 else (rest or None)

    def buffer(self, k: int, nbytes: int) -> int:
        while len(self.bufs) <= k:
            self.bufs.append(self._ok(self.cu.cuMemAlloc(nbytes)))
        self._ok(self.cu.cuMemsetD8(self.bufs[k], 0, nbytes))
        return int(self.bufs[k])

    def launch(self, name: str, grid, block, smem: int, params_ptr: int) -> None:
        f = self._ok(self.cu.cuModuleGetFunction(self.mod, name.encode()))
        self._ok(self.cu.cuLaunchKernel(f, *grid, *block, smem, 0, params_ptr, 0))
        self._ok(self.cu.cuCtxSynchronize())


def main(argv: list[str]) -> int:
    root = Path(argv[0])
    todo = json.loads(Path(argv[1]).read_text())
    plan = json.loads((root / "plan.json").read_text())
    units = {u["tu"]: u for u in plan["units"]}
    try:
        dev = _Cupy()
    except Exception as exc:  # noqa: BLE001 - fall back to the other binding
        sys.stdout.write(f"cupy unavailable ({exc}); using cuda.bindings\n")
        dev = _Bindings()
    for tu, name in todo:
        unit = units[tu]
        k = next(x for x in unit["kernels"] if x["name"] == name)
        sys.stdout.write(f"START {tu} {name}\n")
        sys.stdout.flush()
        dev.load(root / unit["cubin"])
        blobs, nptr = [], 0
        for p in k["params"]:
            ptr = 0
            if p["kind"] == "ptr":
                ptr = dev.buffer(nptr, plan["buffer_bytes"])
                nptr += 1
            blobs.append(ctypes.create_string_buffer(_pack(p, ptr), max(p["size"], 1)))
        arr = (ctypes.c_void_p * max(len(blobs), 1))(*[ctypes.addressof(b) for b in blobs])
        dev.launch(name, k["grid"], k["block"], k["smem"], ctypes.addressof(arr))
        sys.stdout.write(f"OK {tu} {name}\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
