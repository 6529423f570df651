"""The wheel toolchain compiles ordinary CUDA: the header families a kernel commonly includes, and
`cudalens doctor` says which families are there, from where, and how to add a missing one."""

from __future__ import annotations

import pytest

from cudalens.compiled.doctor import HEADER_FAMILIES, header_families

# one line per family, each used so that the compiler must really see it
USES = {
    "fp16/bf16/fp8": ("#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n",
                      ("__half h = __float2half(a[0]); __nv_bfloat16 b = __float2bfloat16(a[1]);"
                       " a[2] = __half2float(h) + __bfloat162float(b);")),
    "mma (WMMA)": ("#include <mma.h>\n", ("nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> f;"
                                         " nvcuda::wmma::fill_fragment(f, 0.0f);")),
    "cooperative groups": ("#include <cooperative_groups.h>\n",
                           "auto g = cooperative_groups::this_thread_block(); g.sync();"),
    "CCCL: CUB": ("#include <cub/cub.cuh>\n", ("typedef cub::WarpReduce<float> R; __shared__ R::TempStorage t;"
                                               " a[3] = R(t).Sum(a[threadIdx.x]);")),
    "CCCL: Thrust": ("#include <thrust/device_vector.h>\n#include <thrust/functional.h>\n",
                     "a[4] = thrust::plus<float>()(a[0], a[1]);"),
    "CCCL: libcu++ (cuda/std, cuda/pipeline)": ("#include <cuda/std/atomic>\n#include <cuda/pipeline>\n",
                                                "cuda::std::atomic_ref<float> r(a[5]); r.fetch_add(1.0f);"),
    "profiler API": ("#include <cuda_profiler_api.h>\n", ""),
    "cuRAND (device and host)": ("#include <curand_kernel.h>\n",
                                 "curandState s; curand_init(1, threadIdx.x, 0, &s); a[6] = curand_uniform(&s);"),
}


def test_doctor_lists_families_with_origin_or_fix(wheel_toolchain):
    fams = header_families(wheel_toolchain)
    assert set(fams) == set(HEADER_FAMILIES)
    for name in ("CUDA runtime", "CCCL: CUB", "CCCL: Thrust", "CCCL: libcu++ (cuda/std, cuda/pipeline)",
                 "cooperative groups", "mma (WMMA)"):
        assert fams[name]["available"] and fams[name]["from"].startswith("wheel: "), (name, fams[name])
    for f in fams.values():  # every family is either found (and where) or comes with the command that adds it
        assert (f["from"] is not None) != (f["fix"] is not None)
        assert f["fix"] is None or f["fix"].startswith("pip install")


def test_common_header_families_compile(wheel_toolchain, tmp_path):
    from cudalens.compiled import compile_file

    fams = header_families(wheel_toolchain)
    present = {k: v for k, v in USES.items() if fams[k]["available"]}
    missing = sorted(set(USES) - set(present))
    assert "CCCL: CUB" in present  # the default install brings CCCL
    src = tmp_path / "families.cu"
    src.write_text("".join(h for h, _ in present.values())
                   + "__global__ void k(float *a) {\n" + "\n".join(b for _, b in present.values()) + "\n}\n")
    result = compile_file(src, "9.0", None, ["-std=c++17"], False, wheel_toolchain)
    assert "k" in result.kernels
    if missing:
        pytest.skip(f"compiled every family present; not installed here: {', '.join(missing)} "
                    "(pip install 'cudalens[cuda-libs]')")
