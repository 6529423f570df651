"""What a built executable or object carries for the GPU: SASS (cubin) per architecture and PTX.

``cuobjdump --list-elf`` prints ``ELF file    1: app.1.sm_80.cubin`` per cubin and
``cuobjdump --list-ptx`` ``PTX file    1: app.1.sm_90.ptx`` per PTX image. A device of compute
capability X.Y runs a cubin built for the same major and a minor <= Y; otherwise the driver JIT-
compiles PTX of a virtual architecture <= X.Y, and without either the launch fails.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from cudalens.compiled.toolchain import Toolchain, discover
from cudalens.errors import InputError, ToolchainError

_ARCH_RE = re.compile(r"\.sm_(\d+)([af]?)\.(?:cubin|ptx)\s*$")


@dataclass(frozen=True)
class FatbinContents:
    path: str
    cubin_archs: tuple[int, ...]  # e.g. (80, 90): sm_80, sm_90
    ptx_archs: tuple[int, ...]

    def runs_natively_on(self, cc: str) -> bool:
        """A cubin of the same major and a minor not above the device's."""
        major, minor = (int(x) for x in cc.split("."))
        return any(a // 10 == major and a % 10 <= minor for a in self.cubin_archs)

    def jit_possible_on(self, cc: str) -> bool:
        major, minor = (int(x) for x in cc.split("."))
        return any(a <= major * 10 + minor for a in self.ptx_archs)

    def to_dict(self) -> dict[str, object]:
        return {"path": self.path, "cubin": [f"sm_{a}" for a in self.cubin_archs], "ptx": [f"compute_{a}" for a in self.ptx_archs]}


def parse_listing(text: str) -> tuple[int, ...]:
    return tuple(sorted({int(m.group(1)) for line in text.splitlines() if (m := _ARCH_RE.search(line))}))


def inspect_binary(path: str | Path, toolchain: Toolchain | None = None) -> FatbinContents:
    """The cubin and PTX architectures embedded in an executable, object or library."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{path}: no such file")
    tc = toolchain or discover()
    tool = tc.get("cuobjdump").path
    outs = []
    for flag in ("--list-elf", "--list-ptx"):
        proc = subprocess.run([tool, flag, str(p)], capture_output=True, text=True, env=tc.env())
        if proc.returncode != 0 and "does not contain" not in (proc.stderr + proc.stdout):
            raise ToolchainError(f"cuobjdump {flag} {p}: {proc.stderr.strip()[:300]}")
        outs.append(proc.stdout)
    return FatbinContents(str(p), parse_listing(outs[0]), parse_listing(outs[1]))
