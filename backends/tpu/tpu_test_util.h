// Test helper for backends/tpu (only *_test.cc files include it): a shipped Pallas example
// through the analysis pipeline as `simulate` runs it (tests that include it link tpu_front_end).
#ifndef SCRATCHSIM_BACKENDS_TPU_TPU_TEST_UTIL_H_
#define SCRATCHSIM_BACKENDS_TPU_TPU_TEST_UTIL_H_

#include <string>
#include <vector>

#include "sim/pipeline.h"
#include "sim/status_macros.h"
#include "sim/test_util.h"

namespace scratchsim::testing {

// The analysis pipeline (sim/pipeline) on `source`, lowered by the registered TPU front end.
inline absl::StatusOr<Report> SimulatePallas(const KernelGraph& source, const std::string& device_name,
                                             const std::vector<std::string>& overrides = {}) {
  const DeviceModel device = ShippedDevice(device_name);
  Kernel kernel;
  kernel.graph = source;
  kernel.origin = source.name();
  ASSIGN_OR_RETURN(kernel, LowerKernel(std::move(kernel), device));
  ASSIGN_OR_RETURN(CompiledKernel compiled, CompileKernel(std::move(kernel), overrides));
  return AnalyzeKernel(compiled, device, AnalysisOptions());
}

inline absl::StatusOr<Report> SimulatePallas(const std::string& example, const std::string& device_name,
                                             const std::vector<std::string>& overrides = {}) {
  return SimulatePallas(ExampleGraph(example), device_name, overrides);
}

}  // namespace scratchsim::testing

#endif  // SCRATCHSIM_BACKENDS_TPU_TPU_TEST_UTIL_H_
