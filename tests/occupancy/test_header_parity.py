"""cudalens.occupancy against CUDA's own cuda_occupancy.h, compiled with g++ (no GPU, no nvcc).

Header used: the one in the pinned wheel nvidia-cuda-runtime 13.0.x (CUDA 13.0), found through the
``nvidia`` namespace package (nvidia/cu13/include/cuda_occupancy.h). The device properties are
filled from the hardware table as a real device reports them; the function attributes as the
header's constructor from cudaFuncAttributes makes them (opt-in shared-memory limit, one block
barrier), with the kernel opted in to the largest dynamic shared-memory size; the device state
starts at carveout -1 (no preference), as the header's constructor sets it.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from cudalens.hardware.table import known_ccs, limits
from cudalens.occupancy import LIMIT_NAMES, calculate, max_potential_block_size

HEADER_PACKAGE = "nvidia-cuda-runtime"
HEADER_SERIES = "13.0."  # the port follows CUDA 13.0's header; 13.5 differs (see reference/README)
INT_MAX = 2**31 - 1
FLAG_BITS = {"warps": 0x01, "registers": 0x02, "shared_memory": 0x04, "blocks": 0x08,
             "barriers": 0x10}
CACHE = {"none": 0, "shared": 1, "l1": 2, "equal": 3}
GC = {"off": 0, "on": 1, "strict": 2}
DRIVER = Path(__file__).with_name("occ_driver.cpp")


def _include_dir() -> Path | None:
    spec = importlib.util.find_spec("nvidia")
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        candidate = Path(root) / "cu13" / "include"
        if (candidate / "cuda_occupancy.h").is_file():
            return candidate
    return None


@pytest.fixture(scope="module")
def header_info() -> dict:
    include = _include_dir()
    if include is None:
        pytest.skip("cuda_occupancy.h not found (nvidia-cuda-runtime wheel not installed)")
    version = importlib.metadata.version(HEADER_PACKAGE)
    assert version.startswith(HEADER_SERIES), (
        f"{HEADER_PACKAGE} {version} installed; the port follows the {HEADER_SERIES}x header"
    )
    data = (include / "cuda_occupancy.h").read_bytes()
    return {"include": include, "version": version,
            "sha256": hashlib.sha256(data).hexdigest()}


@pytest.fixture(scope="module")
def driver(header_info, tmp_path_factory) -> Path:
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("g++ not found")
    exe = tmp_path_factory.mktemp("occ") / "occ_driver"
    subprocess.run(
        [gxx, "-std=c++11", "-O1", f"-I{header_info['include']}", str(DRIVER), "-o", str(exe)],
        check=True, capture_output=True, text=True,
    )
    return exe


def _run(exe: Path, lines: list[str]) -> list[list[int]]:
    proc = subprocess.run([str(exe)], input="\n".join(lines) + "\n", capture_output=True,
                          text=True, check=True, timeout=120)
    out = [[int(x) for x in row.split()] for row in proc.stdout.splitlines()]
    assert len(out) == len(lines)
    return out


def _prefix(mode: str, cc: str, cfg: dict) -> str:
    """The request header: device properties from the table, kernel attributes, device state."""
    lim = limits(cc)
    static = cfg["static"]
    max_dyn = cfg["max_dyn"] if cfg["max_dyn"] is not None else max(
        0, lim.max_smem_per_block_optin - static)
    carveout = -1 if cfg["carveout"] is None else cfg["carveout"]
    fields = [
        mode, lim.major, lim.minor, 1024, lim.max_threads_per_sm, lim.max_regs_per_block,
        lim.regs_per_sm, 32, lim.max_smem_per_block_default, lim.smem_per_sm, 100,
        lim.max_smem_per_block_optin, lim.reserved_smem_per_block,
        cfg.get("kernel_max", 1024), cfg["regs"], static, max_dyn, cfg["barriers"],
        GC[cfg["gc"]], CACHE[cfg["cache"]], carveout,
    ]
    return " ".join(str(f) for f in fields)


def _random_config(rng: random.Random, cc: str) -> dict:
    lim = limits(cc)
    optin = lim.max_smem_per_block_optin
    u = rng.random()
    if u < 0.6:
        threads = rng.randint(1, 1024)
    elif u < 0.8:
        threads = 32 * rng.randint(1, 32)
    elif u < 0.9:
        threads = rng.randint(1, 96)
    else:
        threads = rng.randint(1025, 1200)
    u = rng.random()
    if u < 0.8:
        regs = rng.randint(0, 255)
    elif u < 0.9:
        regs = rng.randint(256, 300)
    else:
        regs = rng.choice([0, 1, 16, 32, 63, 64, 65, 128, 168, 255, 256, 257])
    u = rng.random()
    static = 0 if u < 0.6 else rng.randint(0, 48 * 1024) if u < 0.92 else rng.randint(0, 72 * 1024)
    u = rng.random()
    if u < 0.3:
        dyn = 0
    elif u < 0.8:
        dyn = rng.randint(0, lim.smem_per_sm)
    elif u < 0.9:
        dyn = rng.randint(0, int(lim.smem_per_sm * 1.3))
    else:
        dyn = max(0, optin - static + rng.randint(-300, 300))
    carveout = None if rng.random() < 0.6 else rng.choice(
        [-1, 0, 10, 25, 33, 50, 66, 100, rng.randint(0, 100)])
    cache = "none" if rng.random() < 0.7 else rng.choice(list(CACHE))
    u = rng.random()
    barriers = 1 if u < 0.85 else 0 if u < 0.9 else rng.randint(2, 4)
    gc = "off" if rng.random() < 0.9 else rng.choice(["on", "strict"])
    max_dyn = None if rng.random() < 0.9 else rng.randint(0, optin)
    return dict(threads=threads, regs=regs, static=static, dyn=dyn, carveout=carveout,
                cache=cache, barriers=barriers, gc=gc, max_dyn=max_dyn)


def _configs(n_per_cc: int, seed: int) -> list[tuple[str, dict]]:
    rng = random.Random(seed)
    return [(cc, _random_config(rng, cc)) for cc in known_ccs() for _ in range(n_per_cc)]


def _ours(cc: str, cfg: dict):
    return calculate(
        cc, cfg["threads"], cfg["regs"], cfg["dyn"], static_shared_mem=cfg["static"],
        max_dynamic_shared_mem=cfg["max_dyn"], carveout=cfg["carveout"],
        cache_config=cfg["cache"], block_barriers=cfg["barriers"], partitioned_gc=cfg["gc"],
    )


def test_active_blocks_and_limiters_match_header_on_random_configs(driver, header_info):
    configs = _configs(1000, seed=20240613)  # 21 CCs x 1000 = 21,000 configurations
    assert len(configs) >= 20_000
    assert {cc for cc, _ in configs} == set(known_ccs())
    lines = [f"{_prefix('A', cc, cfg)} {cfg['threads']} {cfg['dyn']}" for cc, cfg in configs]
    answers = _run(driver, lines)
    mismatches = []
    zero_blocks = 0
    seen_limiters: set[str] = set()
    for (cc, cfg), ans in zip(configs, answers):
        status, active, flags, l_regs, l_smem, l_warps, l_blocks, l_bars, a_regs, a_smem, gc = ans
        assert status == 0, f"header rejected {cc} {cfg}"
        ours = _ours(cc, cfg)
        header_limits = {"registers": l_regs, "shared_memory": l_smem, "warps": l_warps,
                         "blocks": l_blocks, "barriers": l_bars}
        header_limiters = {n for n, bit in FLAG_BITS.items() if flags & bit}
        if cfg["barriers"] >= 2:
            # With 2+ barriers the header keeps flags of limits the barrier limit undercuts;
            # ours names only the limits that bind at the final count.
            header_limiters = {n for n in header_limiters if header_limits[n] == active}
        got_limits = {n: INT_MAX if ours.block_limit(n) is None else ours.block_limit(n)
                      for n in LIMIT_NAMES}
        zero_blocks += active == 0
        seen_limiters |= header_limiters
        if (ours.active_blocks_per_sm != active or set(ours.limiters) != header_limiters
                or got_limits != header_limits or ours.registers_per_block != a_regs
                or ours.shared_mem_allocated_per_block != a_smem
                or ours.partitioned_gc != list(GC)[gc]):
            mismatches.append((cc, cfg, ans, ours))
    assert not mismatches, f"{len(mismatches)} mismatches, first: {mismatches[:3]}"
    # The sample must contain impossible configurations and every limiter.
    assert zero_blocks > 1000
    assert seen_limiters == set(LIMIT_NAMES)
    print(f"header {HEADER_PACKAGE} {header_info['version']} sha256 {header_info['sha256'][:16]}")


def test_max_potential_block_size_matches_header(driver):
    rng = random.Random(99)
    cases = []
    for cc in known_ccs():
        for _ in range(60):
            cfg = _random_config(rng, cc)
            cfg["kernel_max"] = rng.choice([1024, 1024, 1024, rng.randint(1, 1024)])
            cfg["dyn"] = rng.choice([0, 0, rng.randint(0, 64 * 1024), rng.randint(0, 240 * 1024)])
            cases.append((cc, cfg))
    lines = [f"{_prefix('P', cc, cfg)} {cfg['dyn']}" for cc, cfg in cases]
    answers = _run(driver, lines)
    bad = []
    for (cc, cfg), (status, grid, block) in zip(cases, answers):
        assert status == 0
        got = max_potential_block_size(
            cc, cfg["regs"], cfg["dyn"], static_shared_mem=cfg["static"],
            max_dynamic_shared_mem=cfg["max_dyn"], kernel_max_threads=cfg["kernel_max"],
            carveout=cfg["carveout"], cache_config=cfg["cache"], block_barriers=cfg["barriers"],
            partitioned_gc=cfg["gc"], num_sms=100,
        )
        if tuple(got) != (grid, block):
            bad.append((cc, cfg, (grid, block), got))
    assert not bad, f"{len(bad)} mismatches, first: {bad[:3]}"


def test_variable_smem_block_size_matches_header(driver):
    rng = random.Random(5)
    cases = []
    for cc in known_ccs():
        for _ in range(25):
            cfg = _random_config(rng, cc)
            cfg["per_thread"] = rng.choice([0, 4, 8, 16, 64, 128, 256])
            cfg["fixed"] = rng.choice([0, 1024, rng.randint(0, 16384)])
            cases.append((cc, cfg))
    lines = [f"{_prefix('V', cc, cfg)} {cfg['per_thread']} {cfg['fixed']}" for cc, cfg in cases]
    answers = _run(driver, lines)
    for (cc, cfg), (status, grid, block) in zip(cases, answers):
        assert status == 0
        got = max_potential_block_size(
            cc, cfg["regs"], lambda b, c=cfg: c["per_thread"] * b + c["fixed"],
            static_shared_mem=cfg["static"], max_dynamic_shared_mem=cfg["max_dyn"],
            carveout=cfg["carveout"], cache_config=cfg["cache"],
            block_barriers=cfg["barriers"], partitioned_gc=cfg["gc"], num_sms=100,
        )
        assert tuple(got) == (grid, block), (cc, cfg)
