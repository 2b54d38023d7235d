// libFuzzer target, end to end: a fuzzed text KernelGraph through the fit engine and Simulate on
// the shipped devices. Checks the engine's invariants: placement never overlaps two buffers live
// together, a verdict that does not fit names a limit and a violation, a fitting one names none,
// and every suggestion with parameters fits when simulated with them.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "sim/engine.h"
#include "sim/limits.h"
#include "sim/graph.h"
#include "sim/proto_io.h"
#include "sim/simulator.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using namespace scratchsim;

void CheckReport(const CompiledGraph& graph, const DeviceModel& device, const std::vector<int64_t>& values,
                 const Report& report, const FitResult& fit) {
  if (report.fits() != fit.fits) fuzz::Fail("the report's verdict is not the engine's");
  bool fatal = false;
  for (const Violation& v : report.violations()) {
    if (!v.fatal()) continue;
    fatal = true;
    if (v.limit().empty() || v.message().empty()) fuzz::Fail("a fatal violation names no limit");
  }
  if (report.fits() && fatal) fuzz::Fail("fits with a fatal violation");
  if (!report.fits() && !fatal) fuzz::Fail(absl::StrCat("does not fit (", LimitName(fit.limit), ") but names no violation"));
  for (const Suggestion& s : report.suggestions()) {
    if (s.parameters().empty()) continue;
    std::vector<int64_t> changed = values;
    for (const ParameterValue& p : s.parameters()) {
      const int slot = graph.symbols.Find(p.name());
      if (slot < 0) fuzz::Fail(absl::StrCat("suggestion names unknown parameter ", p.name()));
      changed[slot] = p.value();
    }
    SimulateOptions options;
    options.suggest = false;
    absl::StatusOr<Report> again = SimulateOnce(graph, device, changed, options);
    if (!again.ok() || !again->fits()) {
      fuzz::Fail(absl::StrCat("suggestion '", s.text(), "' does not fit when simulated: ",
                              again.ok() ? "DOES NOT FIT" : std::string(again.status().message())));
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view contents(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<KernelGraph> parsed = ParseGraph(contents, ProtoFormat::kText, "fuzz.pbtxt");
  if (!parsed.ok() || parsed->buffers_size() > 64 || parsed->ops_size() > 256) return 0;
  absl::StatusOr<CompiledGraph> graph = CompileGraph(*std::move(parsed), "fuzz.pbtxt");
  if (!graph.ok()) return 0;
  absl::StatusOr<std::vector<int64_t>> values = BindParameters(*graph, {});
  if (!values.ok()) return 0;
  const std::vector<std::string>& names = fuzz::DeviceNames();
  const DeviceModel& device = fuzz::Device(names[size % names.size()]);
  auto engine = FitEngine::Create(*graph, device);
  if (!engine.ok()) return 0;
  FitEngine::Scratch scratch;
  scratch.keep_layout = true;
  FitResult fit;
  if (!engine->Evaluate(*values, scratch, &fit).ok()) return 0;
  fuzz::CheckLayout(*engine, scratch, fit);
  if (!fit.fits && fit.limit == Limit::kInvalid && fit.broken_requirement < 0) fuzz::Fail("invalid without a reason");
  SimulateOptions options;
  options.suggest = true;
  FitResult explained;
  absl::StatusOr<Report> report = Simulate(*graph, device, *values, options);
  if (!report.ok()) {
    if (fit.broken_requirement >= 0) return 0;  // Simulate refuses a broken requirement
    fuzz::Fail(absl::StrCat("the engine evaluated what Simulate refuses: ", report.status().message()));
  }
  CheckReport(*graph, device, *values, *report, fit);
  (void)explained;
  return 0;
}
