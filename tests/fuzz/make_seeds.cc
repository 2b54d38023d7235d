// Writes the seed corpora of the fuzz targets from the shipped inputs (tests/fuzz/run.sh calls
// it): graphs as text, JSON and binary, devices, the graphs' expressions, planner specs, models
// that inherit (parent and child), command lines with output files, and the timing files of
// tests/fuzz/seeds/calibrate (the first rows of the sweeps in tests/data/planner).
// Usage: make_seeds SOURCE_DIR OUT_DIR (one subdirectory per target; TTGIR seeds come from run.sh).
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
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

std::string Text(const fs::path& path) {
  auto text = ReadFileToString(path.string());
  return text.ok() ? *text : "";
}

// Parent and child models, cut by each marker device_inherit_fuzzer reads.
void WriteInheritSeeds(const fs::path& source, const fs::path& dir) {
  const std::string h100 = Text(source / "models/devices/h100.textproto");
  const std::string mine = "name: \"mine\"\ninherits: \"h100\"\nlimits { num_cores: 100 }\n";
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {h100, Text(source / "models/devices/h200.textproto")},
      {h100, Text(source / "tests/data/bad/device_inherits_h100_warp_size_0.textproto")},
      {h100, Text(source / "tests/data/bad/device_inherits_h100_smem_capacity_0.textproto")},
      {mine, "name: \"child\"\ninherits: \"mine\"\nperformance { clock_mhz: 1500 }\n"},
      {mine, "name: \"mine_calibrated\"\ninherits: \"mine\"\nperformance { clock_mhz: 1700 peak { dtype: \"f16\" "
             "tflops: 900 } }\nconfig_residuals { graph: \"gemm\" compute_dtype: \"f16\" sets: \"BLOCK_M=64\" "
             "factor: 1.1 rows: 2 }\n"},
  };
  int n = 0;
  for (const auto& [parent, child] : pairs) {
    for (const char* marker : {"\n#child\n", "\n#model\n", "\n#calibration\n"}) {
      Write(dir / absl::StrCat("pair", n++), parent + marker + child);
    }
  }
}

// Command lines (a word a line) over the files output_paths_fuzzer makes.
void WriteOutputPathSeeds(const fs::path& dir) {
  const std::vector<std::string> lines = {
      "--device\nh100\n--graph\ng.pbtxt\n--timeline\nout.svg",
      "--graph\ng.pbtxt\n--timeline\ng.pbtxt",
      "--graph=g.pbtxt\n--trace=hard.pbtxt",
      "--graph\ng.pbtxt\n--trace\nsym.pbtxt\n--timeline\nsymsym.svg",
      "--timeline\nto_new.svg\n--trace\nnew.svg",
      "--timeline\nto_d_new.svg\n--trace\nd/new.svg",
      "--timings\ng.pbtxt\n--timings\nold.svg\n--out\n./g.pbtxt",
      "--map\nd/x.svg\n--out\ndir_link/x.svg",
      "--timeline\nfifo",
      "--out\nloop",
      "--out\ndangling.svg",
      "--graph\nold.svg\n--timeline\nold_link.svg",
      "--graph\nd/up.pbtxt\n--map\ng.pbtxt",
      "--timeline\nd\n--help",
  };
  for (size_t i = 0; i < lines.size(); ++i) Write(dir / absl::StrCat("argv", i), lines[i]);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: make_seeds SOURCE_DIR OUT_DIR\n");
    return 2;
  }
  const fs::path source = argv[1], out = argv[2];
  for (const char* target : {"graph_loader", "simulate", "device_loader", "expr", "planner", "device_inherit",
                             "output_paths", "calibrate"}) {
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
  WriteInheritSeeds(source, out / "device_inherit");
  WriteOutputPathSeeds(out / "output_paths");
  for (const auto& entry : fs::directory_iterator(source / "tests/fuzz/seeds/calibrate")) {
    fs::copy_file(entry.path(), out / "calibrate" / entry.path().filename(), fs::copy_options::overwrite_existing);
  }
  return 0;
}
