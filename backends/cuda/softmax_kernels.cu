// Row softmax that stages each row in dynamic shared memory and needs reduction scratch
// only while reducing: the max and sum scratch never live at once and share one offset.
#include <cuda_runtime.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/device_buffer.cuh"
#include "backends/cuda/kernel_case.h"

namespace scratchsim::cuda {
namespace {

constexpr int kRows = 8;

__host__ __device__ inline int64_t RoundUp16(int64_t bytes) { return (bytes + 15) / 16 * 16; }

// Block-wide reduction through `scratch` (one float per warp). Every thread gets the result.
template <bool kMax>
__device__ float BlockReduce(float value, float* scratch) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int warps = (blockDim.x + 31) / 32;
  for (int offset = 16; offset > 0; offset /= 2) {
    float other = __shfl_xor_sync(0xffffffffu, value, offset);
    value = kMax ? fmaxf(value, other) : value + other;
  }
  if (lane == 0) scratch[warp] = value;
  __syncthreads();
  if (warp == 0) {
    float partial = lane < warps ? scratch[lane] : (kMax ? -INFINITY : 0.0f);
    for (int offset = 16; offset > 0; offset /= 2) {
      float other = __shfl_xor_sync(0xffffffffu, partial, offset);
      partial = kMax ? fmaxf(partial, other) : partial + other;
    }
    if (lane == 0) scratch[0] = partial;
  }
  __syncthreads();
  float result = scratch[0];
  // The next reduction reuses the same scratch words.
  __syncthreads();
  return result;
}

// Dynamic shared memory: the row (row_len floats, padded to 16 bytes), then one float per
// warp of reduction scratch.
__global__ void SoftmaxKernel(const float* x, float* y, int row_len) {
  extern __shared__ __align__(16) unsigned char dynamic_smem[];
  float* row = reinterpret_cast<float*>(dynamic_smem);
  float* scratch = reinterpret_cast<float*>(dynamic_smem + RoundUp16(row_len * 4LL));
  const float* x_row = x + static_cast<size_t>(blockIdx.x) * row_len;
  float* y_row = y + static_cast<size_t>(blockIdx.x) * row_len;

  float local_max = -INFINITY;
  for (int i = threadIdx.x; i < row_len; i += blockDim.x) {
    row[i] = x_row[i];
    local_max = fmaxf(local_max, row[i]);
  }
  const float row_max = BlockReduce<true>(local_max, scratch);
  float local_sum = 0.0f;
  for (int i = threadIdx.x; i < row_len; i += blockDim.x) local_sum += expf(row[i] - row_max);
  const float row_sum = BlockReduce<false>(local_sum, scratch);
  for (int i = threadIdx.x; i < row_len; i += blockDim.x) {
    y_row[i] = expf(row[i] - row_max) / row_sum;
  }
}

class SoftmaxCase final : public KernelCase {
 public:
  SoftmaxCase(int row_len, int warps) : row_len_(row_len), warps_(warps) {}
  std::string name() const override { return "softmax"; }
  const void* function() const override { return reinterpret_cast<const void*>(&SoftmaxKernel); }
  int threads_per_block() const override { return warps_ * 32; }
  int64_t dynamic_shared_bytes() const override {
    return RoundUp16(static_cast<int64_t>(row_len_) * 4) + static_cast<int64_t>(warps_) * 4;
  }
  dim3 grid() const override { return dim3(kRows); }

  cudaError_t Prepare() override {
    std::vector<float> x = RandomFloats(static_cast<size_t>(kRows) * row_len_, 4, -8.0f, 8.0f);
    reference_.resize(x.size());
    for (int r = 0; r < kRows; ++r) {
      const float* xr = x.data() + static_cast<size_t>(r) * row_len_;
      double row_max = -INFINITY, sum = 0;
      for (int i = 0; i < row_len_; ++i) row_max = std::max<double>(row_max, xr[i]);
      for (int i = 0; i < row_len_; ++i) sum += std::exp(xr[i] - row_max);
      for (int i = 0; i < row_len_; ++i) {
        reference_[static_cast<size_t>(r) * row_len_ + i] =
            static_cast<float>(std::exp(xr[i] - row_max) / sum);
      }
    }
    cudaError_t error;
    if ((error = x_.Allocate(x.size())) != cudaSuccess) return error;
    if ((error = y_.Allocate(x.size())) != cudaSuccess) return error;
    if ((error = x_.Upload(x)) != cudaSuccess) return error;
    return y_.Zero();
  }

  cudaError_t Launch(cudaStream_t stream) override {
    SoftmaxKernel<<<grid(), threads_per_block(), dynamic_shared_bytes(), stream>>>(
        x_.get(), y_.get(), row_len_);
    return cudaGetLastError();
  }

  std::string Check() override {
    std::vector<float> got;
    cudaError_t error = y_.Download(&got);
    if (error != cudaSuccess) return std::string("copy back: ") + cudaGetErrorString(error);
    return CompareFloats(got, reference_, 1e-7, 1e-4);
  }

 private:
  int row_len_, warps_;
  std::vector<float> reference_;
  DeviceBuffer<float> x_, y_;
};

}  // namespace

std::unique_ptr<KernelCase> MakeSoftmaxCase(const ParamMap& params, std::string* error) {
  int64_t row_len = ParamOr(params, "ROW", -1);
  int64_t warps = ParamOr(params, "NUM_WARPS", -1);
  // 33 warps (1056 threads) is allowed on purpose: it must fail to launch.
  if (row_len < 1 || row_len > (1 << 20) || warps < 1 || warps > 64) {
    *error = "softmax: need 1 <= ROW <= 1048576 and 1 <= NUM_WARPS <= 64, got ROW=" +
             std::to_string(row_len) + " NUM_WARPS=" + std::to_string(warps);
    return nullptr;
  }
  return std::make_unique<SoftmaxCase>(static_cast<int>(row_len), static_cast<int>(warps));
}

}  // namespace scratchsim::cuda
