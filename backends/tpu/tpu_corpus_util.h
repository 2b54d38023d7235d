// Test helper for backends/tpu (only *_test.cc files include it): reads the recorded libtpu
// oracle files (tests/data/tpu/*.jsonl.gz: one JSON object a line) without libtpu or Python.
#ifndef SCRATCHSIM_BACKENDS_TPU_TPU_CORPUS_UTIL_H_
#define SCRATCHSIM_BACKENDS_TPU_TPU_CORPUS_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/struct.pb.h"
#include "sim/test_data.h"

namespace scratchsim {

using google::protobuf::Struct;
using google::protobuf::Value;

// The lines of a .jsonl.gz file (none when it cannot be opened: the tests that read one require
// it first, SCRATCHSIM_REQUIRE_TEST_DATA).
inline std::vector<std::string> ReadGzipLines(const std::string& path) {
  absl::StatusOr<std::string> text = testing::ReadMaybeGzipped(path);
  if (!text.ok()) return {};
  std::vector<std::string> lines = absl::StrSplit(*text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

inline const Value* Field(const Struct& s, const std::string& name) {
  auto it = s.fields().find(name);
  return it == s.fields().end() ? nullptr : &it->second;
}
inline std::string Str(const Struct& s, const std::string& name) {
  const Value* v = Field(s, name);
  return v != nullptr && v->has_string_value() ? v->string_value() : "";
}
inline int64_t Num(const Struct& s, const std::string& name) {
  const Value* v = Field(s, name);
  return v != nullptr && v->has_number_value() ? static_cast<int64_t>(v->number_value()) : 0;
}
inline const Struct* Sub(const Struct& s, const std::string& name) {
  const Value* v = Field(s, name);
  return v != nullptr && v->has_struct_value() ? &v->struct_value() : nullptr;
}

// The recorded file tests/data/tpu/<name> is in this checkout.
inline bool HaveTpuData(const std::string& name) {
  return testing::MissingTestData({"tests/data/tpu/" + name}).empty();
}

}  // namespace scratchsim

#endif  // SCRATCHSIM_BACKENDS_TPU_TPU_CORPUS_UTIL_H_
