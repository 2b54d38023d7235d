// Memory latency and bandwidth microbenchmarks on the live GPU.
#include "backends/cuda/memory_bench.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <optional>
#include <random>
#include <vector>

#include <cuda_runtime.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "backends/cuda/memory_bench_kernels.h"
#include "sim/checked_math.h"
#include "sim/status_macros.h"

namespace scratchsim::cuda {
namespace {

constexpr int64_t kPageBytes = int64_t{2} << 20;  // the GPU's large page, cudaMalloc's unit
constexpr int64_t kTimedChaseLoads = int64_t{1} << 17;
constexpr int64_t kMinBandwidthFootprint = int64_t{1} << 20;
constexpr double kMinTrialMs = 20.0;
constexpr int kBandwidthTrials = 5;
constexpr uint64_t kSeed = 0x5eed5eedULL;

absl::Status CudaStatus(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return absl::OkStatus();
  cudaGetLastError();
  return absl::FailedPreconditionError(
      absl::StrCat(what, ": ", cudaGetErrorName(error), " (", cudaGetErrorString(error), ")"));
}

// Device memory freed on every path out.
class DeviceMemory {
 public:
  DeviceMemory() = default;
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  ~DeviceMemory() {
    if (data_ != nullptr) cudaFree(data_);
  }
  absl::Status Allocate(int64_t bytes, const char* what) {
    size_t free_bytes = 0, total_bytes = 0;
    RETURN_IF_ERROR(CudaStatus(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo"));
    if (static_cast<uint64_t>(bytes) > free_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat(what, ": needs ", bytes, " bytes of device memory, ", free_bytes, " free"));
    }
    return CudaStatus(cudaMalloc(&data_, static_cast<size_t>(bytes)), what);
  }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }

