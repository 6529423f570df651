"""`check` imports what a file's analysis needs once, before it forks the per-file workers (issue #29):
a worker then imports nothing of cudalens' own, and the rule packages are walked once per process."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import cudalens
from cudalens.rules import registry

KERNEL = """
#define N 256
__global__ void scale(float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] *= 2.0; }
int main() { float *a; cudaMalloc(&a, N * 4); scale<<<N / 128, 128>>>(a, N); cudaDeviceSynchronize(); return 0; }
"""


def test_a_file_analysed_after_preload_imports_no_module_of_cudalens(tmp_path):
    cu = tmp_path / "k.cu"
    cu.write_text(KERNEL)
    code = textwrap.dedent(f"""
        import sys
        from cudalens.pipeline.stages import analyze_file, preload
        preload()
        before = set(sys.modules)
        analyze_file({str(cu)!r}, compile=False)
        print(sorted(m for m in set(sys.modules) - before if m.startswith("cudalens")))
    """)
    env_path = str(next(iter(cudalens.__path__)).rsplit("/cudalens", 1)[0])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == "[]", out.stdout


def test_the_rule_packages_are_walked_once(monkeypatch):
    registry._import_rule_modules.cache_clear()
    first = registry.load_all()  # the walk
    walks = []
    monkeypatch.setattr(registry.pkgutil, "walk_packages", lambda *a, **k: walks.append(a) or iter(()))
    assert registry.load_all() is first and first and walks == []
    registry._import_rule_modules.cache_clear()
    registry.load_all()  # the cache cleared: walked again
    assert len(walks) == 1
