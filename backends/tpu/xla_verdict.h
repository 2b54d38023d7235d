// XLA's words for the fit engine's TPU verdicts: the RESOURCE_EXHAUSTED messages XLA prints, the
// per-allocation breakdown, and fixes in Pallas terms (CompilerParams, block shapes). Words only.
#ifndef SCRATCHSIM_BACKENDS_TPU_XLA_VERDICT_H_
#define SCRATCHSIM_BACKENDS_TPU_XLA_VERDICT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "backends/tpu/pallas_lowering.h"
#include "proto/device.pb.h"
#include "proto/graph.pb.h"
#include "proto/report.pb.h"

namespace scratchsim {

// Bytes the way XLA's TPU messages print them: "19.85M", "64.0K", "512B" (binary units).
std::string XlaBytes(int64_t bytes);

// The highest scoped VMEM limit a kernel may ask for on `device`: its vmem space's
// max_scoped_limit_bytes, else its capacity per core; 0 without a vmem space.
int64_t MaxScopedVmemLimit(const DeviceModel& device);

// "%name = bf16[2048,4096]{1,0:T(8,128)(2,1)} custom-call(x, y), custom_call_target=..." for the
// pallas_call of `source`, with the extents the engine evaluated (`report`).
std::string XlaCustomCallString(const KernelGraph& source, const Report& report, const DeviceModel& device);

// "RESOURCE_EXHAUSTED: Ran out of memory in memory space vmem while allocating on stack for
// <custom call>. Scoped allocation with size 48.00M and limit 16.00M exceeded scoped vmem limit
// by 32.00M."
std::string XlaScopedVmemVerdict(absl::string_view custom_call, int64_t required, int64_t limit);

// "RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space vmem.
// Used 32.42M of 16.00M vmem. Exceeded vmem capacity by 16.42M."
std::string XlaVmemCapacityVerdict(int64_t used, int64_t capacity);

// "RESOURCE_EXHAUSTED: Allocation (size=33554432) would exceed memory (size=16777216) :: x (input,
// 2 buffers of 16.00M)": one window or scratch buffer larger than the whole VMEM, which XLA
// places before register allocation (v4, whose default scoped limit is the whole VMEM).
std::string XlaAllocationVerdict(const PallasAllocation& allocation, int64_t capacity);

// One line per allocation: "x (input, vmem): 2 x 16.00M = 32.00M bf16[1,2048,4096]".
std::vector<std::string> FootprintBreakdown(const PallasFootprint& footprint);

// Rewrites the engine's VMEM and SMEM violations of `report` (a Simulate of the lowering of
// `source`) in XLA's words, the raise-the-limit suggestion as pltpu.CompilerParams, and adds
// the breakdown and the lowering's notes. Figures and the verdict stay the engine's.
absl::Status WordTpuReport(const KernelGraph& source, const PallasLowering& lowering, const DeviceModel& device,
                           Report* report);

}  // namespace scratchsim

#endif  // SCRATCHSIM_BACKENDS_TPU_XLA_VERDICT_H_
