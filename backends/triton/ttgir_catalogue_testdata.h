// Test-only: the CPU-compiled Triton kernel catalogue (tests/data/triton/catalogue, written by
// bench/triton/make_catalogue.py; docs/triton-fixtures.md). Each release directory holds
// index.json (one record per configuration, Triton's metadata.shared among its fields) and one
// <target>.tar.gz of <id>.ttgir, which CMake unpacks into the build tree
// (triton_catalogue/<version>/<target>/).
#ifndef SCRATCHSIM_BACKENDS_TRITON_TTGIR_CATALOGUE_TESTDATA_H_
#define SCRATCHSIM_BACKENDS_TRITON_TTGIR_CATALOGUE_TESTDATA_H_

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace scratchsim::triton {

struct CatalogueRecord {
  std::string id, kind, target, version, regime, verdict, dtype;
  int64_t shared = 0;  // Triton's metadata.shared
  int64_t tmem = 0;    // Triton's metadata.tmem_size (NVIDIA; 0 when null)
  int64_t limit = 0;   // the target's per-block limit (docs/triton-fixtures.md)
  int num_warps = 0, num_stages = 0;
  int part = 0;        // the held-out corpus's part (tests/data/triton/heldout); 0 elsewhere
  google::protobuf::Struct params, signature, attrs, constexpr_args;
  std::string out_dtype;
  std::string ttgir_path;  // empty when the configuration did not compile
};

struct CatalogueVersion {
  std::string version;
  std::vector<CatalogueRecord> records;
};

inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One release: `index` is its index.json, TTGIR files are `ttgir_dir`/<target>/<id>.ttgir.
// Records that did not compile have no ttgir_path. Empty on a read or parse error.
inline CatalogueVersion ReadCatalogueVersion(const std::string& index, const std::string& ttgir_dir) {
  CatalogueVersion out;
  google::protobuf::Struct root;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  if (!google::protobuf::util::JsonStringToMessage(ReadWholeFile(index), &root, options).ok()) return out;
  const auto& info = root.fields().at("info").struct_value().fields();
  if (auto it = info.find("triton"); it != info.end()) out.version = it->second.string_value();
  for (const auto& v : root.fields().at("records").list_value().values()) {
    const auto& f = v.struct_value().fields();
    auto str = [&](const char* k) {
      auto it = f.find(k);
      return it == f.end() ? std::string() : it->second.string_value();
    };
    auto num = [&](const char* k) {
      auto it = f.find(k);
      return it == f.end() ? 0.0 : it->second.number_value();
    };
    auto obj = [&](const char* k) {
      auto it = f.find(k);
      return it == f.end() ? google::protobuf::Struct() : it->second.struct_value();
    };
    CatalogueRecord r;
    r.id = str("id");
    r.kind = str("kind");
    r.target = str("target");
    r.version = str("version");
    r.regime = str("regime");
    r.verdict = str("verdict");
    r.dtype = str("dtype");
    r.out_dtype = str("out_dtype");
    r.shared = static_cast<int64_t>(num("shared"));
    r.tmem = static_cast<int64_t>(num("tmem"));
    r.limit = static_cast<int64_t>(num("limit"));
    r.num_warps = static_cast<int>(num("num_warps"));
    r.num_stages = static_cast<int>(num("num_stages"));
    r.part = static_cast<int>(num("part"));
    r.params = obj("params");
    r.signature = obj("signature");
    r.attrs = obj("attrs");
    r.constexpr_args = obj("constexpr_args");
    if (r.verdict != "compile_error") {
      const std::string path = ttgir_dir + "/" + r.target + "/" + r.id + ".ttgir";
      if (std::filesystem::exists(path)) r.ttgir_path = path;
    }
    out.records.push_back(std::move(r));
  }
  return out;
}

// Every release of the catalogue: tests/data/triton/catalogue/<version>/index.json with the
// TTGIR CMake unpacked. TTGIR_CATALOGUE=<dir> reads one release from <dir>/index.json and
// <dir>/<target>/*.ttgir instead (a run in progress, unpacked by hand).
inline std::vector<CatalogueVersion> ReadCatalogue() {
  std::vector<CatalogueVersion> out;
  if (const char* dir = std::getenv("TTGIR_CATALOGUE")) {
    out.push_back(ReadCatalogueVersion(std::string(dir) + "/index.json", dir));
    return out;
  }
  const std::filesystem::path root = std::filesystem::path(SCRATCHSIM_SOURCE_DIR) / "tests/data/triton/catalogue";
  std::vector<std::filesystem::path> dirs;
  for (const auto& e : std::filesystem::directory_iterator(root)) {
    if (e.is_directory() && std::filesystem::exists(e.path() / "index.json")) dirs.push_back(e.path());
  }
  std::sort(dirs.begin(), dirs.end());
  for (const auto& d : dirs) {
    CatalogueVersion v = ReadCatalogueVersion(
        (d / "index.json").string(),
        std::string(SCRATCHSIM_BINARY_DIR) + "/triton_catalogue/" + d.filename().string());
    if (v.version.empty()) v.version = d.filename().string();
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace scratchsim::triton

#endif  // SCRATCHSIM_BACKENDS_TRITON_TTGIR_CATALOGUE_TESTDATA_H_
