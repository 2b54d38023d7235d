// Pointer-chase and streaming-read kernels for memory_bench.cc.
#include "backends/cuda/memory_bench_kernels.h"

#include <cuda_runtime.h>

namespace scratchsim::cuda {
namespace {

// .cg caches in L2 only: a chase that L1 served would measure L1.
__device__ __forceinline__ const char* LoadNext(const char* node) {
  uint64_t next;
  asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(next) : "l"(node) : "memory");
  return reinterpret_cast<const char*>(next);
}

__device__ __forceinline__ uint64_t Clock() {
  uint64_t cycles;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(cycles) : : "memory");
  return cycles;
}

__device__ __forceinline__ uint64_t GlobalTimerNs() {
  uint64_t ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns) : : "memory");
  return ns;
}

__global__ void ChaseInitKernel(char* buffer, const uint32_t* order, int64_t count, int64_t stride_bytes) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  int64_t next = i + 1 == count ? 0 : i + 1;
  char* node = buffer + static_cast<int64_t>(order[i]) * stride_bytes;
  *reinterpret_cast<uint64_t*>(node) =
      reinterpret_cast<uint64_t>(buffer + static_cast<int64_t>(order[next]) * stride_bytes);
}

__device__ __forceinline__ uint64_t SinkValue(const char* node) { return reinterpret_cast<uint64_t>(node); }
__device__ __forceinline__ uint64_t SinkValue(uint32_t node) { return node; }

// Times `groups` groups of kChaseGroup dependent loads from `node` (next: one load) into
// group_cycles and the summary's slots.
template <typename Node, typename Next>
__device__ __forceinline__ void TimeChase(Node node, int groups, uint64_t* group_cycles, uint64_t* summary,
                                          Next next) {
  // Branching on the node makes the clock reads below wait for the last untimed load.
  if (SinkValue(node) == 0) summary[kChaseSinkSlot] = 1;
  uint64_t begin_cycles = Clock();
  uint64_t begin_ns = GlobalTimerNs();
  for (int g = 0; g < groups; ++g) {
    uint64_t c0 = Clock();
#pragma unroll
    for (int k = 0; k < kChaseGroup; ++k) node = next(node);
    uint64_t c1 = Clock();
    group_cycles[g] = c1 - c0;
  }
  if (SinkValue(node) == 0) summary[kChaseSinkSlot] = 1;
  uint64_t end_cycles = Clock();
  uint64_t end_ns = GlobalTimerNs();
  summary[kChaseCyclesSlot] = end_cycles - begin_cycles;
  summary[kChaseNsSlot] = end_ns - begin_ns;
  summary[kChaseSinkSlot] = SinkValue(node);
}

__global__ void ChaseKernel(const char* start, int64_t warm_loads, int groups, uint64_t* group_cycles,
                            uint64_t* summary) {
  const char* node = start;
  for (int64_t i = 0; i < warm_loads; ++i) node = LoadNext(node);
  TimeChase(node, groups, group_cycles, summary, [](const char* n) { return LoadNext(n); });
}

// The chase through shared memory: each node holds the 32-bit shared-window address of the
// next, so a load's result is the next load's address with no arithmetic between them.
__device__ __forceinline__ uint32_t LoadSharedNext(uint32_t node) {
  uint32_t next;
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(next) : "r"(node) : "memory");
  return next;
}

__global__ void SharedChaseKernel(int groups, uint64_t* group_cycles, uint64_t* summary) {
  __shared__ uint32_t ring[kSharedChaseNodes];
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(ring));
  // A stride coprime with the ring size visits every node once per lap.
  for (int i = 0; i < kSharedChaseNodes; ++i) {
    ring[i] = base + static_cast<uint32_t>(((i + kSharedChaseStride) % kSharedChaseNodes) * sizeof(uint32_t));
  }
  __syncthreads();
  uint32_t node = base;
  for (int i = 0; i < kSharedChaseNodes; ++i) node = LoadSharedNext(node);
  TimeChase(node, groups, group_cycles, summary, [](uint32_t n) { return LoadSharedNext(n); });
}

// Loads in flight per thread per iteration: enough to cover DRAM latency with 2048 threads/SM.
constexpr int kUnroll = 4;

__global__ void StreamReadKernel(const int4* buffer, int64_t vectors, int passes, uint32_t* sink) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  uint32_t acc = 0;
  for (int pass = 0; pass < passes; ++pass) {
    for (int64_t base = first; base < vectors; base += kUnroll * stride) {
      int4 v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        int64_t i = base + u * stride;
        v[u] = i < vectors ? __ldcg(buffer + i) : make_int4(0, 0, 0, 0);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) acc += v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
  }
  sink[first] = acc;
}

}  // namespace

cudaError_t LaunchChaseInit(char* buffer, const uint32_t* order, int64_t count, int64_t stride_bytes,
                            cudaStream_t stream) {
  constexpr int kThreads = 256;
  int64_t blocks = (count + kThreads - 1) / kThreads;
  ChaseInitKernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(buffer, order, count, stride_bytes);
  return cudaGetLastError();
}

cudaError_t LaunchChase(const char* start, int64_t warm_loads, int groups, uint64_t* group_cycles,
                        uint64_t* summary, cudaStream_t stream) {
  ChaseKernel<<<1, 1, 0, stream>>>(start, warm_loads, groups, group_cycles, summary);
  return cudaGetLastError();
}

cudaError_t LaunchSharedChase(int groups, uint64_t* group_cycles, uint64_t* summary, cudaStream_t stream) {
  SharedChaseKernel<<<1, 1, 0, stream>>>(groups, group_cycles, summary);
  return cudaGetLastError();
}

cudaError_t LaunchStreamRead(const void* buffer, int64_t vectors, int passes, int blocks, int threads,
                             uint32_t* sink, cudaStream_t stream) {
  StreamReadKernel<<<blocks, threads, 0, stream>>>(static_cast<const int4*>(buffer), vectors, passes, sink);
  return cudaGetLastError();
}

}  // namespace scratchsim::cuda
