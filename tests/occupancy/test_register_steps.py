"""register_steps finds the occupancy steps by bisection, which is exact because the blocks per SM never
grow with the registers per thread: checked here over every compute capability of the table, and the
bisection compared with the scan one register at a time it replaced."""

from types import SimpleNamespace

from cudalens.compiled.launch import RegisterStep, _active_blocks, register_steps
from cudalens.hardware.table import known_ccs

SHAPES = [(cc, tpb, smem, barriers) for cc in known_ccs() for tpb in (32, 96, 256, 1024)
          for smem in (0, 40000) for barriers in (0, 1)]


def _scan(cc: str, tpb: int, smem: int, barriers: int, regs: int, max_regs: int = 255) -> RegisterStep:
    """The scan register_steps made before (one register at a time, each way)."""
    def blocks(r: int) -> int:
        return _active_blocks(cc, tpb, r, smem, 0, barriers)

    now = blocks(regs)
    fewer = next(((r, blocks(r)) for r in range(regs - 1, 15, -1) if blocks(r) > now), (None, None))
    more = next(((r, blocks(r)) for r in range(regs + 1, max_regs + 1) if blocks(r) < now), (None, None))
    return RegisterStep(regs, now, fewer[0], fewer[1], more[0], more[1])


def test_blocks_never_grow_with_registers() -> None:
    for cc, tpb, smem, barriers in SHAPES:
        counts = [_active_blocks(cc, tpb, r, smem, 0, barriers) for r in range(1, 256)]
        assert all(a >= b for a, b in zip(counts, counts[1:])), (cc, tpb, smem, barriers)


def test_bisection_equals_the_scan() -> None:
    for cc, tpb, smem, barriers in SHAPES:
        for regs in (16, 17, 24, 32, 33, 40, 56, 64, 72, 96, 128, 168, 200, 254, 255):
            kernel = SimpleNamespace(resources=SimpleNamespace(registers=regs, static_shared_bytes=0,
                                                               barriers=barriers))
            got = register_steps(kernel, cc, tpb, smem)
            assert got == _scan(cc, tpb, smem, barriers, regs), (cc, tpb, smem, barriers, regs)
        kernel = SimpleNamespace(resources=SimpleNamespace(registers=64, static_shared_bytes=0, barriers=barriers))
        assert register_steps(kernel, cc, tpb, smem, max_regs=100) == _scan(cc, tpb, smem, barriers, 64, 100)
