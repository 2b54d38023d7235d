// Launches one small kernel many times over (threads, registers, dynamic shared memory, grid,
// cache preference) so Nsight Compute can read the shared-memory carve-out the driver picks.
//
// The runtime cannot report the carve-out a launch ran with; `launch__shared_mem_config_size`
// in Nsight Compute can. bench/cuda/carveout_probe.sh runs this under ncu and joins the two:
// this program prints one CSV row per launch, in launch order, with what it asked for.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

#define CHECK_CUDA(call)                                                            \
  do {                                                                              \
    cudaError_t err_ = (call);                                                      \
    if (err_ != cudaSuccess) {                                                      \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
      std::exit(1);                                                                 \
    }                                                                               \
  } while (0)

// DEMAND floats stay live across the loop (each update reads a neighbour), so ptxas needs about
// DEMAND registers; __maxnreg__ caps the count so each variant lands on a chosen allocation.
// Every thread touches the dynamic shared memory once so the launch really owns it.
template <int DEMAND, int CAP>
__global__ void __maxnreg__(CAP) CarveoutProbeKernel(const float* in, float* out, int dynamic_floats) {
  extern __shared__ float scratch[];
  const int tid = blockIdx.x * blockDim.x + threadIdx.x;
  float v[DEMAND];
#pragma unroll
  for (int i = 0; i < DEMAND; ++i) v[i] = in[(tid + i) & 1023];
  for (int it = 0; it < 2; ++it) {
#pragma unroll
    for (int i = 0; i < DEMAND; ++i) v[i] = fmaf(v[i], 1.0001f, v[(i + 7) % DEMAND]);
  }
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < DEMAND; ++i) sum += v[i];
  if (dynamic_floats > 0) {
    scratch[threadIdx.x % dynamic_floats] = sum;
    __syncthreads();
    sum += scratch[(threadIdx.x + 1) % dynamic_floats];
  }
  out[tid & 1023] = sum;
}

// The same body with STATIC_FLOATS of static shared memory beside the dynamic part, to see
// whether the driver counts static and dynamic bytes alike.
template <int DEMAND, int CAP, int STATIC_FLOATS>
__global__ void __maxnreg__(CAP) CarveoutProbeStaticKernel(const float* in, float* out, int dynamic_floats) {
  extern __shared__ float scratch[];
  __shared__ float fixed[STATIC_FLOATS];
  const int tid = blockIdx.x * blockDim.x + threadIdx.x;
  float v[DEMAND];
#pragma unroll
  for (int i = 0; i < DEMAND; ++i) v[i] = in[(tid + i) & 1023];
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < DEMAND; ++i) sum += v[i] * v[(i + 3) % DEMAND];
  fixed[threadIdx.x % STATIC_FLOATS] = sum;
  if (dynamic_floats > 0) scratch[threadIdx.x % dynamic_floats] = sum;
  __syncthreads();
  sum += fixed[(threadIdx.x + 1) % STATIC_FLOATS];
  if (dynamic_floats > 0) sum += scratch[(threadIdx.x + 1) % dynamic_floats];
  out[tid & 1023] = sum;
}

using KernelFn = void (*)(const float*, float*, int);

struct Variant {
  int register_cap;
  KernelFn kernel;
};

const std::vector<Variant>& Variants() {
  static const std::vector<Variant> variants = {
      {32, CarveoutProbeKernel<20, 32>},   {56, CarveoutProbeKernel<44, 56>},
      {96, CarveoutProbeKernel<84, 96>},   {128, CarveoutProbeKernel<116, 128>},
      {168, CarveoutProbeKernel<156, 168>}, {255, CarveoutProbeKernel<240, 255>},
  };
  return variants;
}

// Static-shared variants (4 KiB and 16 KiB), used by the held-out sweep only.
const std::vector<Variant>& StaticVariants() {
  static const std::vector<Variant> variants = {
      {56, CarveoutProbeStaticKernel<44, 56, 1024>},
      {128, CarveoutProbeStaticKernel<116, 128, 1024>},
      {56, CarveoutProbeStaticKernel<44, 56, 4096>},
      {168, CarveoutProbeStaticKernel<156, 168, 4096>},
  };
  return variants;
}

