#include "backends/tpu/vector_cost.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "backends/tpu/tpu_tiling.h"

namespace scratchsim {
namespace {

// Fitted by bench/tpu/fit_vector_cost.py (non-negative least squares on the relative error) on the
// kernels without a dot or a rolled loop whose (kind, params) hash is even, from libtpu 0.0.42.1's
// static schedules (tests/data/tpu/bundles*.jsonl.gz, recorded as tests/data/tpu/README.md says); the odd half judges it
// (docs/tpu.md, "Compute per grid step").
constexpr VectorCostCoefficients kTable[] = {
    {"v4", 72.59, 0.4517, 0, 0.7912, 1.281, 0.4826, 2.553, 0.09024, 27},
    {"v5e", 56, 0, 0.6845, 0.2704, 0.4498, 0.3528, 1.796, 0, 27},
    {"v5p", 77.28, 0, 0.6788, 0.2872, 0.4457, 0.3478, 1.827, 0, 27},
    {"v6e", 76.33, 0, 0.2721, 0.2869, 0.3595, 0.3602, 0.9709, 0.1072, 39},
    {"v7x", 76.65, 0, 0.2671, 0.2913, 0.3601, 0.36, 0.9937, 0.111, 39},
};

int GenerationNumber(const char* generation) { return generation[1] - '0'; }

using W = VectorCostCoefficients;
using V = PallasVectorWork;
constexpr VectorFigure kFigures[] = {
    {"loads", "load", &V::loads, &W::loads},
    {"stores", "store", &V::stores, &W::stores},
    {"alu", "ALU", &V::alu, &W::alu},
    {"transcendental", "transcendental", &V::transcendental, &W::transcendental},
    {"reductions", "reduction", &V::reductions, &W::reductions},
    {"transposes", "transpose", &V::transposes, &W::transposes},
    {"converts", "convert", &V::converts, &W::converts},
};

}  // namespace

absl::Span<const VectorFigure> VectorFigures() { return kFigures; }

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
  std::vector<std::string> terms, weights;
  for (const VectorFigure& f : kFigures) {
    const std::string& figure = (work.*f.figure)();
    const double weight = c.*f.weight;
    if (weight > 0) weights.push_back(absl::StrFormat("%s %.2f", f.label, weight));
    const int64_t per_mille = std::llround(weight * 1000);
    if (figure.empty() || figure == "0" || per_mille == 0) continue;
    terms.push_back(absl::StrCat("(", figure, ") * ", per_mille));
  }
  const int64_t step = std::llround(c.step);
  out.bundles = terms.empty() ? absl::StrCat(step)
                              : absl::StrCat(step, " + cdiv(", absl::StrJoin(terms, " + "), ", 1000)");
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
