// Triton's shared-memory allocation analysis (lib/Analysis/Allocation.cpp, Triton 3.6) on a parsed
// TTGIR module: which values own shared buffers, their sizes, live intervals and offsets.
#ifndef SCRATCHSIM_BACKENDS_TRITON_TTGIR_ALLOCATION_H_
#define SCRATCHSIM_BACKENDS_TRITON_TTGIR_ALLOCATION_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/triton/triton_allocator.h"
#include "backends/triton/ttgir_layout.h"
#include "backends/triton/ttgir_parser.h"

namespace scratchsim::triton {

enum class SharedBufferKind { kExplicit, kScratch, kFunctionScratch };

struct SharedBuffer {
  std::string name;        // "%a (ttg.local_alloc)" or "scratch of tt.reduce"
  int line = 0;
  int op_index = -1;       // the op that makes it (TtgirModule::ops); -1 for the function's own
  SharedBufferKind kind = SharedBufferKind::kExplicit;
  std::string op;
  std::string shape;       // "2x128x64xf16" for explicit buffers
  TritonBuffer buffer;
};

// Which Triton release wrote a module, as far as its text tells (DetectTritonRelease), and the
// construct that tells it.
struct TritonReleaseCue {
  TritonRelease release = TritonRelease::kUnknown;
  std::string cue;  // e.g. "module attribute \"ttng.two-ctas\"", "op gpu.barrier (line 40)"
};
// NVIDIA modules say it (3.9 writes "ttng.two-ctas" into every module, 3.6 never); AMD modules
// only through constructs one release prints and the other does not (gpu.barrier / ttg.barrier,
// the tensor-descriptor type's form, `contiguity` on AMD buffer ops); many AMD kernels have none.
TritonReleaseCue DetectTritonRelease(const TtgirModule& module);

struct PlanOptions {
  // The release whose rules apply. kUnknown: the one the module tells, else the newest modelled
  // (the plan says it assumed so).
  TritonRelease release = TritonRelease::kUnknown;
  // Where `release` came from, for the plan's release_source ("given" when empty).
  std::string release_source;
};

struct SharedMemoryPlan {
  std::string kernel;
  std::string target;
  TritonRelease release = TritonRelease::kUnknown;  // whose rules the plan followed
  std::string release_source;  // "given", the cue, or "assumed: ..." when nothing told
  int num_warps = 0;
  int total_warps = 0;     // with warp-specialized partitions
  std::vector<SharedBuffer> buffers;  // Triton's order
  TritonAllocation allocation;
  // The op (index into TtgirModule::ops) Triton numbers at each position of the buffers'
  // intervals, for naming the positions in reports.
  std::vector<int> position_ops;
  // Cluster launches (ttg.num-ctas > 1): Triton allocates shared memory per CTA, so every
  // buffer is sized by the shape one CTA holds (ttgir_cga.h) and the figure is per CTA. An op
  // that moves data between the cluster's CTAs (distributed shared memory) is not sized by
  // these rules: each is named here, and `cross_cta_bytes` bounds what it may add (its
  // scratch at the whole cluster's shape), which the report carries as an estimate.
  int num_ctas = 1;
  std::vector<std::string> cross_cta_ops;
  int64_t cross_cta_bytes = 0;
};

// Buffers, intervals and Triton's placement for a parsed module (upstream AllocationAnalysis:
// getValuesAndSizes, resolveLiveness, computeOffsets). Errors name the module's origin and the
// op's line.
absl::StatusOr<SharedMemoryPlan> PlanSharedMemory(const TtgirModule& module, const PlanOptions& options = {});

// Blackwell tensor memory as Triton's TensorMemoryAllocation pass sizes it (the module's
// ttg.tensor_memory_size, metadata.tmem_size): columns of 32-bit cells over 128 lanes. Each
// ttng.tmem_alloc takes its leading dimensions x N columns (16-bit elements two to a cell,
// 8-bit four, unless colStride unpacks them) x M / 128 row blocks; scales (#ttng.tensor_memory_
// scales_encoding) N / 4 columns per 128 rows. Allocations of 64 rows fill half the lanes, so two
// of the same width share their columns. The sum is rounded up to a power of two, at least 32.
// Measured: 914 of the 915 sm_100 kernels of tests/data/triton and both catalogue releases
// exact; the other (a causal attention whose f16 P reuses the columns of a dead S) over by 2x.
// No liveness-based reuse is modelled, so the figure never falls below Triton's on these.
struct TensorMemoryPlan {
  int64_t columns = 0;   // ttg.tensor_memory_size; 0 when the module allocates none
  int allocations = 0;
};
absl::StatusOr<TensorMemoryPlan> PlanTensorMemory(const TtgirModule& module);

// ParseTtgir, then PlanSharedMemory: Triton's metadata.shared for a .ttgir text.
absl::StatusOr<SharedMemoryPlan> PlanTtgir(std::string_view text, std::string_view origin,
                                           const PlanOptions& options = {});

}  // namespace scratchsim::triton

#endif  // SCRATCHSIM_BACKENDS_TRITON_TTGIR_ALLOCATION_H_
