"""rules._host's copies and host buffers, worked out once per function node (syntax.kept): every rule
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
