#pragma once

#include "kernels/1_naive.cuh"
#include "kernels/2_coalesce.cuh"
