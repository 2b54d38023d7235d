// Microbenchmarks of the live GPU's memory system: load-to-use latency of a shared-memory load
// and of a global load that hits L2 or goes to DRAM (one-thread pointer chases), and streaming
// read bandwidth (all SMs).
#ifndef SCRATCHSIM_BACKENDS_CUDA_MEMORY_BENCH_H_
#define SCRATCHSIM_BACKENDS_CUDA_MEMORY_BENCH_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace scratchsim::cuda {

// The order in which the chase visits the cache lines of its footprint.
enum class ChaseOrder {
  // One random permutation of all lines: every load lands on a random 2 MiB page, so a
  // footprint beyond the TLBs' reach adds translation misses to the latency.
  kRandom,
  // 2 MiB pages in random order, each page's lines in random order before the next page:
  // prefetchers see no pattern, yet nearly every load hits the TLB.
  kRandomWithinPages,
};

std::string ChaseOrderName(ChaseOrder order);  // "random", "random within 2 MiB pages"

struct LatencyResult {
  int64_t footprint_bytes = 0;
  int64_t stride_bytes = 0;
  ChaseOrder order = ChaseOrder::kRandom;
  int64_t warm_loads = 0;          // untimed loads first (a full pass when the footprint fits in L2)
  int64_t timed_loads = 0;
  int group_loads = 0;             // dependent loads per clock64 group
  // Per load, over groups of kChaseGroup dependent loads (each group's clock64 span / size).
  double median_cycles = 0;
  double p10_cycles = 0;
  double p90_cycles = 0;
  // SM clock during the timed span: clock64 cycles / %globaltimer ns, read in the same kernel.
  double sm_clock_mhz = 0;
  double median_ns = 0;            // median_cycles at sm_clock_mhz
};

// One thread follows a chase of dependent ld.global.cg loads through `footprint_bytes` of
// device `ordinal`, one node every `stride_bytes` (>= 8, a multiple of 8). Invalid sizes are
// InvalidArgument (checked before the device is touched); CUDA errors FailedPrecondition.
absl::StatusOr<LatencyResult> MeasureLoadLatency(int ordinal, int64_t footprint_bytes, int64_t stride_bytes,
                                                 ChaseOrder order = ChaseOrder::kRandom);

// One thread follows a chase of dependent ld.shared.u32 loads through a 4 KiB ring in its
// block's shared memory: the load-to-use latency of shared memory (footprint_bytes is the ring,
// stride_bytes the step between consecutive nodes). CUDA errors are FailedPrecondition.
absl::StatusOr<LatencyResult> MeasureSharedLatency(int ordinal);

struct BandwidthResult {
  int64_t footprint_bytes = 0;
  // The best launch shape's median over trials, GB/s (1e9 bytes per second).
  double gbps = 0;
  double best_trial_gbps = 0;      // fastest single trial of that shape
  int blocks = 0;                  // the best launch shape
  int threads = 0;
  int64_t bytes_per_trial = 0;     // footprint x passes
  double trial_ms = 0;             // median trial time of the best shape
  int shapes_tried = 0;
  int trials = 0;                  // per shape
};

// All SMs read `footprint_bytes` (>= 1 MiB, a multiple of 16) of device `ordinal` with 16-byte
// ld.global.cg loads, over and over, for at least 20 ms per trial; several launch shapes,
// several trials each. A footprint that fits in L2 measures L2 bandwidth (a warm pass first),
// one far beyond it DRAM bandwidth.
absl::StatusOr<BandwidthResult> MeasureReadBandwidth(int ordinal, int64_t footprint_bytes);

}  // namespace scratchsim::cuda

#endif  // SCRATCHSIM_BACKENDS_CUDA_MEMORY_BENCH_H_
