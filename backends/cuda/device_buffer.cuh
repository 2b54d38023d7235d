// Device memory that frees itself, seeded random inputs and tolerance checks shared by the
// kernel families' CPU references. Header-only, included by the .cu files alone.
#ifndef SCRATCHSIM_BACKENDS_CUDA_DEVICE_BUFFER_CUH_
#define SCRATCHSIM_BACKENDS_CUDA_DEVICE_BUFFER_CUH_

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "backends/cuda/kernel_case.h"

namespace scratchsim::cuda {

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (data_ != nullptr) cudaFree(data_);
  }
  cudaError_t Allocate(size_t count) {
    count_ = count;
    return cudaMalloc(reinterpret_cast<void**>(&data_), count * sizeof(T));
  }
  cudaError_t Upload(const std::vector<T>& host) {
    return cudaMemcpy(data_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
  }
  cudaError_t Download(std::vector<T>* host) const {
    host->resize(count_);
    return cudaMemcpy(host->data(), data_, count_ * sizeof(T), cudaMemcpyDeviceToHost);
  }
  cudaError_t Zero() { return cudaMemset(data_, 0, count_ * sizeof(T)); }
  // On `stream`, ordered before what is enqueued after it (a kernel that accumulates into it).
  cudaError_t ZeroAsync(cudaStream_t stream) { return cudaMemsetAsync(data_, 0, count_ * sizeof(T), stream); }
  T* get() const { return data_; }

 private:
  T* data_ = nullptr;
  size_t count_ = 0;
};

// Uniform values in [lo, hi), reproducible per seed.
inline std::vector<float> RandomFloats(size_t count, uint32_t seed, float lo = -1.0f,
                                       float hi = 1.0f) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> values(count);
  for (float& v : values) v = dist(engine);
  return values;
}

// Compares `got` with `want` elementwise; "" when every |got-want| <= atol + rtol*|want|.
inline std::string CompareFloats(const std::vector<float>& got, const std::vector<float>& want,
                                 double atol, double rtol) {
  if (got.size() != want.size()) {
    return "output has " + std::to_string(got.size()) + " elements, reference " +
           std::to_string(want.size());
  }
  for (size_t i = 0; i < got.size(); ++i) {
    double diff = std::fabs(static_cast<double>(got[i]) - want[i]);
    if (!(diff <= atol + rtol * std::fabs(static_cast<double>(want[i])))) {
      char buffer[160];
      std::snprintf(buffer, sizeof(buffer), "element %zu: got %.6g, reference %.6g", i,
                    static_cast<double>(got[i]), static_cast<double>(want[i]));
      return buffer;
    }
  }
  return "";
}

inline int64_t ParamOr(const ParamMap& params, const char* name, int64_t fallback) {
  auto it = params.find(name);
  return it == params.end() ? fallback : it->second;
}

}  // namespace scratchsim::cuda

#endif  // SCRATCHSIM_BACKENDS_CUDA_DEVICE_BUFFER_CUH_
