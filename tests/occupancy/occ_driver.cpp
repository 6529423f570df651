// Test driver: feeds configurations to CUDA's cuda_occupancy.h and prints its answers.
// Built by tests/occupancy/test_header_parity.py with `g++ -std=c++11 -I<include dir>`.
//
// One request per stdin line, one answer per stdout line. Every request starts with
//   MODE major minor maxThreadsPerBlock maxThreadsPerSM regsPerBlock regsPerSM warpSize
//        smemPerBlock smemPerSM numSms smemPerBlockOptin reservedSmemPerBlock
//        attrMaxThreadsPerBlock numRegs staticSmem maxDynamicSmem numBlockBarriers partitionedGC
//        cacheConfig carveout
// followed by, for MODE
//   A  blockSize dynamicSmem   -> status active limitingFactors regs smem warps blocks barriers
//                                 allocatedRegsPerBlock allocatedSmemPerBlock partitionedGC
//   P  dynamicSmem             -> status minGridSize blockSize
//   V  perThread fixed         -> status minGridSize blockSize   (smem = perThread*block + fixed)
#include <cuda_occupancy.h>

#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

struct LinearSmem {
    long long perThread;
    long long fixed;
    size_t operator()(int blockSize) const { return (size_t)(perThread * blockSize + fixed); }
};

int main() {
    std::ios::sync_with_stdio(false);
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.empty()) continue;
        std::istringstream in(line);
        char mode;
        cudaOccDeviceProp prop;
        cudaOccFuncAttributes attr;
        cudaOccDeviceState state;
        long long smemPerBlock, smemPerSM, optin, reserved, staticSmem, maxDyn;
        int gc, cacheConfig;
        in >> mode >> prop.computeMajor >> prop.computeMinor >> prop.maxThreadsPerBlock
           >> prop.maxThreadsPerMultiprocessor >> prop.regsPerBlock >> prop.regsPerMultiprocessor
           >> prop.warpSize >> smemPerBlock >> smemPerSM >> prop.numSms >> optin >> reserved
           >> attr.maxThreadsPerBlock >> attr.numRegs >> staticSmem >> maxDyn
           >> attr.numBlockBarriers >> gc >> cacheConfig >> state.carveoutConfig;
        prop.sharedMemPerBlock = (size_t)smemPerBlock;
        prop.sharedMemPerMultiprocessor = (size_t)smemPerSM;
        prop.sharedMemPerBlockOptin = (size_t)optin;
        prop.reservedSharedMemPerBlock = (size_t)reserved;
        attr.sharedSizeBytes = (size_t)staticSmem;
        attr.maxDynamicSharedSizeBytes = (size_t)maxDyn;
        attr.partitionedGCConfig = (cudaOccPartitionedGCConfig)gc;
        attr.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;  // as built from cudaFuncAttributes
        attr.virtualResourceCount = 0;
        state.cacheConfig = (cudaOccCacheConfig)cacheConfig;

        if (mode == 'A') {
            int blockSize;
            long long dyn;
            in >> blockSize >> dyn;
            cudaOccResult r;
            memset(&r, 0, sizeof(r));
            cudaOccError st = cudaOccMaxActiveBlocksPerMultiprocessor(
                &r, &prop, &attr, &state, blockSize, (size_t)dyn);
            std::printf("%d %d %u %d %d %d %d %d %d %llu %d\n", (int)st,
                        r.activeBlocksPerMultiprocessor, r.limitingFactors, r.blockLimitRegs,
                        r.blockLimitSharedMem, r.blockLimitWarps, r.blockLimitBlocks,
                        r.blockLimitBarriers, r.allocatedRegistersPerBlock,
                        (unsigned long long)r.allocatedSharedMemPerBlock,
                        (int)r.partitionedGCConfig);
        } else if (mode == 'P') {
            long long dyn;
            in >> dyn;
            int minGrid = -1, block = -1;
            cudaOccError st = cudaOccMaxPotentialOccupancyBlockSize(
                &minGrid, &block, &prop, &attr, &state, (size_t)dyn);
            std::printf("%d %d %d\n", (int)st, minGrid, block);
        } else if (mode == 'V') {
            LinearSmem f;
            in >> f.perThread >> f.fixed;
            int minGrid = -1, block = -1;
            cudaOccError st = cudaOccMaxPotentialOccupancyBlockSizeVariableSMem(
                &minGrid, &block, &prop, &attr, &state, f);
            std::printf("%d %d %d\n", (int)st, minGrid, block);
        } else {
            std::printf("bad-mode\n");
        }
    }
    return 0;
}
