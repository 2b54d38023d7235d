// Test helper for backends/tpu (only *_test.cc files include it): a shipped Pallas example
// lowered, simulated by the fit engine and worded as XLA words it, as `simulate` does.
#ifndef SCRATCHSIM_BACKENDS_TPU_TPU_TEST_UTIL_H_
#define SCRATCHSIM_BACKENDS_TPU_TPU_TEST_UTIL_H_

#include <string>
#include <vector>

#include "backends/tpu/pallas_lowering.h"
#include "backends/tpu/xla_verdict.h"
#include "sim/simulator.h"
#include "sim/status_macros.h"
#include "sim/test_util.h"

namespace scratchsim::testing {

inline absl::StatusOr<Report> SimulatePallas(const KernelGraph& source, const std::string& device_name,
                                             const std::vector<std::string>& overrides = {}) {
  DeviceModel device = ShippedDevice(device_name);
  ASSIGN_OR_RETURN(PallasLowering lowered, LowerPallas(source, device));
  ASSIGN_OR_RETURN(CompiledGraph compiled, CompileGraph(lowered.graph, source.name()));
  ASSIGN_OR_RETURN(std::vector<int64_t> values, BindParameters(compiled, overrides));
  ASSIGN_OR_RETURN(Report report, Simulate(compiled, device, values, SimulateOptions{}));
  RETURN_IF_ERROR(WordTpuReport(source, lowered, device, &report));
  return report;
}

inline absl::StatusOr<Report> SimulatePallas(const std::string& example, const std::string& device_name,
                                             const std::vector<std::string>& overrides = {}) {
  return SimulatePallas(ExampleGraph(example), device_name, overrides);
}

}  // namespace scratchsim::testing

#endif  // SCRATCHSIM_BACKENDS_TPU_TPU_TEST_UTIL_H_
