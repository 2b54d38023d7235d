// Lowers a Pallas TPU kernel (KernelGraph.pallas: grid, BlockSpecs, scratch, scalar prefetch)
// into ordinary buffers and ops, modelling what Mosaic allocates, so sim/ needs no TPU logic.
#ifndef SCRATCHSIM_BACKENDS_TPU_PALLAS_LOWERING_H_
#define SCRATCHSIM_BACKENDS_TPU_PALLAS_LOWERING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "proto/device.pb.h"
#include "proto/graph.pb.h"
#include "proto/report.pb.h"

namespace scratchsim {

// Memory-space names the lowering emits; they match the TPU device models.
inline constexpr char kVmemSpace[] = "vmem";
inline constexpr char kTpuSmemSpace[] = "tpu_smem";

// Expands graph.pallas into buffers (one per block, scratch, prefetch operand, spill estimate)
// and one op running over the grid (the launch grid too); the result has no pallas field. Block
// buffers live in "vmem" with INSTRUCTION scope and copies 2 (Mosaic's double buffering), 1 when
// the index map reads only extent-1 grid axes (or none), n for Buffered(n); their last two dims
// are rounded up to the generation's tile, and where the array shape is known a requirement
// keeps them legal for Pallas ((8, 128) multiples or the whole array). Buffers already in the
// graph are kept.
struct PallasLowering {
  KernelGraph graph;
  std::vector<std::string> notes;  // what the lowering assumed (operands left in HBM, semaphores)
  int64_t semaphores = 0;
};
absl::StatusOr<PallasLowering> LowerPallas(const KernelGraph& graph, const DeviceModel& device);
absl::StatusOr<KernelGraph> LowerPallasCall(const KernelGraph& graph, const DeviceModel& device);

// "input", "output", "scratch", "scalar prefetch", "spill", "internal scratch", "sublane replication",
// "packing temporary" or "graph buffer":
// what a lowered buffer called `name` is in the pallas_call of `source`.
std::string PallasAllocationKind(const KernelGraph& source, absl::string_view name);

// One allocation of a lowered pallas_call, as the fit engine placed it.
struct PallasAllocation {
  std::string name;
  std::string kind;          // PallasAllocationKind
  std::string space;         // "vmem" or "tpu_smem"
  std::string dtype;         // empty for raw byte sizes
  std::vector<int64_t> shape;
  std::vector<int64_t> padded_shape;
  int64_t copies = 1;
  int64_t bytes_per_copy = 0;          // padded
  int64_t total_bytes = 0;              // the copies, rounded up to the space's allocation granule
  int64_t granule_padding_bytes = 0;    // what that rounding adds
  // An estimate (register spills): the bounds of bytes_per_copy and how it was estimated.
  bool estimated = false;
  int64_t bytes_per_copy_low = 0;
  int64_t bytes_per_copy_high = 0;
  std::string basis;
};

// The engine's figures for a pallas_call, by allocation: a view of a Report, not a second
// computation of the footprint.
struct PallasFootprint {
  std::vector<PallasAllocation> allocations;  // largest total first, VMEM then SMEM
  int64_t scoped_vmem_bytes = 0;              // instruction-scoped VMEM
  // With estimated allocations: scoped VMEM with every estimate at its low / high bound, and the
  // central bytes of the estimates (scoped_vmem_bytes - estimated_bytes is known exactly).
  bool has_estimates = false;
  int64_t scoped_vmem_bytes_low = 0;
  int64_t scoped_vmem_bytes_high = 0;
  int64_t estimated_bytes = 0;
  int64_t program_vmem_bytes = 0;             // program-scoped VMEM
  int64_t smem_bytes = 0;
  int64_t scoped_limit_bytes = 0;
  std::string scoped_limit_source;            // SpaceReport.limit_name
  int64_t vmem_capacity_bytes = 0;           // what one program may use (UsableBytesPerCore)
  int64_t smem_capacity_bytes = 0;
  int64_t semaphores = 0;
  std::vector<std::string> notes;
};

// The view of `report` (a Simulate of the lowered `source`).
PallasFootprint FootprintOf(const KernelGraph& source, const Report& report, const std::vector<std::string>& notes,
                            int64_t semaphores, const DeviceModel& device);

// Lowers `graph`, evaluates it on the fit engine with `values` (one per graph.parameters entry,
// in order; missing ones: the defaults) and returns the view. For tests and tools.
absl::StatusOr<PallasFootprint> ComputePallasFootprint(const KernelGraph& graph, const DeviceModel& device,
                                                       absl::Span<const int64_t> values = {});

}  // namespace scratchsim

#endif  // SCRATCHSIM_BACKENDS_TPU_PALLAS_LOWERING_H_
