// Predicted-versus-measured validation: sweeps a graph's parameters, asks the simulator for
// each configuration, launches the real kernel, and compares shared bytes, launch verdict,
// blocks per SM and registers. Renders a table, a one-line summary, CSV and JSON.
#ifndef SCRATCHSIM_BACKENDS_CUDA_VALIDATE_H_
#define SCRATCHSIM_BACKENDS_CUDA_VALIDATE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/cuda/measure.h"
#include "proto/device.pb.h"
#include "proto/graph.pb.h"

namespace scratchsim::cuda {

// One `--graph FILE [--sweep P=...]... [--no-opt-in]` group.
struct ValidateJob {
  std::string graph_path;
  std::vector<std::string> sweeps;   // "P=v1,v2,..." or "P=first:last[:step]"
  std::optional<bool> opt_in;        // overrides launch.shared_memory_opt_in
};

// Expands sweeps into their cartesian product of "P=v" override lists, first sweep outermost.
// Malformed sweeps and empty ranges are InvalidArgument naming the sweep.
absl::StatusOr<std::vector<std::vector<std::string>>> ExpandSweeps(
    const std::vector<std::string>& sweeps);

// What the simulator says about one configuration.
struct Prediction {
  int threads = 0;
  int64_t static_shared_bytes = 0;
  int64_t dynamic_shared_bytes = 0;
  bool launches = false;
  std::string failing;               // resources of the fatal violations, ';'-joined
  int blocks_per_sm = 0;
  std::string limiting_factor;
  bool has_registers = false;        // the graph gives registers_per_thread
  int registers = 0;
  int64_t spill_bytes_per_thread = 0;
  // Blocks per SM when the occupancy model gets the compiler's register count instead of
  // the graph's estimate; -1 until measured.
  int blocks_per_sm_compiled_registers = -1;
  bool launches_compiled_registers = false;
  bool opt_in = true;
  ParamMap params;                   // every parameter's bound value
};

// Simulates `graph` (from `origin`) with `overrides` on `device`. `compiled_registers`
// replaces the graph's register estimate (what-if: the count ptxas chose).
absl::StatusOr<Prediction> Predict(const KernelGraph& graph, const std::string& origin,
                                   const DeviceModel& device,
                                   const std::vector<std::string>& overrides,
                                   std::optional<bool> opt_in,
                                   std::optional<int> compiled_registers);

struct ValidationRow {
  std::string graph;                 // graph name
  std::vector<std::string> overrides;
  Prediction predicted;
  Measurement measured;
  bool smem_match = false;           // static and dynamic bytes both exact
  bool launch_match = false;
  bool blocks_match = false;
  bool blocks_compiled_match = false;
  bool launch_compiled_match = false;
  bool threads_match = false;
};

// Fills the match flags of `row` from its prediction and measurement.
void CompareRow(ValidationRow& row);

struct ValidationSummary {
  int configs = 0;
  int smem_exact = 0, launch_match = 0, blocks_match = 0, blocks_compiled_match = 0;
  int launch_compiled_match = 0;
  int threads_match = 0;
  int register_rows = 0, registers_exact = 0, registers_within_8 = 0;
  double registers_mean_abs_error = 0;
  int spill_exact = 0;
  int launched = 0, correct = 0;
};

ValidationSummary Summarize(const std::vector<ValidationRow>& rows);

// "N configs: smem exact a/N, launch verdict b/N, occupancy c/N, ..."
std::string SummaryLine(const ValidationSummary& summary);
std::string RenderTable(const std::vector<ValidationRow>& rows);
std::string RenderCsv(const std::vector<ValidationRow>& rows);
std::string RenderJson(const std::vector<ValidationRow>& rows, const ValidationSummary& summary,
                       const std::string& device_description);

// Reads the measured columns of a CSV that RenderCsv wrote, so predictions can be redone
// without a GPU (`--replay`). Rows keep graph, overrides and opt-in; predictions are empty.
absl::StatusOr<std::vector<ValidationRow>> ParseMeasuredCsv(const std::string& contents,
                                                            const std::string& origin);

}  // namespace scratchsim::cuda

#endif  // SCRATCHSIM_BACKENDS_CUDA_VALIDATE_H_