struct Launch {
  int threads;
  const Variant* variant;
  int dynamic_bytes;
  int grid;
  cudaFuncCache cache;
  int carveout_percent;  // -1: the default preference
  bool opt_in;           // cudaFuncAttributeMaxDynamicSharedMemorySize raised to the device's opt-in
};

const char* CacheName(cudaFuncCache cache) {
  switch (cache) {
    case cudaFuncCachePreferNone: return "none";
    case cudaFuncCachePreferShared: return "shared";
    case cudaFuncCachePreferL1: return "l1";
    case cudaFuncCachePreferEqual: return "equal";
  }
  return "?";
}

bool Launchable(int threads, int registers) { return threads * registers <= 65536; }

// The held-out sweep: launches the rule in docs/validation/carveout.md was not read from: other
// block sizes, dynamic sizes off the 2 KiB grid, static shared memory, opt-in sizes and
// carve-out percentages the fit sweep does not use.
std::vector<Launch> HeldOutSweep(int sms) {
  std::vector<Launch> launches;
  const auto& variants = Variants();
  for (int threads : {64, 96, 192, 384, 640, 1024}) {
    for (const Variant& v : variants) {
      for (int bytes : {1000, 3000, 5320, 9316, 15000, 23000, 33000, 45000}) {
        launches.push_back({threads, &v, bytes, 8 * sms, cudaFuncCachePreferNone, -1, false});
      }
    }
  }
  for (const Variant& v : StaticVariants()) {
    for (int threads : {128, 256}) {
      for (int bytes : {0, 2048, 10240, 30720}) {
        launches.push_back({threads, &v, bytes, 8 * sms, cudaFuncCachePreferNone, -1, false});
      }
    }
  }
  for (cudaFuncCache cache : {cudaFuncCachePreferNone, cudaFuncCachePreferShared, cudaFuncCachePreferEqual,
                              cudaFuncCachePreferL1}) {
    for (int vi : {0, 3}) {
      for (int kib : {30, 64, 88, 110, 140, 180, 210}) {
        launches.push_back({256, &variants[vi], kib * 1024, 8 * sms, cache, -1, kib > 48});
      }
    }
  }
  for (int percent : {5, 33, 60, 90}) {
    for (int vi : {2, 5}) {
      for (int kib : {6, 30, 64, 110}) {
        launches.push_back({128, &variants[vi], kib * 1024, 8 * sms, cudaFuncCachePreferNone, percent, kib > 48});
      }
    }
  }
  return launches;
}

// A second held-out sweep: block sizes from one warp to 32, among them 768 and 896 (two blocks
// per SM by warps), and other dynamic sizes again.
std::vector<Launch> SecondHeldOutSweep(int sms) {
  std::vector<Launch> launches;
  for (int threads : {32, 160, 224, 320, 448, 512, 768, 896, 1024}) {
    for (const Variant& v : Variants()) {
      for (int bytes : {1500, 6000, 12345, 20000, 30000, 40000, 47000}) {
        launches.push_back({threads, &v, bytes, 4 * sms, cudaFuncCachePreferNone, -1, false});
      }
    }
  }
  for (const Variant& v : StaticVariants()) {
    for (int threads : {64, 512}) {
      for (int bytes : {500, 7000, 25000}) {
        launches.push_back({threads, &v, bytes, 4 * sms, cudaFuncCachePreferNone, -1, false});
      }
    }
  }
  return launches;
}

// Blocks near the 1024-thread maximum, two or one per SM, where the default rule misses: which
// block sizes lose the headroom.
std::vector<Launch> LargeBlockSweep(int sms) {
  std::vector<Launch> launches;
  for (int threads : {832, 960, 992, 1024}) {
    for (int vi : {0, 1}) {
      for (int bytes : {1500, 6000, 12345, 20000, 30000}) {
        launches.push_back({threads, &Variants()[vi], bytes, 4 * sms, cudaFuncCachePreferNone, -1, false});
      }
    }
  }
  return launches;
}