 private:
  void* data_ = nullptr;
};

class Events {
 public:
  ~Events() {
    if (start_ != nullptr) cudaEventDestroy(start_);
    if (stop_ != nullptr) cudaEventDestroy(stop_);
  }
  absl::Status Create() {
    RETURN_IF_ERROR(CudaStatus(cudaEventCreate(&start_), "cudaEventCreate"));
    return CudaStatus(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  cudaEvent_t start() const { return start_; }
  cudaEvent_t stop() const { return stop_; }

 private:
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

double Percentile(std::vector<double> values, double fraction) {
  std::sort(values.begin(), values.end());
  size_t index = static_cast<size_t>(std::lround(fraction * static_cast<double>(values.size() - 1)));
  return values[index];
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// The visiting order of the chase's `count` nodes (node i at byte offset i * stride).
std::vector<uint32_t> ChaseVisitOrder(int64_t count, int64_t stride_bytes, ChaseOrder order) {
  std::mt19937_64 engine(kSeed);
  std::vector<uint32_t> visit(static_cast<size_t>(count));
  std::iota(visit.begin(), visit.end(), 0u);
  if (order == ChaseOrder::kRandom) {
    std::shuffle(visit.begin(), visit.end(), engine);
    return visit;
  }
  const int64_t per_page = kPageBytes / stride_bytes;
  const int64_t pages = count / per_page;
  std::vector<uint32_t> page_order(static_cast<size_t>(pages));
  std::iota(page_order.begin(), page_order.end(), 0u);
  std::shuffle(page_order.begin(), page_order.end(), engine);
  std::vector<uint32_t> lines(static_cast<size_t>(per_page));
  std::iota(lines.begin(), lines.end(), 0u);
  size_t out = 0;
  for (uint32_t page : page_order) {
    std::shuffle(lines.begin(), lines.end(), engine);
    for (uint32_t line : lines) visit[out++] = static_cast<uint32_t>(page * per_page + line);
  }
  return visit;
}

absl::Status CheckLatencyArgs(int64_t footprint_bytes, int64_t stride_bytes, ChaseOrder order) {
  if (stride_bytes < 8 || stride_bytes % 8 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("latency: stride_bytes ", stride_bytes, " must be a positive multiple of 8"));
  }
  if (footprint_bytes <= 0 || footprint_bytes % stride_bytes != 0) {
    return absl::InvalidArgumentError(absl::StrCat("latency: footprint_bytes ", footprint_bytes,
                                                   " must be a positive multiple of stride_bytes ",
                                                   stride_bytes));
  }
  int64_t count = footprint_bytes / stride_bytes;
  if (count < kChaseGroup || count > int64_t{UINT32_MAX}) {
    return absl::InvalidArgumentError(absl::StrCat("latency: ", count, " nodes (footprint / stride); need ",
                                                   kChaseGroup, " to 2^32 - 1"));
  }
  if (order == ChaseOrder::kRandomWithinPages &&
      (kPageBytes % stride_bytes != 0 || footprint_bytes % kPageBytes != 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "latency: a chase within 2 MiB pages needs stride_bytes dividing 2 MiB and a whole number of "
        "pages; got stride ",
        stride_bytes, ", footprint ", footprint_bytes));
  }
  return absl::OkStatus();
}

// Reads back a finished chase's group cycles and summary into `result`'s statistics.
absl::Status SummarizeChase(int groups, const DeviceMemory& group_cycles, const DeviceMemory& summary,
                            LatencyResult* result) {
  std::vector<uint64_t> cycles(static_cast<size_t>(groups));
  uint64_t totals[kChaseSummarySlots] = {};
  RETURN_IF_ERROR(CudaStatus(cudaMemcpy(cycles.data(), group_cycles.as<uint64_t>(), cycles.size() * sizeof(uint64_t),
                                        cudaMemcpyDeviceToHost),
                             "cudaMemcpy group cycles"));
  RETURN_IF_ERROR(CudaStatus(cudaMemcpy(totals, summary.as<uint64_t>(), sizeof(totals), cudaMemcpyDeviceToHost),
                             "cudaMemcpy chase summary"));
  if (totals[kChaseNsSlot] == 0 || totals[kChaseCyclesSlot] == 0) {
    return absl::InternalError("latency: the chase kernel reported an empty timed span");
  }
  std::vector<double> per_load(cycles.size());
  for (size_t g = 0; g < cycles.size(); ++g) per_load[g] = static_cast<double>(cycles[g]) / kChaseGroup;
  result->median_cycles = Median(per_load);
  result->p10_cycles = Percentile(per_load, 0.1);
  result->p90_cycles = Percentile(per_load, 0.9);
  result->sm_clock_mhz =
      static_cast<double>(totals[kChaseCyclesSlot]) / static_cast<double>(totals[kChaseNsSlot]) * 1e3;
  result->median_ns = result->median_cycles / (result->sm_clock_mhz * 1e-3);
  return absl::OkStatus();
}

}  // namespace

std::string ChaseOrderName(ChaseOrder order) {
  return order == ChaseOrder::kRandom ? "random" : "random within 2 MiB pages";
}

absl::StatusOr<LatencyResult> MeasureLoadLatency(int ordinal, int64_t footprint_bytes, int64_t stride_bytes,
                                                 ChaseOrder order) {
  RETURN_IF_ERROR(CheckLatencyArgs(footprint_bytes, stride_bytes, order));
  RETURN_IF_ERROR(CudaStatus(cudaSetDevice(ordinal), "cudaSetDevice"));
  int l2_bytes = 0;
  RETURN_IF_ERROR(CudaStatus(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, ordinal),
                             "cudaDevAttrL2CacheSize"));
  const int64_t count = footprint_bytes / stride_bytes;
  LatencyResult result;
  result.footprint_bytes = footprint_bytes;
  result.stride_bytes = stride_bytes;
  result.order = order;
  // A footprint that fits in L2 is walked once untimed so the timed loads hit; a larger one
  // is timed cold (each timed node is visited once, long after the init kernel wrote it).
  result.warm_loads = footprint_bytes < l2_bytes ? count : 0;
  const int groups = static_cast<int>(kTimedChaseLoads / kChaseGroup);
  result.timed_loads = int64_t{groups} * kChaseGroup;
  result.group_loads = kChaseGroup;

