// What one Pallas grid step issues on a TPU TensorCore, in VLIW bundles: the vector unit's work
// (PallasVectorWork, per generation, fitted on libtpu's static schedule) and the MXU's cycles.
#ifndef SCRATCHSIM_BACKENDS_TPU_VECTOR_COST_H_
#define SCRATCHSIM_BACKENDS_TPU_VECTOR_COST_H_

#include <string>

#include "absl/types/span.h"
#include "proto/graph.pb.h"
#include "sim/device.h"

namespace scratchsim {

// Bundles a grid step issues: a fixed cost per step plus bundles per vreg of each kind of vector
// work (below 1 where one bundle issues several such ops). bench/tpu/fit_vector_cost.py fits
// them on tests/data/tpu/bundles*.jsonl.gz; docs/tpu.md, "Compute per grid step".
struct VectorCostCoefficients {
  const char* generation;  // "v5e": the device's arch without "tpu_"
  double step;
  double loads, stores, alu, transcendental, reductions, transposes, converts;
  int fit_rows;
};

// One kind of vector work: its PallasVectorWork field, the word the basis uses for it, and its
// weight in the coefficients. The one list of them (VectorFigures) serves the estimate, its
// basis and the lowering's check of the figures.
struct VectorFigure {
  const char* field;  // pallas.body.vector.<field>
  const char* label;
  const std::string& (PallasVectorWork::*figure)() const;
  double VectorCostCoefficients::*weight;
};
absl::Span<const VectorFigure> VectorFigures();

struct StepBundles {
  // Bundles per grid step, an expression over the body's figures (graph issue_slots).
  std::string bundles;
  // Where the coefficients come from: the generation fitted, or the one assumed for this device.
  std::string basis;
  bool assumed = false;
};

// The coefficients of the device's generation; a TPU the fit has no schedule of gets those of the
// newest fitted generation not newer than it (the oldest for an older one), marked assumed.
VectorCostCoefficients CoefficientsFor(const DeviceModel& device, bool* assumed);

// The bundles of a step whose body counts its vector work: the vector bundles plus, for
// `mxu_flops` (an expression: the dots' flops with K and N padded to the MXU's edge; empty: no
// dot), the MXU's cycles at the device's `compute_dtype` peak per TensorCore and clock_mhz.
// libtpu's schedule issues the two one after the other: their sum is its step to a median of
// 0.83-1.46 per kind, where the longer of the two falls 12-47% short (docs/tpu.md).
StepBundles EstimateStepBundles(const PallasVectorWork& work, const std::string& mxu_flops,
                                const std::string& compute_dtype, const DeviceModel& device);

}  // namespace scratchsim

#endif  // SCRATCHSIM_BACKENDS_TPU_VECTOR_COST_H_
