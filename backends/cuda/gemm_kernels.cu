// Multi-stage cp.async tiled GEMM and the fused GeGLU up-projection built on the same
// pipeline: a ring of NUM_STAGES tile sets in dynamic shared memory, fp32 accumulation.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/device_buffer.cuh"
#include "backends/cuda/kernel_case.h"

namespace scratchsim::cuda {
namespace {

template <typename T>
__host__ __device__ inline float ToFloat(T v);
template <>
__host__ __device__ inline float ToFloat<float>(float v) { return v; }
template <>
__host__ __device__ inline float ToFloat<__half>(__half v) { return __half2float(v); }
template <>
__host__ __device__ inline float ToFloat<__nv_bfloat16>(__nv_bfloat16 v) {
  return __bfloat162float(v);
}

template <typename T>
T FromFloat(float v);
template <>
float FromFloat<float>(float v) { return v; }
template <>
__half FromFloat<__half>(float v) { return __float2half(v); }
template <>
__nv_bfloat16 FromFloat<__nv_bfloat16>(float v) { return __float2bfloat16(v); }

template <typename T>
const char* DtypeName();
template <>
const char* DtypeName<float>() { return "f32"; }
template <>
const char* DtypeName<__half>() { return "f16"; }
template <>
const char* DtypeName<__nv_bfloat16>() { return "bf16"; }

__device__ inline void CpAsync16(void* smem, const void* gmem) {
  unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(address), "l"(gmem));
}

__device__ inline void CpAsyncCommit() { asm volatile("cp.async.commit_group;\n" ::); }

// cp.async.wait_group takes an immediate; the stage count is a run-time parameter, so wait
// for at most min(pending, 7) groups, which is never less strict than asked.
__device__ inline void CpAsyncWaitPending(int pending) {
  switch (pending) {
    case 0: asm volatile("cp.async.wait_group 0;\n" ::); break;
    case 1: asm volatile("cp.async.wait_group 1;\n" ::); break;
    case 2: asm volatile("cp.async.wait_group 2;\n" ::); break;
    case 3: asm volatile("cp.async.wait_group 3;\n" ::); break;
    case 4: asm volatile("cp.async.wait_group 4;\n" ::); break;
    case 5: asm volatile("cp.async.wait_group 5;\n" ::); break;
    case 6: asm volatile("cp.async.wait_group 6;\n" ::); break;
    default: asm volatile("cp.async.wait_group 7;\n" ::); break;
  }
}

// Copies a rows x cols tile (row-major, leading dimension ld) into contiguous shared memory
// with 16-byte cp.async chunks spread over the block.
template <typename T, int ROWS, int COLS, int THREADS>
__device__ inline void LoadTile(T* smem, const T* gmem, int ld) {
  constexpr int kPerChunk = 16 / sizeof(T);
  constexpr int kChunks = ROWS * COLS / kPerChunk;
  static_assert(COLS % kPerChunk == 0, "tile rows must be whole 16-byte chunks");
  for (int chunk = threadIdx.x; chunk < kChunks; chunk += THREADS) {
    int row = chunk / (COLS / kPerChunk);
    int col = (chunk % (COLS / kPerChunk)) * kPerChunk;
    CpAsync16(smem + row * COLS + col, gmem + static_cast<size_t>(row) * ld + col);
  }
}

__device__ inline float GeluTanh(float a) {
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  return 0.5f * a * (1.0f + tanhf(kSqrt2OverPi * (a + 0.044715f * a * a * a)));
}

// Adds 4 consecutive fp32 outputs into C (16-byte aligned): one vector reduction
// (atomicAdd(float4*), red.global.add.v4.f32) on sm_90 and later, four scalar ones before.
__device__ inline void AtomicAdd4(float* c, const float (&v)[4]) {
#if __CUDA_ARCH__ >= 900
  atomicAdd(reinterpret_cast<float4*>(c), make_float4(v[0], v[1], v[2], v[3]));
#else
#pragma unroll
  for (int j = 0; j < 4; ++j) atomicAdd(c + j, v[j]);
#endif
}

// RandomFloats(count, seed) rounded to T, made once per process: gemm-timing prepares the same A
// and B for every configuration of a shape, and making 60 M values took seconds, longer than
// timing the kernel. Kept until exit (a run holds its shapes' inputs); one thread at a time, as
// the harness runs.
template <typename T>
const std::vector<T>& RoundedRandom(size_t count, uint32_t seed) {
  static std::map<std::pair<size_t, uint32_t>, std::vector<T>>* cache =
      new std::map<std::pair<size_t, uint32_t>, std::vector<T>>();
  auto [it, made] = cache->try_emplace({count, seed});
  if (made) {
    const std::vector<float> values = RandomFloats(count, seed);
    it->second.reserve(count);
    for (float v : values) it->second.push_back(FromFloat<T>(v));
  }
  return it->second;
}

// RoundedRandom(count, seed) on the device, uploaded once per process: a sweep times hundreds of
// configurations of one shape, and uploading a 3.7 GB LM-head weight per configuration took longer
// than timing it. The kernels only read A and B, so every configuration may share them. Kept
// until exit, one thread at a time, as RoundedRandom.
template <typename T>
cudaError_t UploadedRandom(size_t count, uint32_t seed, const T** device) {
  static auto* cache = new std::map<std::pair<size_t, uint32_t>, std::unique_ptr<DeviceBuffer<T>>>();
  auto it = cache->find({count, seed});
  if (it == cache->end()) {
    auto buffer = std::make_unique<DeviceBuffer<T>>();
    cudaError_t error = buffer->Allocate(count);
    if (error == cudaSuccess) error = buffer->Upload(RoundedRandom<T>(count, seed));
    if (error != cudaSuccess) return error;
    it = cache->emplace(std::make_pair(count, seed), std::move(buffer)).first;
  }
  *device = it->second->get();
  return cudaSuccess;
}

// What a block does with its fp32 accumulators. The split-K variant is its own instance: a
// run-time split in the one kernel changed ptxas's registers on 65 of the 80 instances (CUDA 13.0,
// sm_90a), so the kernel every earlier run measured would not have stayed the same.
enum class Epilogue {
  kStore,   // C = A x B, stored
  kGeglu,   // C = gelu_tanh(A x B) * (A x B2), both sharing the A tile, stored
  kSplitK,  // one K share's partial A x B, added into C (zeroed before the launch)
};

// C = A[M,K] x B[K,N], the epilogue's way.
// Shared memory, per stage: A tile BM x BK, B tile BK x BN (and B2 tile BK x BN): exactly
// NUM_STAGES x (BM*BK + (1+kGeglu)*BK*BN) x sizeof(T) bytes of dynamic shared memory.
// Split-K (models/graphs/gemm.pbtxt SPLIT_K): gridDim.z blocks share each output tile; block z
// runs K tiles [z * share, min((z + 1) * share, K / BK)), share = cdiv(K / BK, gridDim.z), and
// adds its partial tile into C with atomics straight from its registers (no shared memory).
template <typename T, int BM, int BN, int BK, int WARPS, Epilogue kEpilogue>
__global__ void __launch_bounds__(WARPS * 32)
    TiledGemmKernel(const T* a, const T* b, const T* b2, float* c, int m, int n, int k,
                    int stages) {
  constexpr bool kGeglu = kEpilogue == Epilogue::kGeglu;
  constexpr int kThreads = WARPS * 32;
  constexpr int kTn = 4;
  constexpr int kThreadCols = BN / kTn;
  static_assert(kThreads % kThreadCols == 0, "threads must tile the N extent");
  constexpr int kThreadRows = kThreads / kThreadCols;
  static_assert(BM % kThreadRows == 0, "threads must tile the M extent");
  constexpr int kTm = BM / kThreadRows;
  constexpr int kATile = BM * BK;
  constexpr int kBTile = BK * BN;

  extern __shared__ __align__(16) unsigned char dynamic_smem[];
  T* a_ring = reinterpret_cast<T*>(dynamic_smem);
  T* b_ring = a_ring + stages * kATile;
  T* b2_ring = b_ring + stages * kBTile;

  const int tx = threadIdx.x % kThreadCols;
  const int ty = threadIdx.x / kThreadCols;
  const int block_m = blockIdx.y * BM;
  const int block_n = blockIdx.x * BN;
  int k_tiles = k / BK;
  if constexpr (kEpilogue == Epilogue::kSplitK) {
    // This block's share of the K tiles; A and B start at its first tile.
    const int share = (k_tiles + gridDim.z - 1) / gridDim.z;
    const int first_tile = static_cast<int>(blockIdx.z) * share;
    k_tiles = min(share, k_tiles - first_tile);
    if (k_tiles <= 0) return;  // the empty last shares of an uneven split add nothing
    a += static_cast<size_t>(first_tile) * BK;
    b += static_cast<size_t>(first_tile) * BK * n;
  }

  auto load_stage = [&](int slot, int tile) {
    LoadTile<T, BM, BK, kThreads>(a_ring + slot * kATile,
                                  a + static_cast<size_t>(block_m) * k + tile * BK, k);
    LoadTile<T, BK, BN, kThreads>(b_ring + slot * kBTile,
                                  b + static_cast<size_t>(tile) * BK * n + block_n, n);
    if constexpr (kGeglu) {
      LoadTile<T, BK, BN, kThreads>(b2_ring + slot * kBTile,
                                    b2 + static_cast<size_t>(tile) * BK * n + block_n, n);
    }
  };

  float acc[kTm][kTn] = {};
  float acc2[kGeglu ? kTm : 1][kTn] = {};

  for (int s = 0; s < stages - 1; ++s) {
    if (s < k_tiles) load_stage(s, s);
    CpAsyncCommit();
  }
  for (int kt = 0; kt < k_tiles; ++kt) {
    // Tile kt + stages - 1 goes into the slot tile kt - 1 used; the barrier at the end of
    // the previous iteration made that slot free.
    int next = kt + stages - 1;
    if (next < k_tiles) load_stage(next % stages, next);
    CpAsyncCommit();
    CpAsyncWaitPending(stages - 1);
    __syncthreads();
    const int slot = kt % stages;
    const T* a_tile = a_ring + slot * kATile;
    const T* b_tile = b_ring + slot * kBTile;
    const T* b2_tile = b2_ring + slot * kBTile;
#pragma unroll 4
    for (int kk = 0; kk < BK; ++kk) {
      float av[kTm];
      float bv[kTn];
#pragma unroll
      for (int i = 0; i < kTm; ++i) av[i] = ToFloat(a_tile[(ty * kTm + i) * BK + kk]);
#pragma unroll
      for (int j = 0; j < kTn; ++j) bv[j] = ToFloat(b_tile[kk * BN + tx * kTn + j]);
#pragma unroll
      for (int i = 0; i < kTm; ++i)
#pragma unroll
        for (int j = 0; j < kTn; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
      if constexpr (kGeglu) {
#pragma unroll
        for (int j = 0; j < kTn; ++j) bv[j] = ToFloat(b2_tile[kk * BN + tx * kTn + j]);
#pragma unroll
        for (int i = 0; i < kTm; ++i)
#pragma unroll
          for (int j = 0; j < kTn; ++j) acc2[i][j] = fmaf(av[i], bv[j], acc2[i][j]);
      }
    }
    __syncthreads();
  }
  CpAsyncWaitPending(0);

  if constexpr (kEpilogue == Epilogue::kSplitK) {
    // Each thread's kTn = 4 outputs of a row are consecutive and 16-byte aligned (N is a
    // multiple of BN, itself a multiple of 4).
    static_assert(kTn == 4, "AtomicAdd4 adds 4 consecutive outputs");
#pragma unroll
    for (int i = 0; i < kTm; ++i) {
      AtomicAdd4(c + static_cast<size_t>(block_m + ty * kTm + i) * n + block_n + tx * kTn, acc[i]);
    }
  } else {
#pragma unroll
    for (int i = 0; i < kTm; ++i) {
#pragma unroll
      for (int j = 0; j < kTn; ++j) {
        int row = block_m + ty * kTm + i;
        int col = block_n + tx * kTn + j;
        float value = acc[i][j];
        if constexpr (kGeglu) value = GeluTanh(value) * acc2[i][j];
        c[static_cast<size_t>(row) * n + col] = value;
      }
    }
  }
}

// `split_k` is the number of K shares: 1 unless kEpilogue is Epilogue::kSplitK (MakeTiled).
template <typename T, int BM, int BN, int BK, int WARPS, Epilogue kEpilogue>
class TiledGemmCase final : public KernelCase {
  static constexpr bool kGeglu = kEpilogue == Epilogue::kGeglu;

 public:
  // The validation size: a 2 x 2 grid of blocks and stages + 2 K tiles per K share, checked in
  // full.
  TiledGemmCase(int stages, int split_k)
      : stages_(stages), split_k_(split_k), m_(2 * BM), n_(2 * BN), k_(BK * (stages + 2) * split_k) {}
  // A timing size (multiples of the tile); the CPU reference covers kSampled outputs only.
  // `shared_pad` bytes of dynamic shared memory the kernel does not use cap how many blocks share
  // an SM (gemm-timing --blocks-per-sm).
  TiledGemmCase(int stages, int split_k, int m, int n, int k, int64_t shared_pad)
      : stages_(stages), split_k_(split_k), m_(m), n_(n), k_(k), sampled_(true), shared_pad_(shared_pad) {}

  std::string name() const override {
    return std::string(kGeglu ? "geglu<" : kEpilogue == Epilogue::kSplitK ? "gemm_split_k<" : "gemm<") +
           DtypeName<T>() + "," +
           std::to_string(BM) + "," + std::to_string(BN) + "," + std::to_string(BK) + "," +
           std::to_string(WARPS) + ">";
  }
  const void* function() const override {
    return reinterpret_cast<const void*>(&TiledGemmKernel<T, BM, BN, BK, WARPS, kEpilogue>);
  }
  int threads_per_block() const override { return WARPS * 32; }
  int64_t dynamic_shared_bytes() const override {
    return static_cast<int64_t>(stages_) * (BM * BK + (kGeglu ? 2 : 1) * BK * BN) *
               static_cast<int64_t>(sizeof(T)) +
           shared_pad_;
  }
  dim3 grid() const override { return dim3(n_ / BN, m_ / BM, split_k_); }

  cudaError_t Prepare() override {
    // The reference sees the values after rounding to T, as the kernel does. B2 exists only for
    // the GeGLU epilogue.
    const std::vector<T>& ah = RoundedRandom<T>(static_cast<size_t>(m_) * k_, 1);
    const std::vector<T>& bh = RoundedRandom<T>(static_cast<size_t>(k_) * n_, 2);
    const std::vector<T>& b2h = RoundedRandom<T>(kGeglu ? static_cast<size_t>(k_) * n_ : 0, 3);
    auto af = [&](size_t i) { return static_cast<double>(ToFloat(ah[i])); };
    auto bf = [&](size_t i) { return ToFloat(bh[i]); };
    auto b2f = [&](size_t i) { return ToFloat(b2h[i]); };
    reference_.assign(static_cast<size_t>(m_) * n_, 0.0f);
    checked_.clear();
    for (int i = 0; i < m_; ++i) {
      for (int j = 0; j < n_; ++j) {
        // Timing sizes: a fixed pseudo-random sample of outputs (one per step of a stride
        // coprime with the output count), not all m x n dot products of length k.
        const size_t index = static_cast<size_t>(i) * n_ + j;
        if (sampled_) {
          if (index % kSampleStride != 0 || checked_.size() >= kSampled) continue;
          checked_.push_back(index);
        }
        double sum = 0, sum2 = 0;
        for (int p = 0; p < k_; ++p) {
          sum += af(static_cast<size_t>(i) * k_ + p) * bf(static_cast<size_t>(p) * n_ + j);
          if (kGeglu) sum2 += af(static_cast<size_t>(i) * k_ + p) * b2f(static_cast<size_t>(p) * n_ + j);
        }
        double value = sum;
        if (kGeglu) {
          value = 0.5 * sum *
                  (1.0 + std::tanh(0.7978845608028654 * (sum + 0.044715 * sum * sum * sum))) *
                  sum2;
        }
        reference_[static_cast<size_t>(i) * n_ + j] = static_cast<float>(value);
      }
    }
    cudaError_t error;
    if ((error = UploadedRandom<T>(ah.size(), 1, &a_)) != cudaSuccess) return error;
    if ((error = UploadedRandom<T>(bh.size(), 2, &b_)) != cudaSuccess) return error;
    if (kGeglu && (error = UploadedRandom<T>(b2h.size(), 3, &b2_)) != cudaSuccess) return error;
    if ((error = c_.Allocate(reference_.size())) != cudaSuccess) return error;
    return c_.Zero();
  }

  // Split-K zeroes C first, on the same stream: the launch the caller times includes it.
  cudaError_t Launch(cudaStream_t stream) override {
    if constexpr (kEpilogue == Epilogue::kSplitK) {
      const cudaError_t error = c_.ZeroAsync(stream);
      if (error != cudaSuccess) return error;
    }
    TiledGemmKernel<T, BM, BN, BK, WARPS, kEpilogue>
        <<<grid(), threads_per_block(), dynamic_shared_bytes(), stream>>>(
            a_, b_, b2_, c_.get(), m_, n_, k_, stages_);
    return cudaGetLastError();
  }

  std::string Check() override {
    std::vector<float> got;
    cudaError_t error = c_.Download(&got);
    if (error != cudaSuccess) return std::string("copy back: ") + cudaGetErrorString(error);
    // fp32 accumulation over K products of values in [-1, 1).
    double atol = 1e-4 * k_;
    if (sampled_) {
      std::vector<float> got_sample, want_sample;
      for (size_t index : checked_) {
        got_sample.push_back(got[index]);
        want_sample.push_back(reference_[index]);
      }
      return CompareFloats(got_sample, want_sample, atol, 1e-3);
    }
    return CompareFloats(got, reference_, atol, 1e-3);
  }

 private:
  static constexpr size_t kSampled = 256;
  static constexpr size_t kSampleStride = 4099;  // prime
  int stages_, split_k_, m_, n_, k_;
  bool sampled_ = false;
  int64_t shared_pad_ = 0;
  std::vector<size_t> checked_;
  std::vector<float> reference_;
  const T* a_ = nullptr;  // UploadedRandom's, shared by every case of the shape
  const T* b_ = nullptr;
  const T* b2_ = nullptr;
  DeviceBuffer<float> c_;
};

// The compiled instances: ptxas decides registers for each. DTYPE: 0 f32, 1 f16, 2 bf16.
struct Instance {
  int dtype, bm, bn, bk, warps;
  std::unique_ptr<KernelCase> (*make)(int stages, int split_k);
};

// The GEMM at `split_k` K shares: one share runs the plain kernel (Epilogue::kStore, the one every
// run before split-K measured), more the split-K instance. `size` is a timing size or nothing.
template <typename T, int BM, int BN, int BK, int WARPS, typename... Size>
std::unique_ptr<KernelCase> MakeTiled(int stages, int split_k, Size... size) {
  if (split_k == 1) return std::make_unique<TiledGemmCase<T, BM, BN, BK, WARPS, Epilogue::kStore>>(stages, 1, size...);
  return std::make_unique<TiledGemmCase<T, BM, BN, BK, WARPS, Epilogue::kSplitK>>(stages, split_k, size...);
}

// GeGLU's epilogue is not a sum of K shares: MakeGegluCase maps no SPLIT_K, so Find passes 1.
template <typename T, int BM, int BN, int BK, int WARPS>
std::unique_ptr<KernelCase> MakeGeglu(int stages, int /*split_k*/) {
  return std::make_unique<TiledGemmCase<T, BM, BN, BK, WARPS, Epilogue::kGeglu>>(stages, 1);
}

const Instance kGemmInstances[] = {
    {0, 64, 64, 32, 4, &MakeTiled<float, 64, 64, 32, 4>},
    {0, 128, 128, 32, 8, &MakeTiled<float, 128, 128, 32, 8>},
    {0, 128, 64, 16, 4, &MakeTiled<float, 128, 64, 16, 4>},
    {1, 64, 64, 32, 4, &MakeTiled<__half, 64, 64, 32, 4>},
    {1, 128, 128, 32, 8, &MakeTiled<__half, 128, 128, 32, 8>},
    {1, 128, 64, 64, 4, &MakeTiled<__half, 128, 64, 64, 4>},
    {2, 64, 64, 32, 4, &MakeTiled<__nv_bfloat16, 64, 64, 32, 4>},
    {2, 128, 128, 32, 8, &MakeTiled<__nv_bfloat16, 128, 128, 32, 8>},
    {2, 128, 64, 64, 4, &MakeTiled<__nv_bfloat16, 128, 64, 64, 4>},
};
// The GeGLU up-projection of models/graphs/mlp.pbtxt (seed 002): fp32, the whole intermediate
// width I_RED as one N tile, (tile_t, I_RED, tile_h, num_warps) as (BM, BN, BK, WARPS).
const Instance kGegluInstances[] = {
    {0, 16, 128, 16, 4, &MakeGeglu<float, 16, 128, 16, 4>},
    {0, 16, 512, 16, 4, &MakeGeglu<float, 16, 512, 16, 4>},
    {0, 16, 256, 32, 4, &MakeGeglu<float, 16, 256, 32, 4>},
    {0, 32, 256, 32, 8, &MakeGeglu<float, 32, 256, 32, 8>},
};

// The timing sweep (docs/validation/planner-h100.md, "The CUDA backend's GEMM"): every tile of
// BLOCK_M, BLOCK_N in {32, 64, 128}, BLOCK_K in {16, 32}, NUM_WARPS in {4, 8}, f32 and f16; and
// BLOCK_M = 16 (the only tile of a 16-token decode row or a 2,000-token prefill, where M is no
// multiple of 32), less 16 x 32 at 8 warps, whose 8 thread rows per 32 columns do not tile 16.
struct TimingInstance {
  int dtype, bm, bn, bk, warps;
  std::unique_ptr<KernelCase> (*make)(int stages, int split_k, int m, int n, int k, int64_t shared_pad);
};

#define SCRATCHSIM_TIMING_W(D, T, BM, BN, BK) \
  {D, BM, BN, BK, 4, &MakeTiled<T, BM, BN, BK, 4>}, {D, BM, BN, BK, 8, &MakeTiled<T, BM, BN, BK, 8>}
#define SCRATCHSIM_TIMING_K(D, T, BM, BN) SCRATCHSIM_TIMING_W(D, T, BM, BN, 16), SCRATCHSIM_TIMING_W(D, T, BM, BN, 32)
#define SCRATCHSIM_TIMING_N(D, T, BM) \
  SCRATCHSIM_TIMING_K(D, T, BM, 32), SCRATCHSIM_TIMING_K(D, T, BM, 64), SCRATCHSIM_TIMING_K(D, T, BM, 128)
#define SCRATCHSIM_TIMING_M16(D, T)                                                              \
  {D, 16, 32, 16, 4, &MakeTiled<T, 16, 32, 16, 4>}, {D, 16, 32, 32, 4, &MakeTiled<T, 16, 32, 32, 4>}, \
      SCRATCHSIM_TIMING_K(D, T, 16, 64), SCRATCHSIM_TIMING_K(D, T, 16, 128)
#define SCRATCHSIM_TIMING_DTYPE(D, T)                                                    \
  SCRATCHSIM_TIMING_M16(D, T), SCRATCHSIM_TIMING_N(D, T, 32), SCRATCHSIM_TIMING_N(D, T, 64), \
      SCRATCHSIM_TIMING_N(D, T, 128)

const TimingInstance kTimingInstances[] = {SCRATCHSIM_TIMING_DTYPE(0, float), SCRATCHSIM_TIMING_DTYPE(1, __half)};

// SPLIT_K's range, for both factories: false with `error` naming `family` outside [1, kMaxSplitK].
bool SplitKInRange(int64_t split_k, const std::string& family, std::string* error) {
  if (split_k >= 1 && split_k <= kMaxSplitK) return true;
  *error = family + ": SPLIT_K must be in [1, " + std::to_string(kMaxSplitK) + "], got " + std::to_string(split_k);
  return false;
}

template <size_t N>
std::unique_ptr<KernelCase> Find(const Instance (&instances)[N], const char* family,
                                 const ParamMap& params, int64_t default_dtype,
                                 std::string* error) {
  int64_t dtype = ParamOr(params, "DTYPE", default_dtype);
  int64_t bm = ParamOr(params, "BLOCK_M", -1), bn = ParamOr(params, "BLOCK_N", -1);
  int64_t bk = ParamOr(params, "BLOCK_K", -1), warps = ParamOr(params, "NUM_WARPS", -1);
  int64_t stages = ParamOr(params, "NUM_STAGES", -1);
  // SPLIT_K (gemm.pbtxt): K shares added into C; the GeGLU family maps none (MakeGeglu).
  const int64_t split_k = ParamOr(params, "SPLIT_K", 1);
  if (stages < 1 || stages > 64) {
    *error = std::string(family) + ": NUM_STAGES must be in [1, 64], got " +
             std::to_string(stages);
    return nullptr;
  }
  if (!SplitKInRange(split_k, family, error)) return nullptr;
  for (const Instance& instance : instances) {
    if (instance.dtype == dtype && instance.bm == bm && instance.bn == bn &&
        instance.bk == bk && instance.warps == warps) {
      return instance.make(static_cast<int>(stages), static_cast<int>(split_k));
    }
  }
  std::string known;
  for (const Instance& instance : instances) {
    known += " (" + std::to_string(instance.dtype) + "," + std::to_string(instance.bm) + "," +
             std::to_string(instance.bn) + "," + std::to_string(instance.bk) + "," +
             std::to_string(instance.warps) + ")";
  }
  *error = std::string(family) + ": no compiled instance for DTYPE=" + std::to_string(dtype) +
           " BLOCK_M=" + std::to_string(bm) + " BLOCK_N=" + std::to_string(bn) +
           " BLOCK_K=" + std::to_string(bk) + " NUM_WARPS=" + std::to_string(warps) +
           "; compiled (DTYPE,BLOCK_M,BLOCK_N,BLOCK_K,NUM_WARPS):" + known;
  return nullptr;
}

}  // namespace

std::unique_ptr<KernelCase> MakeGemmCase(const ParamMap& params, std::string* error) {
  return Find(kGemmInstances, "gemm", params, 1, error);
}

std::vector<GemmTile> GemmTimingTiles() {
  std::vector<GemmTile> tiles;
  for (const TimingInstance& t : kTimingInstances) tiles.push_back({t.dtype, t.bm, t.bn, t.bk, t.warps});
  return tiles;
}

std::unique_ptr<KernelCase> MakeGemmTimingCase(const ParamMap& params, std::string* error) {
  const int64_t dtype = ParamOr(params, "DTYPE", -1), bm = ParamOr(params, "BLOCK_M", -1);
  const int64_t bn = ParamOr(params, "BLOCK_N", -1), bk = ParamOr(params, "BLOCK_K", -1);
  const int64_t warps = ParamOr(params, "NUM_WARPS", -1), stages = ParamOr(params, "NUM_STAGES", -1);
  const int64_t m = ParamOr(params, "M", -1), n = ParamOr(params, "N", -1), k = ParamOr(params, "K", -1);
  const int64_t shared_pad = ParamOr(params, "SHARED_PAD", 0), split_k = ParamOr(params, "SPLIT_K", 1);
  if (stages < 1 || stages > 64) {
    *error = "gemm timing: NUM_STAGES must be in [1, 64], got " + std::to_string(stages);
    return nullptr;
  }
  if (!SplitKInRange(split_k, "gemm timing", error)) return nullptr;
  if (shared_pad < 0 || shared_pad > (1 << 20)) {
    *error = "gemm timing: SHARED_PAD must be in [0, 2^20] bytes, got " + std::to_string(shared_pad);
    return nullptr;
  }
  for (const TimingInstance& t : kTimingInstances) {
    if (t.dtype != dtype || t.bm != bm || t.bn != bn || t.bk != bk || t.warps != warps) continue;
    if (m <= 0 || n <= 0 || k <= 0 || m % bm != 0 || n % bn != 0 || k % bk != 0 || m > (1 << 20) ||
        n > (1 << 20) || k > (1 << 20)) {
      *error = "gemm timing: M, N, K must be positive multiples of BLOCK_M, BLOCK_N, BLOCK_K (at most 2^20), got " +
               std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
      return nullptr;
    }
    // Every share gets at least one K tile only while the split is at most the K tiles.
    if (split_k > k / bk) {
      *error = "gemm timing: SPLIT_K " + std::to_string(split_k) + " exceeds the " + std::to_string(k / bk) +
               " K tiles of K=" + std::to_string(k) + " at BLOCK_K=" + std::to_string(bk);
      return nullptr;
    }
    return t.make(static_cast<int>(stages), static_cast<int>(split_k), static_cast<int>(m), static_cast<int>(n),
                  static_cast<int>(k), shared_pad);
  }
  *error = "gemm timing: no compiled timing instance for DTYPE=" + std::to_string(dtype) + " BLOCK_M=" +
           std::to_string(bm) + " BLOCK_N=" + std::to_string(bn) + " BLOCK_K=" + std::to_string(bk) +
           " NUM_WARPS=" + std::to_string(warps);
  return nullptr;
}

std::unique_ptr<KernelCase> MakeGegluCase(const ParamMap& params, std::string* error) {
  // Triton's pipeliner keeps max(1, num_stages - 1) copies of each loaded tile in shared
  // memory (mlp.pbtxt); the ring here has exactly that many slots.
  int64_t num_stages = ParamOr(params, "num_stages", -1);
  if (num_stages < 1 || num_stages > 65) {
    *error = "geglu_mlp: num_stages must be in [1, 65], got " + std::to_string(num_stages);
    return nullptr;
  }
  ParamMap mapped = {{"DTYPE", 0},
                     {"BLOCK_M", ParamOr(params, "tile_t", -1)},
                     {"BLOCK_N", ParamOr(params, "I_RED", -1)},
                     {"BLOCK_K", ParamOr(params, "tile_h", -1)},
                     {"NUM_WARPS", ParamOr(params, "num_warps", -1)},
                     {"NUM_STAGES", num_stages > 1 ? num_stages - 1 : 1}};
  return Find(kGegluInstances, "geglu_mlp (tile_t, I_RED, tile_h, num_warps as BLOCK_M, BLOCK_N, BLOCK_K, NUM_WARPS)",
              mapped, 0, error);
}

}  // namespace scratchsim::cuda