  // Extra page so the chase can start on a 2 MiB boundary whatever cudaMalloc returned.
  std::optional<int64_t> allocation = CheckedAdd(footprint_bytes, kPageBytes);
  if (!allocation) return absl::InvalidArgumentError("latency: footprint_bytes overflows");
  DeviceMemory buffer, visit_device, group_cycles, summary;
  RETURN_IF_ERROR(buffer.Allocate(*allocation, "chase buffer"));
  RETURN_IF_ERROR(visit_device.Allocate(count * static_cast<int64_t>(sizeof(uint32_t)), "chase order"));
  RETURN_IF_ERROR(group_cycles.Allocate(groups * static_cast<int64_t>(sizeof(uint64_t)), "group cycles"));
  RETURN_IF_ERROR(summary.Allocate(kChaseSummarySlots * sizeof(uint64_t), "chase summary"));
  uintptr_t raw = reinterpret_cast<uintptr_t>(buffer.as<char>());
  char* base = reinterpret_cast<char*>((raw + kPageBytes - 1) / kPageBytes * kPageBytes);

  std::vector<uint32_t> visit = ChaseVisitOrder(count, stride_bytes, order);
  RETURN_IF_ERROR(CudaStatus(cudaMemcpy(visit_device.as<uint32_t>(), visit.data(), visit.size() * sizeof(uint32_t),
                                        cudaMemcpyHostToDevice),
                             "cudaMemcpy chase order"));
  RETURN_IF_ERROR(CudaStatus(LaunchChaseInit(base, visit_device.as<uint32_t>(), count, stride_bytes, nullptr),
                             "chase init launch"));
  RETURN_IF_ERROR(CudaStatus(cudaDeviceSynchronize(), "chase init"));
  const char* start = base + static_cast<int64_t>(visit[0]) * stride_bytes;
  RETURN_IF_ERROR(CudaStatus(LaunchChase(start, result.warm_loads, groups, group_cycles.as<uint64_t>(),
                                         summary.as<uint64_t>(), nullptr),
                             "chase launch"));
  RETURN_IF_ERROR(CudaStatus(cudaDeviceSynchronize(), "chase"));

  RETURN_IF_ERROR(SummarizeChase(groups, group_cycles, summary, &result));
  return result;
}

absl::StatusOr<LatencyResult> MeasureSharedLatency(int ordinal) {
  RETURN_IF_ERROR(CudaStatus(cudaSetDevice(ordinal), "cudaSetDevice"));
  LatencyResult result;
  result.footprint_bytes = kSharedChaseNodes * static_cast<int64_t>(sizeof(uint32_t));
  result.stride_bytes = kSharedChaseStride * static_cast<int64_t>(sizeof(uint32_t));
  result.warm_loads = kSharedChaseNodes;
  const int groups = static_cast<int>(kTimedChaseLoads / kChaseGroup);
  result.timed_loads = int64_t{groups} * kChaseGroup;
  result.group_loads = kChaseGroup;
  DeviceMemory group_cycles, summary;
  RETURN_IF_ERROR(group_cycles.Allocate(groups * static_cast<int64_t>(sizeof(uint64_t)), "group cycles"));
  RETURN_IF_ERROR(summary.Allocate(kChaseSummarySlots * sizeof(uint64_t), "chase summary"));
  RETURN_IF_ERROR(CudaStatus(LaunchSharedChase(groups, group_cycles.as<uint64_t>(), summary.as<uint64_t>(), nullptr),
                             "shared chase launch"));
  RETURN_IF_ERROR(CudaStatus(cudaDeviceSynchronize(), "shared chase"));
  RETURN_IF_ERROR(SummarizeChase(groups, group_cycles, summary, &result));
  return result;
}

absl::StatusOr<BandwidthResult> MeasureReadBandwidth(int ordinal, int64_t footprint_bytes) {
  if (footprint_bytes < kMinBandwidthFootprint || footprint_bytes % 16 != 0) {
    return absl::InvalidArgumentError(absl::StrCat("bandwidth: footprint_bytes ", footprint_bytes,
                                                   " must be at least 1 MiB and a multiple of 16"));
  }
  RETURN_IF_ERROR(CudaStatus(cudaSetDevice(ordinal), "cudaSetDevice"));
  int sms = 0, max_threads_per_sm = 0;
  RETURN_IF_ERROR(CudaStatus(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ordinal),
                             "cudaDevAttrMultiProcessorCount"));
  RETURN_IF_ERROR(CudaStatus(
      cudaDeviceGetAttribute(&max_threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, ordinal),
      "cudaDevAttrMaxThreadsPerMultiProcessor"));
  const int64_t vectors = footprint_bytes / 16;
  DeviceMemory buffer, sink;
  RETURN_IF_ERROR(buffer.Allocate(footprint_bytes, "bandwidth buffer"));
  RETURN_IF_ERROR(sink.Allocate(int64_t{sms} * max_threads_per_sm * static_cast<int64_t>(sizeof(uint32_t)),
                                "bandwidth sink"));
  RETURN_IF_ERROR(CudaStatus(cudaMemset(buffer.as<void>(), 0x5a, static_cast<size_t>(footprint_bytes)),
                             "cudaMemset"));
  Events events;
  RETURN_IF_ERROR(events.Create());
  auto time_ms = [&](int passes, int blocks, int threads) -> absl::StatusOr<double> {
    RETURN_IF_ERROR(CudaStatus(cudaEventRecord(events.start()), "cudaEventRecord"));
    RETURN_IF_ERROR(CudaStatus(
        LaunchStreamRead(buffer.as<void>(), vectors, passes, blocks, threads, sink.as<uint32_t>(), nullptr),
        "stream read launch"));
    RETURN_IF_ERROR(CudaStatus(cudaEventRecord(events.stop()), "cudaEventRecord"));
    RETURN_IF_ERROR(CudaStatus(cudaEventSynchronize(events.stop()), "stream read"));
    float ms = 0;
    RETURN_IF_ERROR(CudaStatus(cudaEventElapsedTime(&ms, events.start(), events.stop()), "cudaEventElapsedTime"));
    return static_cast<double>(ms);
  };

