// Writes the seed corpora of the fuzz targets from the shipped inputs (tests/fuzz/run.sh calls
// it): graphs as text, JSON and binary, devices, the graphs' expressions, planner specs.
// Usage: make_seeds SOURCE_DIR OUT_DIR (one subdirectory per target; TTGIR seeds come from run.sh).
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "proto/device.pb.h"
#include "proto/graph.pb.h"
#include "sim/graph.h"
#include "sim/proto_io.h"

namespace fs = std::filesystem;
using namespace scratchsim;

namespace {

void Write(const fs::path& path, const std::string& contents) {
  std::ofstream(path, std::ios::binary) << contents;
}

std::vector<std::string> Expressions(const KernelGraph& graph) {
  std::vector<std::string> out;
  auto add = [&out](const std::string& text) {
    if (!text.empty()) out.push_back(text);
  };
  for (const Buffer& b : graph.buffers()) {
    for (const std::string& d : b.shape()) add(d);
    add(b.size_bytes());
    add(b.copies());
    add(b.alignment());
  }
  for (const Requirement& r : graph.requirements()) add(r.expr());
  for (const Loop& l : graph.loops()) {
    add(l.trip_count());
    add(l.num_stages());
  }
  add(graph.launch().num_warps());
  add(graph.launch().registers_per_thread());
  add(graph.flops());
  add(graph.global_bytes());
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: make_seeds SOURCE_DIR OUT_DIR\n");
    return 2;
  }
  const fs::path source = argv[1], out = argv[2];
  for (const char* target : {"graph_loader", "simulate", "device_loader", "expr", "planner"}) {
    fs::create_directories(out / target);
  }
  std::vector<fs::path> graphs;
  for (const fs::path dir : {source / "models/graphs", source / "tests/data/reliability"}) {
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.path().extension() == ".pbtxt") graphs.push_back(entry.path());
    }
  }
  int expr_count = 0;
  for (const fs::path& path : graphs) {
    auto text = ReadFileToString(path.string());
    if (!text.ok()) continue;
    const std::string stem = path.stem().string();
    Write(out / "graph_loader" / (stem + ".pbtxt"), *text);
    Write(out / "simulate" / (stem + ".pbtxt"), *text);
    KernelGraph graph;
    if (!ParseProto(*text, ProtoFormat::kText, path.string(), &graph).ok()) continue;
    for (ProtoFormat format : {ProtoFormat::kJson, ProtoFormat::kBinary}) {
      auto serialized = SerializeProto(graph, format);
      if (serialized.ok()) Write(out / "graph_loader" / (stem + (format == ProtoFormat::kJson ? ".json" : ".pb")), *serialized);
    }
    // Values for A, B, BLOCK_M, NUM_STAGES, WARP_SIZE (8 bytes each) after the expression.
    const int64_t values[5] = {4096, 128, 128, 3, 32};
    for (const std::string& e : Expressions(graph)) {
      Write(out / "expr" / absl::StrCat("e", expr_count++), e + "\n" + std::string(reinterpret_cast<const char*>(values), sizeof(values)));
    }
    std::string specs;
    for (const Parameter& p : graph.parameters()) {
      if (p.problem_size() || p.max() <= 0) continue;
      absl::StrAppend(&specs, p.name(), "=", p.min(), "..", p.max(), p.power_of_two() ? ":pow2" : "", "\n");
    }
    for (char which = 0; which < 3; ++which) Write(out / "planner" / absl::StrCat(stem, "_", int(which)), std::string(1, which) + specs);
  }
  for (const auto& entry : fs::directory_iterator(source / "models/devices")) {
    if (entry.path().extension() == ".textproto") {
      auto text = ReadFileToString(entry.path().string());
      if (text.ok()) Write(out / "device_loader" / entry.path().filename(), *text);
    }
  }
  return 0;
}
