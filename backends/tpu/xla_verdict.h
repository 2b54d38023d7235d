// XLA-style VMEM verdicts for Pallas kernels: the RESOURCE_EXHAUSTED message XLA prints, the
// per-operand breakdown, and the fixes (vmem_limit_bytes, block shapes that fit the default).
#ifndef SCRATCHSIM_BACKENDS_TPU_XLA_VERDICT_H_
#define SCRATCHSIM_BACKENDS_TPU_XLA_VERDICT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "backends/tpu/pallas_lowering.h"
#include "proto/device.pb.h"
#include "proto/graph.pb.h"
#include "proto/report.pb.h"

namespace scratchsim {

// Bytes the way XLA's TPU messages print them: "19.85M", "64.0K", "512B" (binary units).
std::string XlaBytes(int64_t bytes);

// "%name = bf16[2048,4096]{1,0:T(8,128)(2,1)} custom-call(x, y), custom_call_target=..."
std::string XlaCustomCallString(const KernelGraph& graph, const DeviceModel& device);

// The scoped-limit verdict: "RESOURCE_EXHAUSTED: Ran out of memory in memory space vmem while
// allocating on stack for %... Scoped allocation with size 48.00M and limit 16.00M exceeded
// scoped vmem limit by 32.00M." Empty when the footprint fits.
std::string XlaVmemVerdict(const KernelGraph& graph, const DeviceModel& device,
                           const PallasFootprint& footprint);

// Program-level check: program-scoped VMEM plus the scoped limit against VMEM capacity, in the
// form "... Used 32.42M of 16.00M vmem. Exceeded vmem capacity by 16.42M." Empty when it fits.
std::string XlaVmemCapacityVerdict(const PallasFootprint& footprint);

// One line per allocation: "x  input  vmem  2 x 16.00M (bf16[2048,4096] padded from ...)".
std::vector<std::string> FootprintBreakdown(const PallasFootprint& footprint);

struct VmemFix {
  // The smallest vmem_limit_bytes that holds the scoped allocations, and whether the hardware
  // (the device's max scoped limit) allows it.
  int64_t smallest_vmem_limit_bytes = 0;
  bool limit_allowed = false;
  // Block-shape parameters (halved greedily) that fit the default scoped limit; empty if none.
  std::vector<ParameterValue> parameters;
  int64_t resulting_scoped_bytes = 0;
  bool blocks_fit_default = false;
  std::vector<std::string> block_shapes;  // "x: 1x512x4096 bf16"
};

// Searches for the fixes of `graph` (which has a pallas call) on `device`.
absl::StatusOr<VmemFix> SuggestVmemFix(const KernelGraph& graph, const DeviceModel& device);

// Rewrites the "vmem" violation of `report` (from sim's Simulate on the lowered graph) into
// XLA's wording, and adds the breakdown as notes and the fixes as suggestions. Adds a
// violation when the footprint exceeds the limit but the report has none.
absl::Status AnnotateTpuReport(const KernelGraph& original, const DeviceModel& device,
                               Report* report);

}  // namespace scratchsim

#endif  // SCRATCHSIM_BACKENDS_TPU_XLA_VERDICT_H_
