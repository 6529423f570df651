"""Every lab kernel file compiles for sm_90 with nvcc, and every kernel a lab names exists."""

from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from cudalens.labs import all_labs
from cudalens.labs.runner import find_nvcc, kernel_names, kernel_path, kernel_source, mangled_names, nvcc_flags

KERNEL_DIR = Path(str(kernel_path("coalescing.cu"))).parent
VARIANTS = [(f.name, ()) for f in sorted(KERNEL_DIR.glob("*.cu")) if f.name != "asynccopy.cu"]
VARIANTS += [("asynccopy.cu", (f"ELEM_BYTES={b}",)) for b in (4, 8, 16)]
VARIANTS += [("intrinsics.cu", ("FAST",)), ("occupancy.cu", ("MAXREG",))]


@pytest.fixture(scope="module")
def cubins(tmp_path_factory):
    nvcc = find_nvcc()
    if nvcc is None:
        pytest.skip("nvcc not found (PATH, CUDA_HOME or the nvidia-cuda-nvcc wheel)")
    out = tmp_path_factory.mktemp("cubins")

    def build(item):
        file, defines = item
        fast = "FAST" in defines
        maxreg = 32 if "MAXREG" in defines else None
        real = tuple(d for d in defines if d not in ("FAST", "MAXREG"))
        target = out / f"{file}.{'_'.join(defines) or 'plain'}.cubin"
        cmd = [nvcc, *nvcc_flags((9, 0), real, fast, maxreg), "-o", str(target), str(kernel_path(file))]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        return item, proc, target

    with ThreadPoolExecutor(max_workers=4) as pool:
        return {item: (proc, target) for item, proc, target in pool.map(build, VARIANTS)}


@pytest.mark.parametrize("item", VARIANTS, ids=lambda i: f"{i[0]}{'+' + '+'.join(i[1]) if i[1] else ''}")
def test_kernel_file_compiles_for_sm90(cubins, item):
    proc, target = cubins[item]
    assert proc.returncode == 0, proc.stderr
    names = kernel_names(kernel_source(item[0]))
    assert names, "no __global__ kernels found"
    found = mangled_names(target.read_bytes(), names)
    assert set(found) == set(names), f"kernels missing from the cubin: {set(names) - set(found)}"


def test_every_kernel_a_lab_names_exists():
    for lab in all_labs():
        if lab.kernel_file is None:
            continue
        names = set(kernel_names(kernel_source(lab.kernel_file)))
        for pair in lab.pairs:
            assert {pair.bad, pair.good} <= names, (lab.name, pair)
