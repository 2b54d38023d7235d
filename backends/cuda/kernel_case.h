// A launchable configuration of one real CUDA kernel: its inputs on the device, its launch
// shape and a CPU reference. The measurement library drives these; kernels implement them.
#ifndef SCRATCHSIM_BACKENDS_CUDA_KERNEL_CASE_H_
#define SCRATCHSIM_BACKENDS_CUDA_KERNEL_CASE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

namespace scratchsim::cuda {

// Parameter values of one configuration, named as in the kernel's graph ("BLOCK_M" -> 128).
using ParamMap = std::map<std::string, int64_t>;

// The .cu files stay free of Abseil (nvcc compiles them); errors travel as strings and
// cudaError_t and become absl::Status in the .cc layer above.
class KernelCase {
 public:
  virtual ~KernelCase() = default;
  // "gemm<f16,128,128,32,8>": the template instance this configuration runs.
  virtual std::string name() const = 0;
  // The __global__ function, for cudaFuncGetAttributes and the occupancy API.
  virtual const void* function() const = 0;
  virtual int threads_per_block() const = 0;
  virtual int64_t dynamic_shared_bytes() const = 0;
  virtual dim3 grid() const = 0;
  // Fills the inputs with seeded random data on the host and copies them to the device.
  virtual cudaError_t Prepare() = 0;
  // Enqueues one launch and returns the launch's own error (cudaGetLastError right after).
  virtual cudaError_t Launch(cudaStream_t stream) = 0;
  // Copies the output back and compares it with the CPU reference: "" if it agrees, else
  // what differs and where.
  virtual std::string Check() = 0;
};

// Builds the case for `params`; null with `error` set when the family has no compiled
// instance for them or they are inconsistent.
using CaseFactory = std::unique_ptr<KernelCase> (*)(const ParamMap& params, std::string* error);

// One factory per kernel family, each defined in its own .cu file.
std::unique_ptr<KernelCase> MakeGemmCase(const ParamMap& params, std::string* error);
std::unique_ptr<KernelCase> MakeGegluCase(const ParamMap& params, std::string* error);
std::unique_ptr<KernelCase> MakeSoftmaxCase(const ParamMap& params, std::string* error);
std::unique_ptr<KernelCase> MakeWarpSpecializedCase(const ParamMap& params, std::string* error);
std::unique_ptr<KernelCase> MakeRegHeavyCase(const ParamMap& params, std::string* error);

// The most K shares a GEMM case takes (SPLIT_K): a bound on bad input, not a tuning limit
// (gemm.pbtxt's own range stops at 16).
constexpr int kMaxSplitK = 64;

// The GEMM of models/graphs/gemm.pbtxt at a timing size: params M, N, K (multiples of the tile)
// besides DTYPE, BLOCK_M, BLOCK_N, BLOCK_K, NUM_WARPS, NUM_STAGES, over a wider set of compiled
// tiles than MakeGemmCase (GemmTimingTiles); correctness is checked at 256 sampled outputs.
// Optional SHARED_PAD: unused dynamic shared bytes per block, to cap the blocks per SM.
// Optional SPLIT_K (default 1): K shares added into a zeroed C, at most K / BLOCK_K of them.
std::unique_ptr<KernelCase> MakeGemmTimingCase(const ParamMap& params, std::string* error);
struct GemmTile {
  int dtype, bm, bn, bk, warps;  // dtype: 0 f32, 1 f16
};
std::vector<GemmTile> GemmTimingTiles();

}  // namespace scratchsim::cuda

#endif  // SCRATCHSIM_BACKENDS_CUDA_KERNEL_CASE_H_
