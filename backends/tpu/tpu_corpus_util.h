// Test helper for backends/tpu (only *_test.cc files include it): reads the recorded libtpu
// oracle files (tests/data/tpu/*.jsonl.gz: one JSON object a line) without libtpu or Python.
#ifndef SCRATCHSIM_BACKENDS_TPU_TPU_CORPUS_UTIL_H_
#define SCRATCHSIM_BACKENDS_TPU_TPU_CORPUS_UTIL_H_

#include <zlib.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "google/protobuf/struct.pb.h"

namespace scratchsim {

using google::protobuf::Struct;
using google::protobuf::Value;

// The lines of a .jsonl.gz file (none when it cannot be opened).
inline std::vector<std::string> ReadGzipLines(const std::string& path) {
  std::vector<std::string> lines;
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) return lines;
  std::string current;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof(buf))) > 0) {
    for (int i = 0; i < n; ++i) {
      if (buf[i] == '\n') {
        lines.push_back(std::move(current));
        current.clear();
      } else {
        current.push_back(buf[i]);
      }
    }
  }
  if (!current.empty()) lines.push_back(std::move(current));
  gzclose(f);
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
  gzFile f = gzopen((std::string(SCRATCHSIM_SOURCE_DIR) + "/tests/data/tpu/" + name).c_str(), "rb");
  if (f == nullptr) return false;
  gzclose(f);
  return true;
}

}  // namespace scratchsim

#endif  // SCRATCHSIM_BACKENDS_TPU_TPU_CORPUS_UTIL_H_
