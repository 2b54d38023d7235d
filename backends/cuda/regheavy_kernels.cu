// A kernel whose register demand is a template parameter (DEMAND live floats per thread)
// under a per-kernel register cap (__maxnreg__): above the cap ptxas spills to local memory.
#include <cuda_runtime.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/device_buffer.cuh"
#include "backends/cuda/kernel_case.h"

namespace scratchsim::cuda {
namespace {

constexpr int kIterations = 4;
constexpr int kBlocks = 4;

// Every one of the DEMAND values stays live across the loop: each update reads a neighbour.
// The CPU reference repeats the same fmaf sequence, so results agree exactly.
template <int DEMAND, int CAP>
__global__ void __maxnreg__(CAP) RegHeavyKernel(const float* in, float* out, float scale) {
  const size_t tid = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  float v[DEMAND];
#pragma unroll
  for (int i = 0; i < DEMAND; ++i) v[i] = in[tid * DEMAND + i];
  for (int it = 0; it < kIterations; ++it) {
#pragma unroll
    for (int i = 0; i < DEMAND; ++i) v[i] = fmaf(v[i], scale, v[(i + 7) % DEMAND]);
  }
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < DEMAND; ++i) sum += v[i];
  out[tid] = sum;
}

template <int DEMAND, int CAP>
class RegHeavyCase final : public KernelCase {
 public:
  explicit RegHeavyCase(int threads) : threads_(threads) {}
  std::string name() const override {
    return "regheavy<" + std::to_string(DEMAND) + "," + std::to_string(CAP) + ">";
  }
  const void* function() const override {
    return reinterpret_cast<const void*>(&RegHeavyKernel<DEMAND, CAP>);
  }
  int threads_per_block() const override { return threads_; }
  int64_t dynamic_shared_bytes() const override { return 0; }
  dim3 grid() const override { return dim3(kBlocks); }

  cudaError_t Prepare() override {
    const size_t threads = static_cast<size_t>(kBlocks) * threads_;
    std::vector<float> in = RandomFloats(threads * DEMAND, 5);
    reference_.resize(threads);
    for (size_t t = 0; t < threads; ++t) {
      std::vector<float> v(in.begin() + t * DEMAND, in.begin() + (t + 1) * DEMAND);
      for (int it = 0; it < kIterations; ++it) {
        for (int i = 0; i < DEMAND; ++i) v[i] = std::fma(v[i], kScale, v[(i + 7) % DEMAND]);
      }
      float sum = 0.0f;
      for (int i = 0; i < DEMAND; ++i) sum += v[i];
      reference_[t] = sum;
    }
    cudaError_t error;
    if ((error = in_.Allocate(in.size())) != cudaSuccess) return error;
    if ((error = out_.Allocate(threads)) != cudaSuccess) return error;
    if ((error = in_.Upload(in)) != cudaSuccess) return error;
    return out_.Zero();
  }

  cudaError_t Launch(cudaStream_t stream) override {
    RegHeavyKernel<DEMAND, CAP><<<grid(), threads_, 0, stream>>>(in_.get(), out_.get(), kScale);
    return cudaGetLastError();
  }

  std::string Check() override {
    std::vector<float> got;
    cudaError_t error = out_.Download(&got);
    if (error != cudaSuccess) return std::string("copy back: ") + cudaGetErrorString(error);
    return CompareFloats(got, reference_, 1e-4, 1e-5);
  }

 private:
  static constexpr float kScale = 0.5f;
  int threads_;
  std::vector<float> reference_;
  DeviceBuffer<float> in_, out_;
};

struct Instance {
  int demand, cap;
  std::unique_ptr<KernelCase> (*make)(int threads);
};

template <int DEMAND, int CAP>
std::unique_ptr<KernelCase> Make(int threads) {
  return std::make_unique<RegHeavyCase<DEMAND, CAP>>(threads);
}

// Pairs below and above each cap: below, ptxas allocates about DEMAND plus addressing;
// above, it stops at the cap and spills the rest.
const Instance kInstances[] = {
    {16, 32, &Make<16, 32>},     {64, 32, &Make<64, 32>},     {32, 64, &Make<32, 64>},
    {128, 64, &Make<128, 64>},   {64, 128, &Make<64, 128>},   {96, 128, &Make<96, 128>},
    {192, 128, &Make<192, 128>}, {128, 168, &Make<128, 168>}, {256, 168, &Make<256, 168>},
    {160, 255, &Make<160, 255>}, {200, 255, &Make<200, 255>}, {320, 255, &Make<320, 255>},
};

}  // namespace

std::unique_ptr<KernelCase> MakeRegHeavyCase(const ParamMap& params, std::string* error) {
  int64_t demand = ParamOr(params, "DEMAND", -1), cap = ParamOr(params, "REG_CAP", -1);
  int64_t warps = ParamOr(params, "NUM_WARPS", -1);
  if (warps < 1 || warps > 64) {
    *error = "regheavy: NUM_WARPS must be in [1, 64], got " + std::to_string(warps);
    return nullptr;
  }
  std::string known;
  for (const Instance& instance : kInstances) {
    if (instance.demand == demand && instance.cap == cap) {
      return instance.make(static_cast<int>(warps * 32));
    }
    known += " (" + std::to_string(instance.demand) + "," + std::to_string(instance.cap) + ")";
  }
  *error = "regheavy: no compiled instance for DEMAND=" + std::to_string(demand) +
           " REG_CAP=" + std::to_string(cap) + "; compiled (DEMAND,REG_CAP):" + known;
  return nullptr;
}

}  // namespace scratchsim::cuda
