// Compares the importer's prediction with Triton 3.6's own metadata.shared for every fixture
// in tests/data/triton (made by bench/triton/make_fixtures.py on the GPU machine).
#include <cstdlib>
#include <limits>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "backends/triton/ttgir_allocation.h"
#include "backends/triton/ttgir_import.h"
#include "gtest/gtest.h"

namespace scratchsim::triton {
namespace {

struct Fixture {
  std::string id;
  int target = 0;
  int64_t shared = 0;
  std::string kernel;
};

std::vector<Fixture> ReadExpected() {
  std::ifstream in(std::string(SCRATCHSIM_SOURCE_DIR) + "/tests/data/triton/expected.tsv");
  std::vector<Fixture> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f = absl::StrSplit(line, '\t');
    if (f.size() < 5) continue;
    out.push_back({f[0], std::stoi(f[1]), std::stoll(f[2]), f[4]});
  }
  return out;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(TtgirFixturesTest, MatchesTritonSharedMemory) {
  std::vector<Fixture> fixtures = ReadExpected();
  ASSERT_GE(fixtures.size(), 150u);
  const bool verbose = std::getenv("TTGIR_VERBOSE") != nullptr;
  int matched = 0;
  std::map<std::string, std::pair<int, int>> per_kernel;
  for (const Fixture& f : fixtures) {
    std::string path = std::string(SCRATCHSIM_BINARY_DIR) + "/triton_fixtures/" + f.id + ".ttgir";
    std::string text = ReadFile(path);
    ASSERT_FALSE(text.empty()) << path;
    auto plan = PlanTtgir(text, f.id);
    ASSERT_TRUE(plan.ok()) << plan.status();
    auto& pk = per_kernel[f.kernel + "/sm" + std::to_string(f.target)];
    ++pk.second;
    if (plan->allocation.shared == f.shared) {
      ++matched;
      ++pk.first;
    } else if (verbose) {
      std::cout << "MISMATCH " << f.id << " triton=" << f.shared
                << " ours=" << plan->allocation.shared << "\n";
      for (size_t i = 0; i < plan->buffers.size(); ++i) {
        const auto& b = plan->buffers[i];
        std::cout << "   " << b.name << " " << b.shape << " line " << b.line << " size "
                  << b.buffer.size << " align " << b.buffer.alignment << " live ["
                  << b.buffer.start << "," << b.buffer.end << ") @"
                  << plan->allocation.offsets[i] << " g" << b.buffer.async_group << "/" << b.buffer.async_region << "\n";
      }
    }
  }
  for (const auto& [k, v] : per_kernel) {
    std::cout << k << ": " << v.first << "/" << v.second << "\n";
  }
  const double rate = static_cast<double>(matched) / fixtures.size();
  std::cout << "exact matches: " << matched << "/" << fixtures.size() << " (" << rate * 100
            << "%)\n";
  // Every fixture is exact since the conversion scratch follows Triton's swizzling
  // (cvt_swizzling.h); docs/triton.md.
  EXPECT_EQ(matched, static_cast<int>(fixtures.size()));
}

}  // namespace
}  // namespace scratchsim::triton

namespace scratchsim::triton {
namespace {

// The KernelGraph that ImportTtgir hands the simulator keeps Triton's intervals: placing its
// buffers (live from the op that writes them to the op that reads them, inclusive) with
// TritonPlacementPolicy gives Triton's figure wherever no warp-specialized partitions force
// extra separation (which Blocks cannot express).
TEST(TtgirFixturesTest, ImportedGraphKeepsTritonIntervals) {
  std::ifstream in(std::string(SCRATCHSIM_SOURCE_DIR) + "/tests/data/triton/expected.tsv");
  std::string line;
  int same = 0, compared = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f = absl::StrSplit(line, '\t');
    std::string text = ReadFile(std::string(SCRATCHSIM_BINARY_DIR) + "/triton_fixtures/" + f[0] + ".ttgir");
    auto plan = PlanTtgir(text, f[0]);
    auto graph = ImportTtgir(text, f[0]);
    ASSERT_TRUE(plan.ok() && graph.ok()) << f[0];
    bool async = false;
    for (const auto& b : plan->buffers) async |= b.buffer.async_group >= 0;
    if (async) continue;
    std::map<std::string, int> op_index;
    for (int i = 0; i < graph->ops_size(); ++i) {
      for (const auto& w : graph->ops(i).writes()) op_index.emplace("w" + w, i);
      for (const auto& r : graph->ops(i).reads()) op_index["r" + r] = i;
    }
    // One graph buffer per planned buffer, in plan order (sizes as shapes or raw bytes alike).
    ASSERT_EQ(graph->buffers_size(), static_cast<int>(plan->buffers.size())) << f[0];
    std::vector<Block> blocks;
    for (int i = 0; i < graph->buffers_size(); ++i) {
      const Buffer& b = graph->buffers(i);
      blocks.push_back({plan->buffers[i].buffer.size, std::stoll(b.alignment()), op_index["w" + b.name()],
                        op_index["r" + b.name()]});
    }
    auto placed = TritonPlacementPolicy().Place(blocks);
    ASSERT_TRUE(placed.ok()) << placed.status();
    ++compared;
    if (placed->peak == plan->allocation.shared) ++same;
    else std::cout << "graph path differs: " << f[0] << " " << placed->peak << " vs "
                   << plan->allocation.shared << "\n";
  }
  std::cout << "graph path equals the plan on " << same << "/" << compared << "\n";
  EXPECT_EQ(same, compared);
}

}  // namespace
}  // namespace scratchsim::triton

