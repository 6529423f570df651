// Empty stand-in for cuBLAS's header: siboehm/SGEMM_CUDA's kernel headers include it but use nothing
// from it, and cuBLAS is not among the wheels the toolchain installs.
#pragma once
