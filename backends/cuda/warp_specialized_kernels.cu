// Warp-specialized producer/consumer pipeline: PRODUCER_WARPS warps fill a NUM_STAGES ring of
// tiles in dynamic shared memory with Hopper bulk copies (cp.async.bulk completing on an
// mbarrier), CONSUMER_WARPS warps reduce them. The mbarriers are static __shared__ arrays.
#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/device_buffer.cuh"
#include "backends/cuda/kernel_case.h"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "warp_specialized_kernels.cu needs sm_90 (cp.async.bulk, mbarrier expect_tx)"
#endif

namespace scratchsim::cuda {
namespace {

// Ring slots the static barrier arrays hold: 2 x 16 x 8 bytes = 256 bytes of static smem.
constexpr int kMaxStages = 16;
constexpr int kBlocks = 2;

__device__ inline unsigned SmemAddress(const void* pointer) {
  return static_cast<unsigned>(__cvta_generic_to_shared(pointer));
}

__device__ inline void BarrierInit(unsigned long long* barrier, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(SmemAddress(barrier)),
               "r"(count));
}

__device__ inline void BarrierArriveExpectTx(unsigned long long* barrier, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;\n" ::"r"(
                   SmemAddress(barrier)),
               "r"(bytes)
               : "memory");
}

__device__ inline void BarrierArrive(unsigned long long* barrier) {
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];\n" ::"r"(
                   SmemAddress(barrier))
               : "memory");
}

__device__ inline void BarrierWait(unsigned long long* barrier, unsigned parity) {
  unsigned done = 0;
  while (!done) {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        " selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(SmemAddress(barrier)), "r"(parity)
        : "memory");
  }
}

__device__ inline void BulkCopy(void* smem, const void* gmem, unsigned bytes,
                                unsigned long long* barrier) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
      ::"r"(SmemAddress(smem)), "l"(gmem), "r"(bytes), "r"(SmemAddress(barrier))
      : "memory");
}

// Warps [0, producer_warps) produce, the rest consume. Tiles are tile_bytes (a multiple of
// 16) each; every producer warp copies its share of 16-byte chunks of every tile.
template <int LAUNCH_BOUND>
__global__ void __launch_bounds__(LAUNCH_BOUND)
    ProducerConsumerKernel(const float* in, float* out, int tiles, int tile_bytes,
                           int stages, int producer_warps) {
  __shared__ __align__(8) unsigned long long full[kMaxStages];
  __shared__ __align__(8) unsigned long long empty[kMaxStages];
  extern __shared__ __align__(128) unsigned char ring[];

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int consumer_warps = blockDim.x / 32 - producer_warps;
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      BarrierInit(&full[s], producer_warps);
      BarrierInit(&empty[s], consumer_warps);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  const unsigned char* block_in = reinterpret_cast<const unsigned char*>(in) +
                                  static_cast<size_t>(blockIdx.x) * tiles * tile_bytes;
  if (warp < producer_warps) {
    if (lane != 0) return;
    const int chunks = tile_bytes / 16;
    const int first = chunks * warp / producer_warps;
    const int last = chunks * (warp + 1) / producer_warps;
    const unsigned bytes = static_cast<unsigned>(last - first) * 16;
    for (int t = 0; t < tiles; ++t) {
      const int slot = t % stages;
      // A fresh barrier counts as having completed the phase before phase 0.
      BarrierWait(&empty[slot], ((t / stages) & 1) ^ 1);
      BarrierArriveExpectTx(&full[slot], bytes);
      if (bytes > 0) {
        BulkCopy(ring + static_cast<size_t>(slot) * tile_bytes + first * 16,
                 block_in + static_cast<size_t>(t) * tile_bytes + first * 16, bytes,
                 &full[slot]);
      }
    }
    return;
  }

  const int consumer_thread = threadIdx.x - producer_warps * 32;
  const int floats = tile_bytes / 4;
  float sum = 0.0f;
  for (int t = 0; t < tiles; ++t) {
    const int slot = t % stages;
    BarrierWait(&full[slot], (t / stages) & 1);
    const float* tile = reinterpret_cast<const float*>(ring + static_cast<size_t>(slot) * tile_bytes);
    for (int i = consumer_thread; i < floats; i += consumer_warps * 32) sum += tile[i];
    __syncwarp();
    if (lane == 0) BarrierArrive(&empty[slot]);
  }
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  if (lane == 0) atomicAdd(out + blockIdx.x, sum);
}

