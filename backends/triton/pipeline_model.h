// Pre-compile model of Triton's shared memory for a GEMM: copies of each pipelined operand tile
// and the epilogue's layout-conversion scratch, placed as Triton's allocator does, before Triton runs.
#ifndef SCRATCHSIM_BACKENDS_TRITON_PIPELINE_MODEL_H_
#define SCRATCHSIM_BACKENDS_TRITON_PIPELINE_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "backends/triton/triton_mma.h"
#include "backends/triton/ttgir_layout.h"
#include "proto/graph.pb.h"

namespace scratchsim::triton {

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
  // The operands' element: its bits decide whether an unspecialized load can still be an
  // asynchronous copy (cp.async moves 4, 8 or 16 bytes: a 32-bit element is one); integer
  // operands (int8) take tcgen05 only from Triton 3.9.
  int operand_bits = 16;
  bool integer_operands = false;
  TritonRelease release = kNewestTritonRelease;
};

// The MMA Triton picks (AccelerateMatmul): wgmma needs M >= 64 and whole warp groups on
// sm_90; tcgen05 needs M >= 64 on sm_100 (and, for integer operands, Triton 3.9: 3.6 runs int8
// dots there on mma.sync); everything else lowers to mma.sync.
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
// count Triton's pipeliner realizes for this MMA kind (PipelineRingSlots), and appends the
// assumptions to the graph's doc.
absl::Status ApplyTritonPipelining(const DotLoop& loop, KernelGraph* graph);

// A pointer GEMM in the shape of Triton's tutorial kernel: C[M,N] = A[M,K] @ B[K,N] with an fp32
// accumulator, loads of A and B in the K loop, one masked tl.store of C after it.
struct GemmConfig {
  DotLoop loop;           // target, warps, stages, BLOCK_M, JIT facts
  int64_t block_n = 128;
  int64_t block_k = 32;
  std::string dtype = "fp16";      // operands: fp16, bf16, fp32, fp8e4nv, fp8e5 (Triton names)
  std::string out_dtype = "fp16";  // C's element type
  bool a_k_contiguous = true;      // A row-major (stride_ak == 1)
  bool b_k_contiguous = false;     // B row-major [K, N] (stride_bn == 1): N is contiguous
};

// Triton's metadata.shared for the GEMM and the parts it is made of.
struct GemmSharedPrediction {
  PipelineDepth depth;
  int64_t a_copies = 1, b_copies = 1;
  int64_t operand_bytes = 0;   // pipelined A and B buffers
  int64_t barrier_bytes = 0;   // mbarriers of the tcgen05 loop
  int64_t epilogue_scratch_bytes = 0;  // convert_layout of C before the store
  int64_t total_bytes = 0;
  std::string accumulator_layout;  // the layouts Triton would pick, as TTGIR attributes
  std::string store_layout;
  std::vector<std::string> assumptions;
};
absl::StatusOr<GemmSharedPrediction> PredictGemmShared(const GemmConfig& gemm);

// A GEMM on device tensor descriptors (tl.make_tensor_descriptor: A[M,K] and B[N,K], both
// K-contiguous, C stored through a descriptor), without warp_specialize: the tutorial's TMA
// GEMM. On sm_90..120 the loads are TMA copies into num_stages (wgmma, tcgen05) or
// num_stages - 1 (mma.sync on sm_120) buffers with one mbarrier each, tcgen05 adds its two
// MMA barriers, and C goes to shared memory for the TMA store after the loop; the three
// descriptors' tensormap_create need 128 bytes of scratch each before it. Below sm_90 the
// descriptors become pointer loads: PredictGemmShared with B K-contiguous. `warp_specialize`
// loops are not modelled (an error says so).
absl::StatusOr<GemmSharedPrediction> PredictTmaGemmShared(const GemmConfig& gemm, bool warp_specialize = false);

// Flash-attention forward in the shape of Triton's tutorial (Q[BLOCK_M, HEAD_DIM] loaded once, a
// loop over BLOCK_N keys: S = Q K^T, online softmax, acc += P V, one store of the output): Q's
// buffer, K's and V's pipelined buffers, on mma.sync P staged in shared memory when the two dots
// split their warps differently, the two row reductions' scratch, and the epilogue conversion,
// placed by Triton's allocator. `loop.block_m` is BLOCK_M; `block_n` BLOCK_N; `block_k` HEAD_DIM.
// tcgen05 (sm_100) attention is not modelled (tensor memory, its barriers and conversions).
struct AttentionSharedPrediction {
  PipelineDepth depth;
  int64_t q_bytes = 0, kv_bytes = 0, p_bytes = 0, reduce_scratch_bytes = 0, epilogue_scratch_bytes = 0;
  int64_t total_bytes = 0;
  std::vector<std::string> assumptions;
};
absl::StatusOr<AttentionSharedPrediction> PredictAttentionShared(const GemmConfig& attention);

}  // namespace scratchsim::triton

#endif  // SCRATCHSIM_BACKENDS_TRITON_PIPELINE_MODEL_H_