  // Threads per block x blocks per SM, each filling the SM's thread slots or half of them.
  struct Shape {
    int threads, blocks_per_sm;
  };
  std::vector<Shape> shapes;
  for (int threads : {256, 512, 1024}) {
    for (int resident : {max_threads_per_sm, max_threads_per_sm / 2}) {
      if (threads <= resident) shapes.push_back({threads, resident / threads});
    }
  }
  BandwidthResult result;
  result.footprint_bytes = footprint_bytes;
  result.trials = kBandwidthTrials;
  for (const Shape& shape : shapes) {
    const int blocks = sms * shape.blocks_per_sm;
    // One untimed pass (loads the L2 for a small footprint), then grow the pass count until
    // a launch lasts kMinTrialMs, so launch overhead and clock ramp-up do not count.
    int passes = 1;
    ASSIGN_OR_RETURN(double ms, time_ms(passes, blocks, shape.threads));
    while (true) {
      ASSIGN_OR_RETURN(ms, time_ms(passes, blocks, shape.threads));
      if (ms >= kMinTrialMs) break;
      double grow = std::clamp(1.25 * kMinTrialMs / std::max(ms, 1e-3), 2.0, 1000.0);
      if (passes * grow > 1e8) return absl::InternalError("bandwidth: pass count does not converge");
      passes = static_cast<int>(std::ceil(passes * grow));
    }
    std::vector<double> trial_gbps;
    std::vector<double> trial_ms;
    const double bytes = static_cast<double>(footprint_bytes) * passes;
    for (int t = 0; t < kBandwidthTrials; ++t) {
      ASSIGN_OR_RETURN(double trial, time_ms(passes, blocks, shape.threads));
      trial_ms.push_back(trial);
      trial_gbps.push_back(bytes / (trial * 1e-3) / 1e9);
    }
    ++result.shapes_tried;
    double median = Median(trial_gbps);
    if (median > result.gbps) {
      result.gbps = median;
      result.best_trial_gbps = *std::max_element(trial_gbps.begin(), trial_gbps.end());
      result.blocks = blocks;
      result.threads = shape.threads;
      result.bytes_per_trial = static_cast<int64_t>(bytes);
      result.trial_ms = Median(trial_ms);
    }
  }
  return result;
}

}  // namespace scratchsim::cuda