template <int LAUNCH_BOUND>
class ProducerConsumerCase final : public KernelCase {
 public:
  ProducerConsumerCase(int producer_warps, int consumer_warps, int stages, int tile_bytes)
      : producer_warps_(producer_warps),
        consumer_warps_(consumer_warps),
        stages_(stages),
        tile_bytes_(tile_bytes),
        tiles_(2 * stages + 1) {}
  std::string name() const override {
    return "producer_consumer<" + std::to_string(LAUNCH_BOUND) + ">";
  }
  const void* function() const override {
    return reinterpret_cast<const void*>(&ProducerConsumerKernel<LAUNCH_BOUND>);
  }
  int threads_per_block() const override { return (producer_warps_ + consumer_warps_) * 32; }
  int64_t dynamic_shared_bytes() const override {
    return static_cast<int64_t>(stages_) * tile_bytes_;
  }
  dim3 grid() const override { return dim3(kBlocks); }

  cudaError_t Prepare() override {
    const size_t per_block = static_cast<size_t>(tiles_) * tile_bytes_ / 4;
    std::vector<float> in = RandomFloats(per_block * kBlocks, 6);
    reference_.assign(kBlocks, 0.0f);
    for (int b = 0; b < kBlocks; ++b) {
      double sum = 0;
      for (size_t i = 0; i < per_block; ++i) sum += in[b * per_block + i];
      reference_[b] = static_cast<float>(sum);
    }
    atol_ = 1e-5 * static_cast<double>(per_block);
    cudaError_t error;
    if ((error = in_.Allocate(in.size())) != cudaSuccess) return error;
    if ((error = out_.Allocate(kBlocks)) != cudaSuccess) return error;
    if ((error = in_.Upload(in)) != cudaSuccess) return error;
    return out_.Zero();
  }

  cudaError_t Launch(cudaStream_t stream) override {
    // Timing launches accumulate into the same sums; start from zero each time.
    cudaError_t error = cudaMemsetAsync(out_.get(), 0, kBlocks * sizeof(float), stream);
    if (error != cudaSuccess) return error;
    ProducerConsumerKernel<LAUNCH_BOUND>
        <<<grid(), threads_per_block(), dynamic_shared_bytes(), stream>>>(
            in_.get(), out_.get(), tiles_, tile_bytes_, stages_, producer_warps_);
    return cudaGetLastError();
  }

  std::string Check() override {
    std::vector<float> got;
    cudaError_t error = out_.Download(&got);
    if (error != cudaSuccess) return std::string("copy back: ") + cudaGetErrorString(error);
    return CompareFloats(got, reference_, atol_, 1e-4);
  }

 private:
  int producer_warps_, consumer_warps_, stages_, tile_bytes_, tiles_;
  double atol_ = 0;
  std::vector<float> reference_;
  DeviceBuffer<float> in_, out_;
};

struct Instance {
  int launch_bound;
  std::unique_ptr<KernelCase> (*make)(int, int, int, int);
};

template <int LAUNCH_BOUND>
std::unique_ptr<KernelCase> Make(int producers, int consumers, int stages, int tile_bytes) {
  return std::make_unique<ProducerConsumerCase<LAUNCH_BOUND>>(producers, consumers, stages,
                                                              tile_bytes);
}

const Instance kInstances[] = {
    {128, &Make<128>}, {256, &Make<256>}, {384, &Make<384>}, {512, &Make<512>},
    {1024, &Make<1024>},
};

}  // namespace

std::unique_ptr<KernelCase> MakeWarpSpecializedCase(const ParamMap& params, std::string* error) {
  int64_t producers = ParamOr(params, "PRODUCER_WARPS", -1);
  int64_t consumers = ParamOr(params, "CONSUMER_WARPS", -1);
  int64_t stages = ParamOr(params, "NUM_STAGES", -1);
  int64_t tile_bytes = ParamOr(params, "TILE_BYTES", -1);
  int64_t bound = ParamOr(params, "LAUNCH_BOUND", -1);
  if (producers < 1 || consumers < 1 || producers + consumers > 64 || stages < 1 ||
      stages > kMaxStages || tile_bytes < 16 || tile_bytes % 16 != 0 ||
      tile_bytes > (1 << 20)) {
    *error = "producer_consumer: need PRODUCER_WARPS, CONSUMER_WARPS >= 1 (64 warps at most), "
             "1 <= NUM_STAGES <= " + std::to_string(kMaxStages) +
             ", TILE_BYTES a multiple of 16 up to 1 MiB";
    return nullptr;
  }
  std::string known;
  for (const Instance& instance : kInstances) {
    if (instance.launch_bound == bound) {
      return instance.make(static_cast<int>(producers), static_cast<int>(consumers),
                           static_cast<int>(stages), static_cast<int>(tile_bytes));
    }
    known += " " + std::to_string(instance.launch_bound);
  }
  *error = "producer_consumer: no compiled instance for LAUNCH_BOUND=" + std::to_string(bound) +
           "; compiled:" + known;
  return nullptr;
}

}  // namespace scratchsim::cuda
