"""What several rules ask of one function or kernel, worked out once: rules._host's copies and host buffers (per
function node, syntax.kept) and compiled.launch.occupancy (per resources and launch); every rule
that asks gets what a fresh reading gives, in containers of its own."""

from cudalens.rules import _host as host
from cudalens.source import syntax as syn

TEXT = (b"void f(float *d, int n) {\n  float *h = (float *)malloc(n); float *p; cudaMallocHost(&p, n);\n"
        b"  std::vector<float> v(n);\n  cudaMemcpy(d, h, n, cudaMemcpyHostToDevice);\n"
        b"  cudaMemcpyAsync(p, d, n, cudaMemcpyDeviceToHost, s);\n}\n")


def test_copies_and_buffers_kept_answer_as_computed() -> None:
    tree = syn.parse_tree(TEXT)
    fn = syn.functions(tree)[0].node
    fresh_copies, fresh_buffers = list(host._copies(fn)), host._host_buffers(fn)
    assert [c.func for c in fresh_copies] == ["cudaMemcpy", "cudaMemcpyAsync"]
    assert fresh_buffers.pageable == {"h": "malloc", "v": "std::vector"} and fresh_buffers.pinned == {"p"}
    for _ in range(2):
        got = host.copies(fn)
        assert got == fresh_copies
        got.clear()  # the caller's list: the kept copies stay
        bufs = host.host_buffers(fn)
        assert bufs == fresh_buffers
        bufs.pageable.clear()
        bufs.pinned.clear()
    assert host.copies(fn) == fresh_copies and host.host_buffers(fn) == fresh_buffers


def test_occupancy_kept_per_resources_is_the_calculators() -> None:
    from types import SimpleNamespace

    from cudalens.compiled.launch import occupancy
    from cudalens.compiled.model import Resources
    from cudalens.occupancy.calculator import calculate

    for regs, smem, block in ((32, 0, 256), (96, 4096, 128), (255, 49152, 1024), (40, 0, 96)):
        res = Resources(regs, smem, 0, 0, 0, 0, 1)
        want = calculate(cc="8.6", threads_per_block=block, registers_per_thread=regs, shared_mem_per_block=1024,
                         static_shared_mem=smem, block_barriers=1)
        got = occupancy(SimpleNamespace(resources=res), "8.6", block, 1024)
        assert got == want and occupancy(SimpleNamespace(resources=res), "8.6", block, 1024) is got
