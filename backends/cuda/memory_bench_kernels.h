// Launchers of the memory microbenchmark kernels (pointer chase, streaming read). Free of
// Abseil so nvcc compiles them; memory_bench.cc turns their cudaError_t into absl::Status.
#ifndef SCRATCHSIM_BACKENDS_CUDA_MEMORY_BENCH_KERNELS_H_
#define SCRATCHSIM_BACKENDS_CUDA_MEMORY_BENCH_KERNELS_H_

#include <cstdint>

#include <cuda_runtime_api.h>

namespace scratchsim::cuda {

// Dependent loads timed in groups of this many: the clock read after a group issues right
// after its last load, and the next group's first load waits for that load, so in steady
// state each group spans exactly this many load-to-use latencies.
inline constexpr int kChaseGroup = 32;

// What the chase kernel leaves in its summary array (uint64 slots).
inline constexpr int kChaseCyclesSlot = 0;  // clock64 over all timed groups
inline constexpr int kChaseNsSlot = 1;      // %globaltimer over the same span
inline constexpr int kChaseSinkSlot = 2;    // the final pointer, so nothing is dead
inline constexpr int kChaseSummarySlots = 3;

// Writes the chase into `buffer`: the node at byte offset order[i] * stride holds the address
// of the node at order[(i + 1) % count]. One thread per node.
cudaError_t LaunchChaseInit(char* buffer, const uint32_t* order, int64_t count, int64_t stride_bytes,
                            cudaStream_t stream);

// One thread follows the chase from `start`: `warm_loads` untimed loads, then `groups` groups
// of kChaseGroup loads, each group's clock64 cycles in group_cycles[g]. All loads are
// ld.global.cg (L2, not L1).
cudaError_t LaunchChase(const char* start, int64_t warm_loads, int groups, uint64_t* group_cycles,
                        uint64_t* summary, cudaStream_t stream);

// The shared-memory chase: a ring of kSharedChaseNodes 4-byte nodes, next = (i + stride) % nodes.
inline constexpr int kSharedChaseNodes = 1024;
inline constexpr int kSharedChaseStride = 37;

// One thread builds the ring in its block's shared memory, walks it once untimed, then times
// `groups` groups of kChaseGroup dependent ld.shared.u32 loads (group_cycles, summary as above).
cudaError_t LaunchSharedChase(int groups, uint64_t* group_cycles, uint64_t* summary, cudaStream_t stream);

// `blocks` x `threads` threads read the `vectors` 16-byte elements of `buffer` `passes` times
// (grid-stride, ld.global.cg.v4) and each writes one checksum to sink[thread].
cudaError_t LaunchStreamRead(const void* buffer, int64_t vectors, int passes, int blocks, int threads,
                             uint32_t* sink, cudaStream_t stream);

}  // namespace scratchsim::cuda

#endif  // SCRATCHSIM_BACKENDS_CUDA_MEMORY_BENCH_KERNELS_H_
