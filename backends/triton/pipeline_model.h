// Pre-compile model of Triton's software pipeliner: how many copies of each loop-carried
// operand tile Triton keeps in shared memory, per target and MMA kind, before Triton runs.
#ifndef SCRATCHSIM_BACKENDS_TRITON_PIPELINE_MODEL_H_
#define SCRATCHSIM_BACKENDS_TRITON_PIPELINE_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/graph.pb.h"

namespace scratchsim::triton {

enum class TritonMma {
  kMmaV2,    // mma.sync fed by cp.async + ldmatrix (sm_80..sm_89, sm_120, small tiles elsewhere)
  kWgmma,    // Hopper warpgroup MMA reading operands from shared memory
  kTcgen05,  // Blackwell (sm_100) tensor-core MMA, operands in shared, accumulator in TMEM
};
const char* TritonMmaName(TritonMma mma);

// What Triton's JIT knows about the arguments (it specializes integers divisible by 16 and
// equal to 1). These decide whether loads are vectorized and therefore multi-buffered.
struct JitSpecialization {
  bool pointers_divisible_by_16 = true;
  bool strides_divisible_by_16 = true;  // leading strides
  bool inner_stride_is_1 = true;        // the contiguous dimension's stride
};

struct DotLoop {
  int target_cc = 90;   // 80, 86, 89, 90, 100, 103, 120
  int num_warps = 4;
  int num_stages = 3;
  int64_t block_m = 128;  // rows of the accumulator per block
  JitSpecialization jit;
};

// The MMA Triton picks (AccelerateMatmul): wgmma needs M >= 64 and whole warp groups on
// sm_90; tcgen05 needs M >= 64 on sm_100; everything else lowers to mma.sync.
absl::StatusOr<TritonMma> SelectMma(const DotLoop& loop);

// Copies of each operand tile the pipeliner allocates, and the assumptions it rests on.
struct PipelineDepth {
  TritonMma mma = TritonMma::kMmaV2;
  int64_t copies = 1;
  bool multi_buffered = false;
  std::vector<std::string> assumptions;
};
absl::StatusOr<PipelineDepth> PipelineCopies(const DotLoop& loop);

// Rewrites `copies` of every OPERAND buffer written inside a loop with num_stages into the
// expression Triton's pipeliner realizes for this MMA kind ("max(1, num_stages - 1)" for
// mma.sync, "num_stages" for wgmma/tcgen05), and appends the assumptions to the graph's doc.
absl::Status ApplyTritonPipelining(const DotLoop& loop, KernelGraph* graph);

}  // namespace scratchsim::triton

#endif  // SCRATCHSIM_BACKENDS_TRITON_PIPELINE_MODEL_H_
