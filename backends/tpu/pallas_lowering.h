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

namespace scratchsim {

// Memory-space names the lowering emits; they match the TPU device models.
inline constexpr char kVmemSpace[] = "vmem";
inline constexpr char kTpuSmemSpace[] = "tpu_smem";

// Expands graph.pallas into buffers (one per block, scratch, prefetch operand, spill estimate)
// and one op running over the grid; the result has no pallas field. Block buffers live in
// "vmem" with INSTRUCTION scope and copies 2 (Mosaic's double buffering), 1 when the index
// map reads only extent-1 grid axes (or none), n for Buffered(n); their last two dims are
// rounded up to the generation's tile. Buffers already in the graph are kept.
absl::StatusOr<KernelGraph> LowerPallasCall(const KernelGraph& graph, const DeviceModel& device);

// One allocation of a lowered pallas_call, evaluated for concrete parameter values.
struct PallasAllocation {
  std::string name;
  std::string kind;          // "input", "output", "scratch", "scalar prefetch", "spill", ...
  std::string space;         // "vmem" or "tpu_smem"
  Scope scope = INSTRUCTION;
  std::string dtype;         // empty for raw byte sizes
  std::vector<int64_t> shape;
  std::vector<int64_t> padded_shape;
  int64_t copies = 1;
  int64_t bytes_per_copy = 0;          // padded
  int64_t unpadded_bytes_per_copy = 0;
  int64_t total_bytes = 0;             // copies x aligned bytes per copy
};

struct PallasFootprint {
  std::vector<PallasAllocation> allocations;  // largest total first
  int64_t scoped_vmem_bytes = 0;              // instruction-scoped VMEM, all live at once
  int64_t program_vmem_bytes = 0;             // program-scoped VMEM buffers of the graph
  int64_t smem_bytes = 0;
  int64_t scoped_limit_bytes = 0;
  std::string scoped_limit_source;            // "vmem_limit_bytes", "--xla_tpu_scoped_vmem_limit_kib", "default"
  int64_t vmem_capacity_bytes = 0;
  int64_t smem_capacity_bytes = 0;
  int64_t semaphores = 0;
  std::vector<std::string> notes;
};

// Lowers `graph` and evaluates every allocation with `values` (one per graph.parameters entry,
// in order; empty: the defaults).
absl::StatusOr<PallasFootprint> ComputePallasFootprint(const KernelGraph& graph,
                                                       const DeviceModel& device,
                                                       absl::Span<const int64_t> values = {});

}  // namespace scratchsim

#endif  // SCRATCHSIM_BACKENDS_TPU_PALLAS_LOWERING_H_
