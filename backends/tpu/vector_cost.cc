#include "backends/tpu/vector_cost.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "backends/tpu/tpu_tiling.h"

namespace scratchsim {
namespace {

// Fitted by bench/tpu/fit_vector_cost.py (non-negative least squares on the relative error) on the
// kernels without a dot or a rolled loop whose (kind, params) hash is even, from libtpu 0.0.42.1's
// static schedules (tests/data/tpu/bundles*.jsonl.gz, 2026-11-26/27); the odd half judges it
// (docs/tpu.md, "Compute per grid step").
constexpr VectorCostCoefficients kTable[] = {
    {"v4", 62.76, 0, 0.7527, 0.4007, 0.8786, 0.9727, 2.318, 27},
    {"v5e", 51.22, 0, 0.851, 0.0682, 0.4457, 0.457, 1.66, 27},
    {"v5p", 72.79, 0, 0.8372, 0.08612, 0.4358, 0.4496, 1.694, 27},
    {"v6e", 74.02, 0, 0.3417, 0.195, 0.3448, 0.3969, 0.9065, 39},
    {"v7x", 74.32, 0, 0.3373, 0.199, 0.3455, 0.3967, 0.9286, 39},
};

int GenerationNumber(const char* generation) { return generation[1] - '0'; }

}  // namespace

VectorCostCoefficients CoefficientsFor(const DeviceModel& device, bool* assumed) {
  const std::string generation = TpuGeneration(device);
  for (const VectorCostCoefficients& row : kTable) {
    if (generation == row.generation) {
      *assumed = false;
      return row;
    }
  }
  // Another TPU: the newest fitted generation not newer than it, else the oldest.
  *assumed = true;
  const int number = device.tpu().generation();
  const VectorCostCoefficients* best = &kTable[0];
  for (const VectorCostCoefficients& row : kTable) {
    const int n = GenerationNumber(row.generation);
    if (n <= number && n >= GenerationNumber(best->generation)) best = &row;
  }
  return *best;
}

StepBundles EstimateStepBundles(const PallasVectorWork& work, const std::string& mxu_flops,
                                const std::string& compute_dtype, const DeviceModel& device) {
  StepBundles out;
  const VectorCostCoefficients c = CoefficientsFor(device, &out.assumed);
  // Expressions are integers: the weights in bundles per 1000 vregs, the sum rounded up.
  std::vector<std::string> terms;
  for (const auto& [figure, weight] : {std::pair<const std::string&, double>{work.loads(), c.loads},
                                       {work.stores(), c.stores},
                                       {work.alu(), c.alu},
                                       {work.transcendental(), c.transcendental},
                                       {work.reductions(), c.reductions},
                                       {work.transposes(), c.transposes}}) {
    const int64_t per_mille = std::llround(weight * 1000);
    if (figure.empty() || figure == "0" || per_mille == 0) continue;
    terms.push_back(absl::StrCat("(", figure, ") * ", per_mille));
  }
  const int64_t step = std::llround(c.step);
  out.bundles = terms.empty() ? absl::StrCat(step)
                              : absl::StrCat(step, " + cdiv(", absl::StrJoin(terms, " + "), ", 1000)");
  std::vector<std::string> weights;
  for (const auto& [name, weight] : {std::pair<const char*, double>{"load", c.loads},
                                     {"store", c.stores},
                                     {"ALU", c.alu},
                                     {"transcendental", c.transcendental},
                                     {"reduction", c.reductions},
                                     {"transpose", c.transposes}}) {
    if (weight > 0) weights.push_back(absl::StrFormat("%s %.2f", name, weight));
  }
  out.basis = absl::StrFormat("libtpu's static schedule of %s (%d kernels without a dot): %.0f a step; bundles per vreg: %s%s",
                              c.generation, c.fit_rows, c.step, absl::StrJoin(weights, ", "),
                              out.assumed ? absl::StrCat(" (assumed for ", device.name(), ": no schedule of it fitted)")
                                          : "");
  // The MXU: flops per cycle are the per-TensorCore peak over the clock (131,072 on v5e: 4 MXUs
  // of 128 x 128, 2 flops a cell).
  double peak = 0;
  for (const PeakThroughput& p : device.performance().peak()) {
    if (p.dtype() == compute_dtype) peak = p.tflops() * 1e12;
  }
  const double clock_hz = device.performance().clock_mhz() * 1e6;
  const int64_t per_cycle =
      clock_hz > 0 ? std::llround(peak / std::max(1, device.limits().num_cores()) / clock_hz) : 0;
  if (!mxu_flops.empty() && per_cycle > 0) {
    out.bundles = absl::StrCat(out.bundles, " + cdiv(", mxu_flops, ", ", per_cycle, ")");
    absl::StrAppend(&out.basis, absl::StrFormat("; plus the dots' MXU cycles at %d %s flops a cycle", per_cycle,
                                                compute_dtype));
  } else if (!mxu_flops.empty()) {
    absl::StrAppend(&out.basis, "; the dots not counted (no ", compute_dtype, " peak or clock_mhz)");
  }
  return out;
}

}  // namespace scratchsim
