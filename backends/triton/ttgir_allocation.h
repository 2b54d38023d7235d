// Triton's shared-memory allocation analysis (lib/Analysis/Allocation.cpp, Triton 3.6) on a parsed
// TTGIR module: which values own shared buffers, their sizes, live intervals and offsets.
#ifndef SCRATCHSIM_BACKENDS_TRITON_TTGIR_ALLOCATION_H_
#define SCRATCHSIM_BACKENDS_TRITON_TTGIR_ALLOCATION_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/triton/triton_allocator.h"
#include "backends/triton/ttgir_parser.h"

namespace scratchsim::triton {

enum class SharedBufferKind { kExplicit, kScratch, kFunctionScratch };

struct SharedBuffer {
  std::string name;        // "%a (ttg.local_alloc)" or "scratch of tt.reduce"
  int line = 0;
  SharedBufferKind kind = SharedBufferKind::kExplicit;
  std::string op;
  std::string shape;       // "2x128x64xf16" for explicit buffers
  TritonBuffer buffer;
};

struct SharedMemoryPlan {
  std::string kernel;
  std::string target;
  int num_warps = 0;
  int total_warps = 0;     // with warp-specialized partitions
  std::vector<SharedBuffer> buffers;  // Triton's order
  TritonAllocation allocation;
};

// Buffers, intervals and Triton's placement for a parsed module (upstream AllocationAnalysis:
// getValuesAndSizes, resolveLiveness, computeOffsets). Errors name the module's origin and the
// op's line.
absl::StatusOr<SharedMemoryPlan> PlanSharedMemory(const TtgirModule& module);

// ParseTtgir, then PlanSharedMemory: Triton's metadata.shared for a .ttgir text.
absl::StatusOr<SharedMemoryPlan> PlanTtgir(std::string_view text, std::string_view origin);

}  // namespace scratchsim::triton

#endif  // SCRATCHSIM_BACKENDS_TRITON_TTGIR_ALLOCATION_H_
