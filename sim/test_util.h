// Shared by the tests of every module (only *_test.cc files include it): shipped devices and
// graphs from the source tree, and graphs compiled from text.
#ifndef SCRATCHSIM_SIM_TEST_UTIL_H_
#define SCRATCHSIM_SIM_TEST_UTIL_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "proto/device.pb.h"
#include "proto/graph.pb.h"
#include "sim/device.h"
#include "sim/graph.h"

namespace scratchsim::testing {

// A path inside the source tree: SourcePath("models/graphs/mlp.pbtxt").
inline std::string SourcePath(const std::string& relative) { return absl::StrCat(SCRATCHSIM_SOURCE_DIR, "/", relative); }

// A shipped device model, read from models/devices/ in the source tree.
inline DeviceModel ShippedDevice(const std::string& name) {
  absl::StatusOr<DeviceModel> device = LoadDevice(SourcePath(absl::StrCat("models/devices/", name, ".textproto")));
  EXPECT_TRUE(device.ok()) << device.status();
  return device.ok() ? *device : DeviceModel();
}

inline std::string ExampleGraphPath(const std::string& file) { return SourcePath(absl::StrCat("models/graphs/", file)); }

// A shipped example graph as it is in the file (nothing lowered).
inline KernelGraph ExampleGraph(const std::string& file) {
  absl::StatusOr<KernelGraph> graph = LoadGraph(ExampleGraphPath(file));
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? *graph : KernelGraph();
}

inline KernelGraph ParseGraphText(const std::string& text) {
  KernelGraph graph;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &graph)) << text;
  return graph;
}

// Graph text compiled as the tools compile a file called test.pbtxt.
inline CompiledGraph CompileGraphText(const std::string& text) {
  absl::StatusOr<CompiledGraph> compiled = CompileGraph(ParseGraphText(text), "test.pbtxt");
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  return compiled.ok() ? *std::move(compiled) : CompiledGraph();
}

// What CompileGraph says of graph text that must not compile.
inline absl::Status CompileGraphTextError(const std::string& text) {
  absl::StatusOr<CompiledGraph> compiled = CompileGraph(ParseGraphText(text), "test.pbtxt");
  EXPECT_FALSE(compiled.ok());
  return compiled.status();
}

inline CompiledGraph CompileExampleGraph(const std::string& file) {
  absl::StatusOr<CompiledGraph> compiled = CompileGraph(ExampleGraph(file), ExampleGraphPath(file));
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  return compiled.ok() ? *std::move(compiled) : CompiledGraph();
}

}  // namespace scratchsim::testing

#endif  // SCRATCHSIM_SIM_TEST_UTIL_H_