// The sweep: every (threads, registers, dynamic size) at the default preference and a grid of
// 16 blocks per SM; then grids from one block to many on a subset; then the explicit cache
// preferences and carve-out percentages on another.
std::vector<Launch> Sweep(int sms) {
  std::vector<Launch> launches;
  const auto& variants = Variants();
  for (int threads : {128, 256, 512}) {
    for (const Variant& v : variants) {
      for (int kib = 0; kib <= 48; kib += 2) {
        launches.push_back({threads, &v, kib * 1024, 16 * sms, cudaFuncCachePreferNone, -1, false});
      }
    }
  }
  for (int grid : {1, sms / 2, sms, 2 * sms, 4 * sms, 64 * sms}) {
    for (int vi : {1, 4}) {
      for (int kib : {4, 12, 20, 28, 40}) {
        launches.push_back({128, &variants[vi], kib * 1024, grid, cudaFuncCachePreferNone, -1, false});
      }
    }
  }
  // Triton raises the attribute and prefers shared only above 48 KiB; below, both ways.
  for (bool opt_in : {false, true}) {
    for (cudaFuncCache cache : {cudaFuncCachePreferShared, cudaFuncCachePreferL1, cudaFuncCachePreferEqual,
                                cudaFuncCachePreferNone}) {
      for (int vi : {1, 4}) {
        for (int kib : {8, 20, 40, 48, 56, 72, 96, 120, 160, 200}) {
          if (!opt_in && kib > 48) continue;
          launches.push_back({128, &variants[vi], kib * 1024, 16 * sms, cache, -1, opt_in});
        }
      }
    }
  }
  for (int percent : {0, 10, 25, 50, 75, 100}) {
    for (int vi : {1, 4}) {
      for (int kib : {8, 20, 40, 72}) {
        launches.push_back({128, &variants[vi], kib * 1024, 16 * sms, cudaFuncCachePreferNone, percent, kib > 48});
      }
    }
  }
  return launches;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string set = argc > 1 ? argv[1] : "fit";
  if (set != "fit" && set != "heldout" && set != "heldout2" && set != "large_blocks") {
    std::fprintf(stderr, "usage: %s [fit|heldout|heldout2|large_blocks]\n", argv[0]);
    return 2;
  }
  int device = 0;
  CHECK_CUDA(cudaSetDevice(device));
  int sms = 0;
  int opt_in_bytes = 0;
  CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CHECK_CUDA(cudaDeviceGetAttribute(&opt_in_bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  float* in = nullptr;
  float* out = nullptr;
  CHECK_CUDA(cudaMalloc(&in, 1024 * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&out, 1024 * sizeof(float)));
  CHECK_CUDA(cudaMemset(in, 0, 1024 * sizeof(float)));

  std::printf("launch,threads,register_cap,registers,static_bytes,dynamic_bytes,grid,cache,carveout_percent,opt_in\n");
  int index = 0;
  const std::vector<Launch> launches =
      set == "fit"        ? Sweep(sms)
      : set == "heldout"  ? HeldOutSweep(sms)
      : set == "heldout2" ? SecondHeldOutSweep(sms)
                          : LargeBlockSweep(sms);
  for (const Launch& l : launches) {
    cudaFuncAttributes attributes{};
    CHECK_CUDA(cudaFuncGetAttributes(&attributes, l.variant->kernel));
    if (!Launchable(l.threads, attributes.numRegs)) continue;
    // Unraised, the attribute is its default, 48 KiB (what Triton leaves at 48 KiB or less).
    CHECK_CUDA(cudaFuncSetAttribute(l.variant->kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    l.opt_in ? opt_in_bytes - static_cast<int>(attributes.sharedSizeBytes)
                                             : 48 * 1024));
    CHECK_CUDA(cudaFuncSetAttribute(l.variant->kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                    l.carveout_percent));
    CHECK_CUDA(cudaFuncSetCacheConfig(l.variant->kernel, l.cache));
    l.variant->kernel<<<l.grid, l.threads, l.dynamic_bytes>>>(in, out, l.dynamic_bytes / 4);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());
    std::printf("%d,%d,%d,%d,%zu,%d,%d,%s,%d,%d\n", index++, l.threads, l.variant->register_cap,
                attributes.numRegs, attributes.sharedSizeBytes, l.dynamic_bytes, l.grid, CacheName(l.cache), l.carveout_percent,
                l.opt_in ? 1 : 0);
  }
  CHECK_CUDA(cudaFree(in));
  CHECK_CUDA(cudaFree(out));
  return 0;
}