namespace scratchsim::triton {
namespace {

// Every buffer of the plan (size, alignment, interval, warp-specialization region, offset) and
// the total, as one line per fixture: the whole prediction, not only metadata.shared.
std::string PlanLine(const std::string& id, const SharedMemoryPlan& plan) {
  std::string line = absl::StrCat(id, "\t", plan.allocation.shared, "\t", plan.total_warps, "\t");
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const TritonBuffer& b = plan.buffers[i].buffer;
    const std::string end = b.end == std::numeric_limits<uint64_t>::max() ? "inf" : absl::StrCat(b.end);
    absl::StrAppend(&line, i ? " " : "", static_cast<int>(plan.buffers[i].kind), ":", b.size, "/",
                    b.alignment, "@", plan.allocation.offsets[i], "[", b.start, ",", end, ")g",
                    b.async_group, ".", b.async_region, ":L", plan.buffers[i].line);
  }
  return line;
}

// A change to the parser or planner must not move a single byte unless it means to: every
// fixture's full plan is compared with the recorded one (ttgir_predictions.tsv, written by running
// this test with TTGIR_WRITE_PREDICTIONS=<path>). A change that does mean to re-records it and
// says, in docs/validation/triton-history.md, which fixtures moved and why.
TEST(TtgirFixturesTest, PlansEqualRecordedPredictions) {
  const std::string golden_path =
      std::string(SCRATCHSIM_SOURCE_DIR) + "/backends/triton/ttgir_predictions.tsv";
  std::vector<std::string> lines;
  for (const Fixture& f : ReadExpected()) {
    std::string text =
        ReadFile(std::string(SCRATCHSIM_BINARY_DIR) + "/triton_fixtures/" + f.id + ".ttgir");
    auto plan = PlanTtgir(text, f.id);
    ASSERT_TRUE(plan.ok()) << plan.status();
    lines.push_back(PlanLine(f.id, *plan));
  }
  if (const char* out = std::getenv("TTGIR_WRITE_PREDICTIONS")) {
    std::ofstream o(out);
    o << "# id\tshared\ttotal_warps\tbuffers kind:size/align@offset[start,end)g<group>.<region>:L<line>\n";
    for (const std::string& l : lines) o << l << "\n";
    GTEST_SKIP() << "wrote " << lines.size() << " predictions to " << out;
  }
  std::ifstream in(golden_path);
  ASSERT_TRUE(in) << golden_path;
  std::vector<std::string> golden;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != '#') golden.push_back(line);
  }
  ASSERT_EQ(golden.size(), lines.size());
  int differ = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i] != golden[i]) {
      ++differ;
      ADD_FAILURE() << "prediction changed:\n  recorded " << golden[i] << "\n  now      " << lines[i];
    }
  }
  EXPECT_EQ(differ, 0);
}

}  // namespace
}  // namespace scratchsim::triton

namespace scratchsim::triton {
namespace {

// Which layout conversions go through shared memory, buffer by buffer: Triton's own allocation
// pass (alloc.tar.gz, `allocation.offset` on a ttg.convert_layout) against the plan's conversion
// scratch, per fixture.
TEST(TtgirFixturesTest, ConversionsWithScratchAreTritons) {
  int compared = 0;
  for (const Fixture& f : ReadExpected()) {
    const std::string ttgir = ReadFile(std::string(SCRATCHSIM_BINARY_DIR) + "/triton_fixtures/" + f.id + ".ttgir");
    const std::string alloc = ReadFile(std::string(SCRATCHSIM_BINARY_DIR) + "/triton_alloc/" + f.id + ".alloc.mlir");
    ASSERT_FALSE(alloc.empty()) << f.id;
    int triton = 0;
    for (size_t p = alloc.find("ttg.convert_layout %"); p != std::string::npos;
         p = alloc.find("ttg.convert_layout %", p + 1)) {
      const size_t eol = alloc.find('\n', p);
      if (alloc.substr(p, eol - p).find("{allocation.offset") != std::string::npos) ++triton;
    }
    auto plan = PlanTtgir(ttgir, f.id);
    ASSERT_TRUE(plan.ok()) << plan.status();
    int ours = 0;
    for (const SharedBuffer& b : plan->buffers) ours += b.op == "ttg.convert_layout";
    EXPECT_EQ(ours, triton) << f.id;
    ++compared;
  }
  EXPECT_EQ(compared, 784);
}

}  // namespace
}  // namespace scratchsim::triton
