// The planner's rankings against the H100 timing sweeps recorded in tests/data/planner (the
// CUDA backend's GEMM and the Triton matmul): a model change that ranks worse fails.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "sim/compiled_registers.h"
#include "sim/device.h"
#include "sim/graph.h"
#include "sim/occupancy.h"
#include "sim/planner/planner.h"
#include "sim/planner/planner_test_util.h"
#include "sim/proto_io.h"
#include "sim/test_data.h"

namespace scratchsim {
namespace {

std::string Source(const std::string& relative) { return std::string(SCRATCHSIM_SOURCE_DIR) + "/" + relative; }

using Config = std::vector<int64_t>;                            // the swept parameters, in graph order
using Row = std::tuple<std::string, int64_t, int64_t, int64_t>;  // dtype and the three problem sizes

// Which recorded timings a judgement reads, and how they are keyed.
struct SweepFormat {
  std::vector<std::string> row_names = {"M", "N", "K"};
  std::vector<std::string> config_names = {"BLOCK_M", "BLOCK_N", "BLOCK_K", "NUM_STAGES", "NUM_WARPS"};
  // Parameters outside config_names that a timing may set: only timings that leave them out or
  // set them to this value are rows (gemm-timing --split-k adds SPLIT_K; 1 is the plain kernel).
  std::map<std::string, int64_t> fixed;
  // Only timings whose text field NAME is VALUE: the "kind" of bench/planner/sweep_workloads.py,
  // the "part" (fit, heldout) and "regime" (decode, prefill) of the workload suite.
  std::map<std::string, std::string> where;
  // Where non-empty, only rows whose row_names values are one of these.
  std::set<std::array<int64_t, 3>> only_rows;
};

// One sweep file's measured milliseconds per configuration, per (dtype, shape), and the rows its
// budget stopped in (timed on the configurations it reached: partial).
struct SweepRows {
  std::map<Row, std::map<Config, double>> times;
  std::set<Row> stopped;
};

// The rows a sweep's notes say its budget stopped in ("timing stopped at the budget during matmul
// {'M': 16, 'N': 50257, ...}", bench/planner/sweep_workloads.py), in every dtype the sweep ran.
std::set<Row> StoppedRows(const google::protobuf::Struct& root, const SweepFormat& format) {
  std::set<Row> stopped;
  const auto& fields = root.fields();
  if (!fields.contains("notes")) return stopped;
  std::vector<std::string> dtypes;
  if (fields.contains("dtypes")) {
    for (const google::protobuf::Value& d : fields.at("dtypes").list_value().values()) dtypes.push_back(d.string_value());
  }
  if (dtypes.empty()) dtypes = {"f16"};
  // The size named NAME in the note's dictionary, or -1.
  auto size_in = [](const std::string& note, const std::string& name) -> int64_t {
    const std::string key = absl::StrCat("'", name, "': ");
    const size_t at = note.find(key);
    if (at == std::string::npos) return -1;
    return std::strtoll(note.c_str() + at + key.size(), nullptr, 10);
  };
  for (const google::protobuf::Value& value : fields.at("notes").list_value().values()) {
    const std::string& note = value.string_value();
    if (note.find("timing stopped at the budget during") == std::string::npos) continue;
    const auto& n = format.row_names;
    const int64_t a = size_in(note, n[0]), b = size_in(note, n[1]), c = size_in(note, n[2]);
    if (a < 0 || b < 0 || c < 0) continue;
    for (const std::string& dtype : dtypes) stopped.insert({dtype, a, b, c});
  }
  return stopped;
}

SweepRows ReadSweep(const std::string& path, const SweepFormat& format) {
  SweepRows out;
  std::map<Row, std::map<Config, double>>& rows = out.times;
  auto json = testing::ReadTestData(path);
  EXPECT_TRUE(json.ok()) << json.status();
  if (!json.ok()) return out;
  google::protobuf::Struct root;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(*json, &root).ok()) << path;
  auto integer = [](const google::protobuf::Value& v) { return static_cast<int64_t>(std::llround(v.number_value())); };
  auto text = [](const auto& fields, const std::string& name) {
    return fields.contains(name) ? fields.at(name).string_value() : std::string();
  };
  for (const google::protobuf::Value& timing : root.fields().at("timings").list_value().values()) {
    const auto& t = timing.struct_value().fields();
    if (!t.contains("ms")) continue;
    if (std::any_of(format.where.begin(), format.where.end(),
                    [&](const auto& field) { return text(t, field.first) != field.second; })) {
      continue;
    }
    const auto& config = t.at("config").struct_value().fields();
    if (std::any_of(format.fixed.begin(), format.fixed.end(), [&](const auto& fixed) {
          return config.contains(fixed.first) && integer(config.at(fixed.first)) != fixed.second;
        })) {
      continue;
    }
    Config key;
    for (const std::string& name : format.config_names) key.push_back(integer(config.at(name)));
    const auto& n = format.row_names;
    const std::array<int64_t, 3> sizes = {integer(t.at(n[0])), integer(t.at(n[1])), integer(t.at(n[2]))};
    if (!format.only_rows.empty() && !format.only_rows.contains(sizes)) continue;
    rows[{t.at("dtype").string_value(), sizes[0], sizes[1], sizes[2]}][key] = t.at("ms").number_value();
  }
  for (const Row& row : StoppedRows(root, format)) {
    if (rows.contains(row)) out.stopped.insert(row);
  }
  return out;
}

struct Quality {
  int rows = 0;
  int top1_within_10 = 0;  // rows whose top-1 measures within 10% of the measured best
  int best_in_top5 = 0;    // rows whose ranking's first five include the configuration measuring best
  // Rows whose top 5, the first five of the planner's autotuning shortlist (PlanResult::shortlist),
  // include one within 3% of the measured best; and the same of the ranking's first five.
  int top5_within_3 = 0;
  int ranking_top5_within_3 = 0;
  std::string top1_misses;  // "sweep dtype MxNxK: top-1 1.12x the best" per row beyond 10%
  // dtype -> {rows, top-1 within 10%, best in top 5, top 5's best within 3%, the ranking's}
  std::map<std::string, std::array<int, 5>> by_dtype;
  // dtype -> rows a sweep's budget stopped in and no later sweep timed whole: judged on the
  // configurations timed (bench/planner/judge_workloads.py's "partial_rows").
  std::map<std::string, int> partial_by_dtype;
};

void PrintQuality(const char* kernel, const Quality& q) {
  for (const auto& [dtype, t] : q.by_dtype) {
    const int partial = q.partial_by_dtype.contains(dtype) ? q.partial_by_dtype.at(dtype) : 0;
    std::printf("%s %s: %d rows, top-1 within 10%% on %d, best in the top 5 on %d, top 5's best within 3%% on %d "
                "(the ranking's top 5: %d)%s\n",
                kernel, dtype.c_str(), t[0], t[1], t[2], t[3], t[4],
                partial > 0 ? absl::StrCat(" (", partial, " partial)").c_str() : "");
  }
}

// A kernel's recorded sweeps and how to plan them.
struct SweepSpec {
  std::string graph;                    // relative to the source tree
  std::vector<std::string> sweeps;      // relative to tests/data/planner
  // The sweeps resume one another (a run stopped at its budget, the next one started from the row
  // it stopped in): a row in two of them is judged once. Otherwise each sweep's rows are judged on
  // their own: the H100 sweeps time some shapes again.
  bool sweeps_resume = false;
  std::vector<std::string> space;       // --param specs
  std::map<std::string, std::vector<std::string>> sets_by_dtype;  // --set beyond M, N, K
  std::map<std::string, std::string> compute_dtype;                // per dtype; empty: the graph's
  SweepFormat format;
  std::string device = "h100";
  // A compiler's registers (a CompiledRegisters file under tests/data/planner) in place of the
  // graph's estimate; empty: the estimate.
  std::string registers;
};

// The measured times of a list's timed configurations, in the list's order.
std::vector<double> TimedInOrder(const std::map<Config, double>& measured, const std::vector<RankedConfig>& list) {
  std::vector<double> ms;
  for (const RankedConfig& config : list) {
    auto it = measured.find(config.values);
    if (it != measured.end()) ms.push_back(it->second);
  }
  return ms;
}

// Plans every (dtype, shape) row of the sweep files over `space` (empty: the graph's default
// space) and compares the ranking with the measured times.
Quality Judge(const SweepSpec& spec) {
  Quality quality;
  auto graph_proto = LoadGraph(Source(spec.graph));
  EXPECT_TRUE(graph_proto.ok()) << graph_proto.status();
  if (!graph_proto.ok()) return quality;
  auto graph = CompileGraph(*graph_proto, spec.graph);
  EXPECT_TRUE(graph.ok()) << graph.status();
  auto device = LoadDevice(spec.device);
  EXPECT_TRUE(device.ok()) << device.status();
  if (!graph.ok() || !device.ok()) return quality;
  std::shared_ptr<const CompiledRegisterTable> registers;
  if (!spec.registers.empty()) {
    const std::string path = absl::StrCat("tests/data/planner/", spec.registers);
    auto json = testing::ReadTestData(path);
    EXPECT_TRUE(json.ok()) << json.status();
    CompiledRegisters figures;
    absl::Status parsed = json.ok() ? ParseProto(*json, ProtoFormat::kJson, path, &figures) : json.status();
    EXPECT_TRUE(parsed.ok()) << parsed;
    auto table = CompiledRegisterTable::Build(*graph, *device, figures, path);
    EXPECT_TRUE(table.ok()) << table.status();
    if (!table.ok()) return quality;
    registers = std::make_shared<const CompiledRegisterTable>(*std::move(table));
  }
  // Each sweep's rows, keyed by the sweep; sweeps that resume one another share one key, so that a
  // row timed in two of them is one row with the later sweep's time of each configuration.
  std::map<std::pair<size_t, Row>, std::map<Config, double>> timed;
  std::map<std::pair<size_t, Row>, std::string> timed_in;
  // A row is partial where the last sweep that timed it stopped in it.
  std::set<std::pair<size_t, Row>> partial;
  for (size_t i = 0; i < spec.sweeps.size(); ++i) {
    const std::string& sweep = spec.sweeps[i];
    const SweepRows read = ReadSweep(absl::StrCat("tests/data/planner/", sweep), spec.format);
    for (const auto& [row, measured] : read.times) {
      const std::pair<size_t, Row> key{spec.sweeps_resume ? 0 : i, row};
      for (const auto& [config, ms] : measured) timed[key][config] = ms;
      timed_in[key] = sweep;
      if (read.stopped.contains(row)) {
        partial.insert(key);
      } else {
        partial.erase(key);
      }
    }
  }
  for (const auto& [key, measured] : timed) {
    const std::string& sweep = timed_in.at(key);
    const auto& [dtype, m, n, k] = key.second;
    std::vector<std::string> sets = spec.sets_by_dtype.at(dtype);
    // The timings kept ran at the fixed values: plan them there.
    for (const auto& [name, value] : spec.format.fixed) sets.push_back(absl::StrCat(name, "=", value));
    const std::vector<std::string>& names = spec.format.row_names;
    for (const std::string& s : {absl::StrCat(names[0], "=", m), absl::StrCat(names[1], "=", n),
                                 absl::StrCat(names[2], "=", k)}) {
      sets.push_back(s);
    }
    auto values = BindParameters(*graph, sets);
    auto axes = BuildParamSpace(*graph, spec.space, sets);
    EXPECT_TRUE(values.ok() && axes.ok()) << sweep;
    if (!values.ok() || !axes.ok()) continue;
    PlanOptions options;
    options.top_k = 100000;
    options.threads = 1;
    options.compiled_registers = registers;
    if (spec.compute_dtype.contains(dtype)) options.compute_dtype = spec.compute_dtype.at(dtype);
    auto plan = Plan(*graph, *device, *axes, *values, options);
    EXPECT_TRUE(plan.ok()) << plan.status();
    if (!plan.ok()) continue;
    // Measured times of the timed configurations, in the ranking's and in the shortlist's order.
    const std::vector<double> ranked_ms = TimedInOrder(measured, plan->top);
    const std::vector<double> shortlist_ms = TimedInOrder(measured, plan->shortlist);
    EXPECT_FALSE(ranked_ms.empty()) << sweep;
    if (ranked_ms.empty()) continue;
    double best = measured.begin()->second;
    for (const auto& [config, ms] : measured) best = std::min(best, ms);
    ++quality.rows;
    const bool top1_ok = ranked_ms[0] <= 1.10 * best;
    quality.top1_within_10 += top1_ok;
    const bool is_partial = partial.contains(key);
    quality.partial_by_dtype[dtype] += is_partial;
    if (!top1_ok) {
      absl::StrAppend(&quality.top1_misses, sweep, " ", dtype, " ", m, "x", n, "x", k, ": top-1 ",
                      ranked_ms[0] / best, "x the best", is_partial ? " (partial)" : "", "\n");
    }
    const auto ranking_top5_end = ranked_ms.begin() + std::min<size_t>(5, ranked_ms.size());
    const bool top5_ok = std::find(ranked_ms.begin(), ranking_top5_end, best) != ranking_top5_end;
    quality.best_in_top5 += top5_ok;
    const auto top5_end = shortlist_ms.begin() + std::min<size_t>(5, shortlist_ms.size());
    const bool top5_within_3 = *std::min_element(shortlist_ms.begin(), top5_end) <= 1.03 * best;
    quality.top5_within_3 += top5_within_3;
    const bool ranking_top5_within_3 = *std::min_element(ranked_ms.begin(), ranking_top5_end) <= 1.03 * best;
    quality.ranking_top5_within_3 += ranking_top5_within_3;
    std::array<int, 5>& tally = quality.by_dtype[dtype];
    tally[0] += 1;
    tally[1] += top1_ok;
    tally[2] += top5_ok;
    tally[3] += top5_within_3;
    tally[4] += ranking_top5_within_3;
  }
  return quality;
}

// The floors are what docs/validation/planner-h100.md reports of the current model; a change
// may raise them, not lower them.
TEST(PlannerQualityTest, CudaGemmOnTheRecordedH100Sweeps) {
  SweepSpec spec;
  spec.graph = "models/graphs/gemm.pbtxt";
  for (int sweep = 1; sweep <= 13; ++sweep) spec.sweeps.push_back(absl::StrCat("planner-h100-cuda-gemm-timing-", sweep, ".json.gz"));
  // The configurations gemm-timing compiles and times (bench/planner/compare_plan.py).
  spec.space = {"BLOCK_M=32,64,128", "BLOCK_N=32,64,128", "BLOCK_K=16,32", "NUM_STAGES=1..4", "NUM_WARPS=4,8"};
  spec.sets_by_dtype = {{"f16", {"DTYPE=1"}}, {"f32", {"DTYPE=0"}}};
  spec.format.fixed = {{"SPLIT_K", 1}};
  const Quality q = Judge(spec);
  PrintQuality("CUDA GEMM", q);
  EXPECT_EQ(q.rows, 104);
  EXPECT_EQ(q.top1_within_10, q.rows) << q.top1_misses;  // round 8: every row
  EXPECT_GE(q.best_in_top5, 75);        // round 8: 75 of 104
}

// The CUDA GEMM's split-K axis on the H200 (`gemm-timing --split-k 1,2,4,8,16` at depth 3;
// K-heavy decode-batch down projections of public LLMs and a 4096^3 control): the model was not
// fitted on these timings.
TEST(PlannerQualityTest, CudaGemmSplitKOnTheH200) {
  SweepSpec spec;
  spec.graph = "models/graphs/gemm.pbtxt";
  spec.sweeps = {"h200-workloads-2026-11-29/cuda-gemm-split-k.json.gz"};
  spec.space = {"BLOCK_M=32,64,128", "BLOCK_N=32,64,128", "BLOCK_K=16,32", "NUM_STAGES=3", "NUM_WARPS=4,8",
                "SPLIT_K=1,2,4,8,16"};
  spec.sets_by_dtype = {{"f16", {"DTYPE=1"}}, {"f32", {"DTYPE=0"}}};
  spec.format.config_names = {"BLOCK_M", "BLOCK_N", "BLOCK_K", "NUM_STAGES", "NUM_WARPS", "SPLIT_K"};
  spec.device = "h200";
  const Quality q = Judge(spec);
  PrintQuality("CUDA GEMM with split-K", q);
  EXPECT_EQ(q.rows, 10);
  EXPECT_EQ(q.top1_within_10, 10) << q.top1_misses;  // f16 4096^3 at 1.09x (split 8 measures best)
  EXPECT_EQ(q.top5_within_3, 10);
}

TEST(PlannerQualityTest, TritonMatmulOnTheRecordedH100Sweeps) {
  SweepSpec spec;
  spec.graph = "models/graphs/triton_matmul.pbtxt";
  spec.sweeps = {"planner-h100-triton-sweep.json.gz"};
  for (int sweep = 2; sweep <= 7; ++sweep) spec.sweeps.push_back(absl::StrCat("planner-h100-triton-sweep-", sweep, ".json.gz"));
  // The fresh-shape run whose plans were committed before timing (docs/validation/planner-h100.md).
  spec.sweeps.push_back("h100-fresh-2026-11-26/triton-sweep.json.gz");
  spec.sets_by_dtype = {{"f16", {"ELT=2"}}, {"f32", {"ELT=4"}}};
  spec.compute_dtype = {{"f16", "f16"}, {"f32", "tf32"}};  // tl.dot on f32 inputs uses tf32
  const Quality q = Judge(spec);
  PrintQuality("Triton matmul", q);
  EXPECT_EQ(q.rows, 80);
  // Top-1 75 of 80: f32 rows whose pick is a 32-row mma.sync tile at two or three blocks a core
  // (1.10-1.20x), whose wait the H100's co-resident blocks fill less than the H200's
  // (docs/planner.md, "Co-resident blocks and the mma.sync wait"); the shortlist's top 5 within 3%
  // on all 80.
  EXPECT_GE(q.top1_within_10, 75) << q.top1_misses;
  EXPECT_GE(q.top5_within_3, 80);
  EXPECT_GE(q.best_in_top5, 65);
}

// The real-workload suite on the H200 (tests/data/planner/workload-suite.json, timed by
// bench/planner/sweep_workloads.py): the layer shapes of public LLMs at decode and
// prefill. The fit part is what the model's terms were chosen on; the held-out part was never
// used to choose or tune anything, and its floors only guard against regressions
// (docs/planner.md, "Real workloads"). The floors follow the model as it stands: the mma.sync
// tiles' registers and the co-resident blocks' shared mma.sync wait moved the parts already judged
// (docs/planner.md, "Limits of the model", "Co-resident blocks and the mma.sync wait"); each
// part's README names its misses as judged blind.
// Prints a judgement and holds it to its floors: its rows, and at least the rows within 10% (top-1)
// and 3% (the top 5's best) measured when it was judged.
void ExpectFloors(const std::string& name, const Quality& q, int rows, int top1_within_10, int top5_within_3) {
  PrintQuality(name.c_str(), q);
  EXPECT_EQ(q.rows, rows) << name;
  EXPECT_GE(q.top1_within_10, top1_within_10) << name << q.top1_misses;
  EXPECT_GE(q.top5_within_3, top5_within_3) << name;
}

// The run that timed a part: each held-out part after the first was timed on its own.
std::string WorkloadRun(const std::string& part) {
  if (part == "fit" || part == "heldout") return "h200-workloads-2026-11-29";
  const bool first_day = part == "heldout2" || part == "heldout3" || part == "heldout4";
  if (part == "heldout13" || part == "heldout14" || part == "heldout15") {
    return absl::StrCat("h200-", part, "-2026-12-01");
  }
  if (part == "heldout16" || part == "heldout17") return absl::StrCat("h200-", part, "-2026-12-02");
  if (part == "heldout18" || part == "heldout19") return absl::StrCat("h200-", part, "-2026-12-03");
  if (part == "heldout20" || part == "heldout21" || part == "heldout22" || part == "heldout23") {
    return absl::StrCat("h200-", part, "-2026-12-04");
  }
  if (part == "heldout24") return "h200-heldout24-2026-12-07";
  return absl::StrCat("h200-", part, first_day ? "-2026-11-29" : "-2026-11-30");
}

SweepSpec WorkloadMatmul(const std::string& part) {
  SweepSpec spec;
  spec.graph = "models/graphs/triton_matmul.pbtxt";
  // The fourth and sixteenth parts timed their attention first and their matmuls in runs of their own.
  const bool own_matmul_runs = part == "heldout4" || part == "heldout16";
  const std::string prefix = WorkloadRun(part) + (own_matmul_runs ? "/h200-matmul-" : "/h200-");
  spec.sweeps = {prefix + "f16.json.gz", prefix + "f32.json.gz"};
  // The fifth part's matmul rows are in two sweep files: rows 1-29 and rows 30-50 (`-rows29`); the
  // sixteenth's in two per dtype, the second from the row the first stopped in (a later file's time
  // of a configuration replaces an earlier one's).
  if (part == "heldout5") spec.sweeps.insert(spec.sweeps.end(), {prefix + "f16-rows29.json.gz", prefix + "f32-rows29.json.gz"});
  if (part == "heldout16") {
    spec.sweeps.insert(spec.sweeps.end(), {prefix + "f16-rest.json.gz", prefix + "f32-rest.json.gz"});
    spec.sweeps_resume = true;
  }
  // The twenty-third part's f16 rows from the thirteenth on, timed on a later lease.
  if (part == "heldout23") {
    spec.sweeps.push_back(prefix + "f16-rest.json.gz");
    spec.sweeps_resume = true;
  }
  spec.sets_by_dtype = {{"f16", {"ELT=2"}}, {"f32", {"ELT=4"}}};
  spec.compute_dtype = {{"f16", "f16"}, {"f32", "tf32"}};
  spec.format.where = {{"kind", "matmul"}, {"part", part}};
  spec.device = "h200";
  return spec;
}

// The attention rows of the workload suite, by part (read once).
const std::map<std::string, std::set<std::array<int64_t, 3>>>& SuiteAttentionRowsByPart() {
  static const auto* const by_part = [] {
    auto* rows = new std::map<std::string, std::set<std::array<int64_t, 3>>>();
    auto json = testing::ReadTestData("tests/data/planner/workload-suite.json");
    EXPECT_TRUE(json.ok()) << json.status();
    google::protobuf::Struct suite;
    if (!json.ok() || !google::protobuf::util::JsonStringToMessage(*json, &suite).ok()) {
      ADD_FAILURE() << "tests/data/planner/workload-suite.json does not parse";
      return rows;
    }
    for (const google::protobuf::Value& row : suite.fields().at("attention").list_value().values()) {
      const auto& r = row.struct_value().fields();
      (*rows)[r.at("part").string_value()].insert({std::llround(r.at("BATCH_HEADS").number_value()),
                                                   std::llround(r.at("N_CTX").number_value()),
                                                   std::llround(r.at("HEAD_DIM").number_value())});
    }
    return rows;
  }();
  return *by_part;
}

// The attention rows the workload suite gives a part: a later part's timing of a shape an earlier
// part owns (bench/planner/workloads.py keeps the first) is not judged again.
std::set<std::array<int64_t, 3>> SuiteAttentionRows(const std::string& part) {
  const auto& by_part = SuiteAttentionRowsByPart();
  const auto it = by_part.find(part);
  EXPECT_TRUE(it != by_part.end()) << "no attention rows of part " << part << " in the workload suite";
  return it != by_part.end() ? it->second : std::set<std::array<int64_t, 3>>{};
}

SweepSpec WorkloadAttention(const std::string& part) {
  SweepSpec spec;
  spec.graph = "models/graphs/triton_attention.pbtxt";
  spec.sweeps = {WorkloadRun(part) + "/h200-f16.json.gz"};
  spec.sets_by_dtype = {{"f16", {}}};
  spec.format.row_names = {"BATCH_HEADS", "N_CTX", "HEAD_DIM"};
  spec.format.config_names = {"BLOCK_M", "BLOCK_N", "NUM_STAGES", "NUM_WARPS"};
  spec.format.where = {{"kind", "attention"}, {"part", part}};
  spec.format.only_rows = SuiteAttentionRows(part);
  spec.device = "h200";
  return spec;
}

// The CUDA GEMM on the workload suite (bench/planner/time_cuda_gemm_workloads.py; plans committed
// before the timing in cuda-gemm-plans-before-timing.json.gz), over the space it was timed on:
// split-K and depths 1-4 for decode rows, one share and depths 2-4 for prefill rows (M = 2000,
// BLOCK_M = 16 only).
Quality JudgeCudaGemmWorkloads(const std::string& part, const std::string& sweep, const std::string& device) {
  Quality total;
  for (const char* regime : {"decode", "prefill"}) {
    SweepSpec spec;
    spec.graph = "models/graphs/gemm.pbtxt";
    spec.sweeps = {sweep};
    const bool decode = std::string(regime) == "decode";
    spec.space = {"BLOCK_M=16,32,64,128", "BLOCK_N=32,64,128", "BLOCK_K=16,32",
                  decode ? "NUM_STAGES=1,2,3,4" : "NUM_STAGES=2,3,4", "NUM_WARPS=4,8",
                  decode ? "SPLIT_K=1,2,4,8,16" : "SPLIT_K=1"};
    spec.sets_by_dtype = {{"f16", {"DTYPE=1"}}, {"f32", {"DTYPE=0"}}};
    spec.format.config_names = {"BLOCK_M", "BLOCK_N", "BLOCK_K", "NUM_STAGES", "NUM_WARPS", "SPLIT_K"};
    spec.format.where = {{"part", part}, {"regime", regime}};
    spec.device = device;
    const Quality q = Judge(spec);
    total.rows += q.rows;
    total.top1_within_10 += q.top1_within_10;
    total.best_in_top5 += q.best_in_top5;
    total.top5_within_3 += q.top5_within_3;
    total.ranking_top5_within_3 += q.ranking_top5_within_3;
    total.top1_misses += q.top1_misses;
    for (const auto& [dtype, t] : q.by_dtype) {
      for (size_t i = 0; i < t.size(); ++i) total.by_dtype[dtype][i] += t[i];
    }
    for (const auto& [dtype, count] : q.partial_by_dtype) total.partial_by_dtype[dtype] += count;
  }
  return total;
}

// A part's CUDA GEMM as its H200 run timed it.
Quality JudgeCudaGemmWorkloads(const std::string& part) {
  return JudgeCudaGemmWorkloads(part, absl::StrCat(WorkloadRun(part), "/cuda-gemm-", part, ".json.gz"), "h200");
}

// Planned at f54de2a before the part was timed (cuda-gemm-plans-before-timing.json.gz beside it).
TEST(PlannerQualityTest, CudaGemmOnTheEleventhHeldOutPart) {
  // Miss: f16 64x5120x25600 at 1.13x (the top 5's best 1.10x, 64x64 tiles where 64x128 measures best).
  ExpectFloors("CUDA GEMM, workload eleventh held-out part", JudgeCudaGemmWorkloads("heldout11"), 96, 95, 95);
}

// Planned at 6fb33f4 before the part was timed (tests/data/planner/h200-heldout12-2026-11-30/README.md).
TEST(PlannerQualityTest, CudaGemmOnTheTwelfthHeldOutPart) {
  // Top-1 misses, decode rows of K 768-6144: f16 16x2048x1024 at 1.18x, 64x5120x8192 1.13x,
  // 16x6144x768 1.12x; f32 16x1024x6144 1.16x, 64x2048x768 1.12x. The top 5 misses at 1.04-1.08x.
  ExpectFloors("CUDA GEMM, workload twelfth held-out part", JudgeCudaGemmWorkloads("heldout12"), 96, 91, 89);
}

// Planned at d4e79cd before the part was timed, the shortlist's rule and bands committed with the
// plans (tests/data/planner/h200-heldout13-2026-12-01/README.md).
TEST(PlannerQualityTest, CudaGemmOnTheThirteenthHeldOutPart) {
  // Top-1 miss: f16 16x12288x1536 at 1.12x.
  ExpectFloors("CUDA GEMM, workload thirteenth held-out part", JudgeCudaGemmWorkloads("heldout13"), 78, 77, 77);
}

// Planned at fb33a38 before the part was timed (tests/data/planner/h200-heldout14-2026-12-01/README.md).
TEST(PlannerQualityTest, CudaGemmOnTheFourteenthHeldOutPart) {
  // Top-1 misses, f32 decode rows of 1024-2560 columns: 16x2560x1024 at 1.14x, 16x1024x2048
  // 1.13x, 16x1024x3072 and 64x1024x3072 1.11x.
  ExpectFloors("CUDA GEMM, workload fourteenth held-out part", JudgeCudaGemmWorkloads("heldout14"), 60, 56, 57);
}

// Planned at 8a2b9d9 before the part was timed (tests/data/planner/h200-heldout16-2026-12-02/README.md);
// its two lm_heads whose N no tile divides (49,155 and 122,753) have no plan.
TEST(PlannerQualityTest, CudaGemmOnTheSixteenthHeldOutPart) {
  ExpectFloors("CUDA GEMM, workload sixteenth held-out part", JudgeCudaGemmWorkloads("heldout16"), 68, 62, 63);
}

// Planned at 52e65ab before the part's CUDA GEMM was timed (tests/data/planner/h200-heldout17-2026-12-02/README.md).
TEST(PlannerQualityTest, CudaGemmOnTheSeventeenthHeldOutPart) {
  // Top-1 misses: f32 16x3584x3072 at 1.18x (its top 5's best 1.00x), f16 64x5120x27648 at 1.13x
  // (its top 5's best 1.10x).
  ExpectFloors("CUDA GEMM, workload seventeenth held-out part", JudgeCudaGemmWorkloads("heldout17"), 40, 38, 39);
}

TEST(PlannerQualityTest, CudaGemmOnTheWorkloadSuiteFitPart) {
  // f32 16x8192x1024: the top 5's best at 1.05x.
  ExpectFloors("CUDA GEMM, workload fit part", JudgeCudaGemmWorkloads("fit"), 54, 54, 53);
}

TEST(PlannerQualityTest, CudaGemmOnTheWorkloadSuiteHeldOutPart) {
  // Worst top-1: f32 16x3584x18944 at 1.10x.
  ExpectFloors("CUDA GEMM, workload held-out part", JudgeCudaGemmWorkloads("heldout"), 50, 50, 50);
}

// Planned at 1eec091 before the part was timed (cuda-gemm-plans-before-timing.json.gz beside it).
TEST(PlannerQualityTest, CudaGemmOnTheSecondHeldOutPart) {
  // Misses: decode rows of 896-2304 columns in f32 (16x1152x896 at 1.32x) and 64x5120x13824-14336 f16.
  ExpectFloors("CUDA GEMM, workload second held-out part", JudgeCudaGemmWorkloads("heldout2"), 72, 66, 66);
}

// Planned at f9ef2c2 before the part was timed (cuda-gemm-plans-before-timing.json.gz beside it).
TEST(PlannerQualityTest, CudaGemmOnTheFourthHeldOutPart) {
  // Misses: f32 16x2560x2048 at 1.17x (the top 5's best 1.03x), f32 16x50272x2048's top 5 at 1.02x.
  ExpectFloors("CUDA GEMM, workload fourth held-out part", JudgeCudaGemmWorkloads("heldout4"), 76, 75, 75);
}

// Planned at ac6d5c1 before the part was timed (cuda-gemm-plans-before-timing.json.gz beside it);
// 16x49155x4096 has no plan (no tile divides N).
TEST(PlannerQualityTest, CudaGemmOnTheFifthHeldOutPart) {
  // Misses, all f32 at K or N = 960: 16x5120x960 at 1.18x, 64x5120x960 at 1.12x, 64x960x2560 at
  // 1.11x (its top 5's best at 1.07x).
  ExpectFloors("CUDA GEMM, workload fifth held-out part", JudgeCudaGemmWorkloads("heldout5"), 98, 95, 97);
}

TEST(PlannerQualityTest, TritonMatmulOnTheWorkloadSuiteFitPart) {
  // f16 24 of 27 (16x2048x2048 at 1.99x, 16x4096x14336 at 1.15x, 16x3072x2048 at 1.10x), f32 27.
  ExpectFloors("Triton matmul, workload fit part", Judge(WorkloadMatmul("fit")), 54, 51, 52);
}

TEST(PlannerQualityTest, TritonMatmulOnTheWorkloadSuiteHeldOutPart) {
  ExpectFloors("Triton matmul, workload held-out part", Judge(WorkloadMatmul("heldout")), 50, 44, 48);
}

// The fourth held-out part's matmuls, planned before they were timed, the model unchanged since
// the second part was judged (tests/data/planner/README.md).
TEST(PlannerQualityTest, TritonMatmulOnTheFourthHeldOutPart) {
  ExpectFloors("Triton matmul, workload fourth held-out part", Judge(WorkloadMatmul("heldout4")), 76, 68, 72);
}

// The fifth held-out part, planned before it was timed, the model unchanged since the fourth; its
// 29th matmul row (16x49155x4096) is timed on 199 (f16) and 187 (f32) of its configurations.
TEST(PlannerQualityTest, TritonMatmulOnTheFifthHeldOutPart) {
  ExpectFloors("Triton matmul, workload fifth held-out part", Judge(WorkloadMatmul("heldout5")), 100, 94, 98);
}

// The eleventh held-out part (Llama-3.1-405B over 8 GPUs, Qwen3-32B, Qwen3-4B, Ministral-8B,
// SmolLM3-3B, OLMo-2-13B, GLM-4-9B), planned before it was timed with the model as it stands, the
// mma.sync tiles' registers included (plans-before-timing.json.gz beside its timings).
TEST(PlannerQualityTest, TritonMatmulOnTheEleventhHeldOutPart) {
  ExpectFloors("Triton matmul, workload eleventh held-out part", Judge(WorkloadMatmul("heldout11")), 96, 90, 89);
}

// The twelfth held-out part (Gemma-3-27B, Llama-3.3-70B over 2 GPUs, Mixtral-8x22B over 8, and
// the expert FFNs of Qwen3-30B-A3B, Phi-3.5-MoE, Llama-4-Scout and OLMoE-1B-7B), planned before it
// was timed with the wgmma K step's wait and register share (plans-before-timing.json.gz beside it).
TEST(PlannerQualityTest, TritonMatmulOnTheTwelfthHeldOutPart) {
  ExpectFloors("Triton matmul, workload twelfth held-out part", Judge(WorkloadMatmul("heldout12")), 96, 88, 91);
}

// The thirteenth held-out part (Mistral-Large-2 over 8 GPUs, Phi-4, Phi-4-mini, InternLM3-8B, the
// expert FFNs of Qwen3-235B-A22B and DBRX), planned before it was timed; it judged the autotuning
// shortlist blind (plans-before-timing.json.gz and shortlist-bands.json beside it).
TEST(PlannerQualityTest, TritonMatmulOnTheThirteenthHeldOutPart) {
  ExpectFloors("Triton matmul, workload thirteenth held-out part", Judge(WorkloadMatmul("heldout13")), 78, 75, 75);
}

// The fourteenth held-out part (gpt-oss-20b's expert FFNs, Mistral-NeMo-Minitron-8B, Qwen3-1.7B,
// ERNIE-4.5-0.3B), planned before it was timed with the planner's own shortlist, its second blind
// judgement (plans-before-timing.json.gz beside it).
TEST(PlannerQualityTest, TritonMatmulOnTheFourteenthHeldOutPart) {
  ExpectFloors("Triton matmul, workload fourteenth held-out part", Judge(WorkloadMatmul("heldout14")), 60, 55, 58);
}

// The fifteenth held-out part (Qwen2.5-72B and Mistral-Large-2 over 4 GPUs, Qwen3-32B, Gemma-3-27B
// and Phi-4 over 2; matmuls only), planned before it was timed with the estimate and with ptxas's
// registers, which judged the same (plans-before-timing.json.gz and
// plans-with-registers-before-timing.json.gz beside it).
TEST(PlannerQualityTest, TritonMatmulOnTheFifteenthHeldOutPart) {
  ExpectFloors("Triton matmul, workload fifteenth held-out part", Judge(WorkloadMatmul("heldout15")), 82, 75, 80);
}

// The sixteenth held-out part (Yi-1.5-9B, Granite-3.1-2B, Command-R7B, SmolLM2-135M, MiniCPM-2B,
// and Llama-3-8B and Gemma-2-9B over 2 GPUs), planned before it was timed with the planner as it
// stands, the shortlist's fourth blind judgement (plans-before-timing.json.gz beside it).
TEST(PlannerQualityTest, TritonMatmulOnTheSixteenthHeldOutPart) {
  ExpectFloors("Triton matmul, workload sixteenth held-out part", Judge(WorkloadMatmul("heldout16")), 72, 65, 67);
}

// Planned at a99c534 before the part was timed: the planner as it stands, with tcgen05's
// registers and the mma.sync estimate's 16-bit A operand, judged blind a fifth time
// (tests/data/planner/h200-heldout17-2026-12-02/README.md).
TEST(PlannerQualityTest, TritonMatmulOnTheSeventeenthHeldOutPart) {
  ExpectFloors("Triton matmul, workload seventeenth held-out part", Judge(WorkloadMatmul("heldout17")), 40, 36, 38);
}

// Planned at 5220224 before the part was timed, with the shortlist's occupancy hedges and without
// them (tests/data/planner/h200-heldout18-2026-12-03/README.md): the matmuls of five models whose
// attention earlier parts have.
TEST(PlannerQualityTest, TritonMatmulOnTheEighteenthHeldOutPart) {
  ExpectFloors("Triton matmul, workload eighteenth held-out part", Judge(WorkloadMatmul("heldout18")), 84, 72, 76);
}

// Planned at 11e9e91 (the planner as at 5220224) before the part was timed, with the occupancy
// hedges and without them (tests/data/planner/h200-heldout19-2026-12-03/README.md).
TEST(PlannerQualityTest, TritonMatmulOnTheNineteenthHeldOutPart) {
  ExpectFloors("Triton matmul, workload nineteenth held-out part", Judge(WorkloadMatmul("heldout19")), 62, 60, 60);
}

// Planned at b4b3c42 before the part was timed, with occupancy twins of any block shape and without
// them (tests/data/planner/h200-heldout20-2026-12-04/README.md).
TEST(PlannerQualityTest, TritonMatmulOnTheTwentiethHeldOutPart) {
  ExpectFloors("Triton matmul, workload twentieth held-out part", Judge(WorkloadMatmul("heldout20")), 84, 72, 82);
}

// Planned at cddb7a1 before the part was timed, by the planner as it stands and by the variant
// that lets co-resident blocks fill the mma.sync wait (tests/data/planner/h200-heldout21-2026-12-04/README.md).
TEST(PlannerQualityTest, TritonMatmulOnTheTwentyFirstHeldOutPart) {
  ExpectFloors("Triton matmul, workload twenty-first held-out part", Judge(WorkloadMatmul("heldout21")), 84, 74, 77);
}

// A row the sweep's budget stopped in is judged on the configurations it timed and counted partial,
// as bench/planner/judge_workloads.py counts it: the first f16 run of the twenty-first part stopped
// in 16 x 50,257 x 1,024 after 257 of its 260 configurations.
TEST(PlannerQualityTest, RowsTheBudgetStoppedInArePartial) {
  SweepFormat format;
  format.where = {{"kind", "matmul"}};
  const SweepRows read = ReadSweep("tests/data/planner/h200-heldout21-2026-12-04/h200-f16.json.gz", format);
  EXPECT_EQ(read.stopped, (std::set<Row>{{"f16", 16, 50257, 1024}}));
  EXPECT_EQ(read.times.at({"f16", 16, 50257, 1024}).size(), 257);
  const Quality q = Judge(WorkloadMatmul("heldout21"));
  EXPECT_EQ(q.partial_by_dtype.at("f16"), 1);
  EXPECT_EQ(q.partial_by_dtype.at("f32"), 0);
}

// Planned at d6bbbe5 before the part was timed, by the planner as it stands and by the variant
// that solves the mma.sync wait of co-resident blocks as a closed network
// (tests/data/planner/h200-heldout23-2026-12-04/README.md); the rows the budget stopped in are left
// out of its timings.
TEST(PlannerQualityTest, TritonMatmulOnTheTwentyThirdHeldOutPart) {
  ExpectFloors("Triton matmul, workload twenty-third held-out part", Judge(WorkloadMatmul("heldout23")), 53, 50, 52);
}

// A part's Triton matmul and attention rows, and its CUDA GEMM, as an H100 run (its directory
// under tests/data/planner) timed them.
SweepSpec MatmulOnTheH100(const std::string& part, const std::string& run) {
  SweepSpec spec = WorkloadMatmul(part);
  spec.sweeps = {run + "/h100-f16.json.gz", run + "/h100-f32.json.gz"};
  spec.device = "h100";
  return spec;
}

SweepSpec AttentionOnTheH100(const std::string& part, const std::string& run) {
  SweepSpec spec = WorkloadAttention(part);
  spec.sweeps = {run + "/h100-attention.json.gz"};
  spec.device = "h100";
  return spec;
}

Quality JudgeCudaGemmOnTheH100(const std::string& part, const std::string& run) {
  return JudgeCudaGemmWorkloads(part, absl::StrCat(run, "/cuda-gemm-", part, ".json.gz"), "h100");
}

// The twenty-fourth part was timed first on an H100, the device the model's terms were fitted on,
// and planned for it at 8df9115 before that timing (tests/data/planner/h100-heldout24-2026-12-05/README.md).
constexpr char kTwentyFourthOnTheH100[] = "h100-heldout24-2026-12-05";

TEST(PlannerQualityTest, TritonMatmulOnTheTwentyFourthHeldOutPartOnTheH100) {
  const SweepSpec spec = MatmulOnTheH100("heldout24", kTwentyFourthOnTheH100);
  ExpectFloors("Triton matmul, workload twenty-fourth held-out part on the H100", Judge(spec), 74, 67, 70);
}

TEST(PlannerQualityTest, TritonAttentionOnTheTwentyFourthHeldOutPartOnTheH100) {
  const SweepSpec spec = AttentionOnTheH100("heldout24", kTwentyFourthOnTheH100);
  // Worst top-1: 96x16384x128 and the head-dim-64 rows at 1.06x.
  ExpectFloors("Triton attention, workload twenty-fourth held-out part on the H100", Judge(spec), 12, 12, 12);
}

// Its CUDA GEMM's plans were written after the timing, by a planner whose sim/planner and models
// are those of the plans committed before it (bddf536); five of its 64-row decode shapes were
// timed on a later H100 lease and appended.
TEST(PlannerQualityTest, CudaGemmOnTheTwentyFourthHeldOutPartOnTheH100) {
  // Top-1 misses: f16 64x5120x20480 1.12x, 64x10240x2048 1.10x; f32 16x32128x2048 1.17x,
  // 64x10240x2048 1.14x, 16x65024x4096 1.13x, 16x18432x6144 1.11x. The top 5 misses f16
  // 64x5120x20480 and 64x10240x2048 (1.09x, 1.07x) and f32 decode rows of N 32,128-65,024 at
  // 1.04-1.06x.
  ExpectFloors("CUDA GEMM, workload twenty-fourth held-out part on the H100",
               JudgeCudaGemmOnTheH100("heldout24", kTwentyFourthOnTheH100), 74, 68, 67);
}

// The twenty-fourth part's Triton rows timed again on another H100 lease, judged against the same
// plans: the counts hold, six rows change a verdict near a threshold
// (tests/data/planner/h100-heldout24-again-2026-12-06/README.md).
TEST(PlannerQualityTest, TritonOnTheTwentyFourthHeldOutPartTimedAgainOnTheH100) {
  const std::string run = "h100-heldout24-again-2026-12-06";
  const SweepSpec matmul = MatmulOnTheH100("heldout24", run);
  ExpectFloors("Triton matmul, twenty-fourth held-out part on the H100, timed again", Judge(matmul), 74, 68, 70);
  const SweepSpec attention = AttentionOnTheH100("heldout24", run);
  ExpectFloors("Triton attention, twenty-fourth held-out part on the H100, timed again", Judge(attention), 12, 12, 12);
}

// The twenty-fourth part on the H200, planned at bddf536 before any timing of the part
// (tests/data/planner/h200-heldout24-2026-12-07/README.md).
TEST(PlannerQualityTest, TritonOnTheTwentyFourthHeldOutPart) {
  ExpectFloors("Triton matmul, workload twenty-fourth held-out part", Judge(WorkloadMatmul("heldout24")), 74, 68, 70);
  SweepSpec attention = WorkloadAttention("heldout24");
  attention.sweeps = {WorkloadRun("heldout24") + "/h200-attention.json.gz"};
  // Worst top-1: 128x512x64 at 1.10x.
  ExpectFloors("Triton attention, workload twenty-fourth held-out part", Judge(attention), 12, 12, 12);
}

// Its CUDA GEMM on 31 of the 37 shapes: the decode calls' budget ended before six 64-row ones.
TEST(PlannerQualityTest, CudaGemmOnTheTwentyFourthHeldOutPart) {
  // Top-1 and top 5 miss f16 64x5120x20480 (1.12x, 1.09x).
  ExpectFloors("CUDA GEMM, workload twenty-fourth held-out part", JudgeCudaGemmWorkloads("heldout24"), 62, 61, 61);
}

// The twenty-fifth part, timed on an H100 (the lease's device) after its plans for both devices were
// committed (tests/data/planner/heldout25-plans/README.md); the planner replayed as it stands.
constexpr char kTwentyFifthOnTheH100[] = "h100-heldout25-2026-12-07";

TEST(PlannerQualityTest, TritonOnTheTwentyFifthHeldOutPartOnTheH100) {
  const SweepSpec matmul = MatmulOnTheH100("heldout25", kTwentyFifthOnTheH100);
  // As the blind shortlist hedging both readings judged: f16 35 and 37 of 38, f32 34 and 36.
  ExpectFloors("Triton matmul, workload twenty-fifth held-out part on the H100", Judge(matmul), 76, 69, 73);
  const SweepSpec attention = AttentionOnTheH100("heldout25", kTwentyFifthOnTheH100);
  ExpectFloors("Triton attention, workload twenty-fifth held-out part on the H100", Judge(attention), 8, 8, 8);
}

// Its CUDA GEMM on its 36 shapes (N 25,136 and 32,016 are outside the kernel's space, and the
// planner ranks nothing there).
TEST(PlannerQualityTest, CudaGemmOnTheTwentyFifthHeldOutPartOnTheH100) {
  ExpectFloors("CUDA GEMM, workload twenty-fifth held-out part on the H100",
               JudgeCudaGemmOnTheH100("heldout25", kTwentyFifthOnTheH100), 72, 69, 68);
}

// The twenty-fifth part's Triton matmul rows timed again on another H100 lease, judged against
// the same plans (tests/data/planner/h100-heldout25-again-2026-12-07/README.md).
TEST(PlannerQualityTest, TritonOnTheTwentyFifthHeldOutPartTimedAgainOnTheH100) {
  const SweepSpec matmul = MatmulOnTheH100("heldout25", "h100-heldout25-again-2026-12-07");
  ExpectFloors("Triton matmul, twenty-fifth held-out part on the H100, timed again", Judge(matmul), 76, 70, 72);
}

// The same part timed a second time, on another lease of the machine: what the figures above
// owe to the run (tests/data/planner/h200-heldout11-2026-11-30/README.md, "Timed twice").
TEST(PlannerQualityTest, TritonMatmulOnTheEleventhHeldOutPartTimedAgain) {
  SweepSpec spec = WorkloadMatmul("heldout11");
  const std::string run = WorkloadRun("heldout11");
  spec.sweeps = {run + "/h200-f16-repeat.json.gz", run + "/h200-f32-repeat.json.gz"};
  ExpectFloors("Triton matmul, workload eleventh held-out part, timed again", Judge(spec), 96, 91, 91);
}

// The second held-out part: models added after the terms were chosen, planned before they were
// timed (tests/data/planner/README.md).
TEST(PlannerQualityTest, TritonMatmulOnTheSecondHeldOutPart) {
  ExpectFloors("Triton matmul, workload second held-out part", Judge(WorkloadMatmul("heldout2")), 72, 67, 66);
}

// Attention's chain term (models/graphs/triton_attention.pbtxt) was chosen on the fit part after
// the first two held-out parts had been seen; the third to the seventh (the third, sixth and
// seventh attention only) were planned before they were timed. The chains' sharing of the core as
// a closed network and the two-stage tile wait came after all seven had been seen, so these
// floors are no held-out figures for them (docs/validation/planner-h200-workloads.md, "Attention:
// chains as a closed network"); the eighth part, planned with them before it was timed, is. The
// tile flight's latency moved from the L2's to a pipelined load's after the eighth was seen
// ("Attention: a lone block's KV step"); the ninth judges it. The split block's doubled softmax
// came after the ninth was seen; the tenth judges it. The eleventh, planned before it was timed
// with the model unchanged since the tenth, judges the model as it stands, and the twelfth the
// model after the matmul's wgmma K step (attention's graph unchanged). The twenty-second, planned at
// dfeca82 before it was timed, judges the model as it stands (tests/data/planner/h200-heldout22-2026-12-04).
TEST(PlannerQualityTest, TritonAttentionOnTheWorkloadSuite) {
  const Quality fit = Judge(WorkloadAttention("fit"));
  const Quality held_out = Judge(WorkloadAttention("heldout"));
  const Quality held_out2 = Judge(WorkloadAttention("heldout2"));
  const Quality held_out3 = Judge(WorkloadAttention("heldout3"));
  const Quality held_out4 = Judge(WorkloadAttention("heldout4"));
  const Quality held_out5 = Judge(WorkloadAttention("heldout5"));
  const Quality held_out6 = Judge(WorkloadAttention("heldout6"));
  const Quality held_out7 = Judge(WorkloadAttention("heldout7"));
  const Quality held_out8 = Judge(WorkloadAttention("heldout8"));
  const Quality held_out9 = Judge(WorkloadAttention("heldout9"));
  const Quality held_out10 = Judge(WorkloadAttention("heldout10"));
  const Quality held_out11 = Judge(WorkloadAttention("heldout11"));
  const Quality held_out12 = Judge(WorkloadAttention("heldout12"));
  const Quality held_out13 = Judge(WorkloadAttention("heldout13"));
  const Quality held_out14 = Judge(WorkloadAttention("heldout14"));
  const Quality held_out16 = Judge(WorkloadAttention("heldout16"));
  const Quality held_out22 = Judge(WorkloadAttention("heldout22"));
  PrintQuality("Triton attention, workload fit part", fit);
  PrintQuality("Triton attention, workload held-out part", held_out);
  PrintQuality("Triton attention, workload second held-out part", held_out2);
  PrintQuality("Triton attention, workload third held-out part", held_out3);
  PrintQuality("Triton attention, workload fourth held-out part", held_out4);
  PrintQuality("Triton attention, workload fifth held-out part", held_out5);
  PrintQuality("Triton attention, workload sixth held-out part", held_out6);
  PrintQuality("Triton attention, workload seventh held-out part", held_out7);
  PrintQuality("Triton attention, workload eighth held-out part", held_out8);
  PrintQuality("Triton attention, workload ninth held-out part", held_out9);
  PrintQuality("Triton attention, workload tenth held-out part", held_out10);
  PrintQuality("Triton attention, workload eleventh held-out part", held_out11);
  PrintQuality("Triton attention, workload twelfth held-out part", held_out12);
  PrintQuality("Triton attention, workload thirteenth held-out part", held_out13);
  PrintQuality("Triton attention, workload fourteenth held-out part", held_out14);
  PrintQuality("Triton attention, workload sixteenth held-out part", held_out16);
  PrintQuality("Triton attention, workload twenty-second held-out part", held_out22);
  EXPECT_EQ(fit.rows, 5);
  EXPECT_EQ(held_out.rows, 4);
  EXPECT_EQ(held_out2.rows, 6);
  EXPECT_EQ(held_out3.rows, 7);
  EXPECT_EQ(held_out4.rows, 9);
  EXPECT_GE(fit.top1_within_10, 5) << fit.top1_misses;
  EXPECT_GE(fit.top5_within_3, 5);
  EXPECT_GE(held_out.top1_within_10, 4) << held_out.top1_misses;
  EXPECT_GE(held_out2.top1_within_10, 6) << held_out2.top1_misses;
  EXPECT_GE(held_out2.top5_within_3, 6);
  EXPECT_GE(held_out3.top1_within_10, 7) << held_out3.top1_misses;
  EXPECT_GE(held_out3.top5_within_3, 7);
  EXPECT_GE(held_out4.top1_within_10, 9) << held_out4.top1_misses;
  EXPECT_GE(held_out4.top5_within_3, 9);
  EXPECT_EQ(held_out5.rows, 3);
  EXPECT_GE(held_out5.top1_within_10, 3) << held_out5.top1_misses;
  EXPECT_GE(held_out5.top5_within_3, 3);  // the ranking's top 5: 2 (30 x 8192 x 64 at 1.04x)
  EXPECT_EQ(held_out6.rows, 7);
  EXPECT_GE(held_out6.top1_within_10, 7) << held_out6.top1_misses;
  EXPECT_GE(held_out6.top5_within_3, 7);
  EXPECT_EQ(held_out7.rows, 12);
  EXPECT_GE(held_out7.top1_within_10, 11) << held_out7.top1_misses;  // 100 x 2048 x 64 at 1.11x
  EXPECT_GE(held_out7.top5_within_3, 12);
  EXPECT_EQ(held_out8.rows, 15);
  EXPECT_GE(held_out8.top1_within_10, 14) << held_out8.top1_misses;  // 80 x 1024 x 64 at 1.11x
  EXPECT_GE(held_out8.top5_within_3, 15);  // the ranking's top 5: 13 (two short sequences at 1.03-1.04x)
  EXPECT_EQ(held_out9.rows, 15);
  EXPECT_GE(held_out9.top1_within_10, 14) << held_out9.top1_misses;  // 64 x 4096 x 256 at 1.11x
  EXPECT_GE(held_out9.top5_within_3, 15);
  EXPECT_EQ(held_out10.rows, 15);
  EXPECT_GE(held_out10.top1_within_10, 15) << held_out10.top1_misses;
  EXPECT_GE(held_out10.top5_within_3, 15);  // the ranking's top 5: 13 (240 and 288 x 1024 x 128 at 1.05x)
  EXPECT_EQ(held_out11.rows, 9);
  EXPECT_GE(held_out11.top1_within_10, 9) << held_out11.top1_misses;
  EXPECT_GE(held_out11.top5_within_3, 9);  // the ranking's top 5: 8 (200 x 1024 x 128 at 1.05x)
  EXPECT_EQ(held_out12.rows, 12);
  EXPECT_GE(held_out12.top1_within_10, 12) << held_out12.top1_misses;
  EXPECT_GE(held_out12.top5_within_3, 12);  // the ranking's top 5: 10 (144 and 112 x 1024 x 128 at 1.04x)
  EXPECT_EQ(held_out13.rows, 12);
  EXPECT_GE(held_out13.top1_within_10, 12) << held_out13.top1_misses;
  EXPECT_GE(held_out13.top5_within_3, 12);
  EXPECT_EQ(held_out14.rows, 10);
  EXPECT_GE(held_out14.top1_within_10, 10) << held_out14.top1_misses;
  EXPECT_GE(held_out14.top5_within_3, 10);  // the ranking's top 5: 9 (208 x 1024 x 128 at 1.05x)
  EXPECT_EQ(held_out16.rows, 8);
  EXPECT_GE(held_out16.top1_within_10, 8) << held_out16.top1_misses;
  EXPECT_GE(held_out16.top5_within_3, 8);
  EXPECT_EQ(held_out22.rows, 8);
  EXPECT_GE(held_out22.top1_within_10, 8) << held_out22.top1_misses;
  EXPECT_GE(held_out22.top5_within_3, 8);  // the ranking's top 5: 8 as well
}

// The Triton matmul planned with ptxas's registers in place of the graph's estimate (simulate
// plan --registers; tests/data/planner/compiled-registers, every configuration the H200 sweeps
// compiled) on every part of the workload suite with matmul rows: no part loses a row at top-1 or
// in the ranking's top 5, and the totals gain what docs/planner.md ("A compiler's registers")
// reports. The shortlist is held in total only: ptxas's registers move some block shapes' fastest
// estimates into the ranking error, and those hedges can take the slots of occupancy hedges.
TEST(PlannerQualityTest, TritonMatmulWithPtxasRegistersOnTheWorkloadSuite) {
  std::array<int, 4> estimate{}, compiled{};  // rows, top-1 within 10%, ranking's and shortlist's top 5 within 3%
  for (const char* part : {"fit", "heldout", "heldout2", "heldout4", "heldout5", "heldout11", "heldout12",
                           "heldout13", "heldout14", "heldout15"}) {
    SweepSpec spec = WorkloadMatmul(part);
    const Quality by_estimate = Judge(spec);
    spec.registers = "compiled-registers/triton_matmul.registers.json";
    const Quality by_ptxas = Judge(spec);
    PrintQuality(absl::StrCat("Triton matmul with ptxas's registers, part ", part).c_str(), by_ptxas);
    // The table holds ptxas's counts at the specialization the sweeps compiled (its
    // compiled_where: sizes divisible by 16); the fifth part's 16x49155x4096 row is not, and keeps
    // the estimate of its element-by-element B (triton_matmul.pbtxt, U).
    EXPECT_EQ(by_ptxas.rows, by_estimate.rows) << part;
    EXPECT_GE(by_ptxas.top1_within_10, by_estimate.top1_within_10) << part << by_ptxas.top1_misses;
    for (auto [total, q] : {std::pair{&estimate, &by_estimate}, std::pair{&compiled, &by_ptxas}}) {
      (*total)[0] += q->rows;
      (*total)[1] += q->top1_within_10;
      (*total)[2] += q->ranking_top5_within_3;
      (*total)[3] += q->top5_within_3;
    }
  }
  std::printf("Triton matmul, workload suite: rows %d; estimate top-1 %d, top 5 %d, shortlist %d; ptxas's registers "
              "top-1 %d, top 5 %d, shortlist %d\n",
              estimate[0], estimate[1], estimate[2], estimate[3], compiled[1], compiled[2], compiled[3]);
  // As the model stands (764 rows): top-1 707 either way; the ranking's top 5 717 by the estimate
  // and 714 by ptxas's registers (the fit part and the thirteenth and fifteenth held-out parts
  // lose one or two rows to them); the shortlist's 729 either way.
  EXPECT_EQ(compiled[0], 764);
  EXPECT_GE(compiled[1], 707) << "top-1 within 10%";
  EXPECT_GE(compiled[2], 714) << "the ranking's top 5 within 3%";
  EXPECT_GE(estimate[3], 729) << "the shortlist's top 5 within 3%, by the estimate";
  EXPECT_GE(compiled[3], 729) << "the shortlist's top 5 within 3%, by ptxas's registers";
}

// Which Triton matmul configurations spill registers: the graph's register estimate (a
// configuration over the budget is pruned as a register spill) against ptxas (the n_spills of
// Triton 3.6's compiles for the H200 sweeps, every configuration that fits shared memory). Held
// as measured (models/graphs/triton_matmul.pbtxt, registers_per_thread). The same compiles hold
// each path's register counts against the estimate (below ptxas's cap): its mean error, and on
// how many the blocks a core's registers allow (the device's occupancy rules) are ptxas's.
TEST(PlannerQualityTest, TritonMatmulRegisterSpillsAgainstPtxas) {
  const testing::MatmulFamilies& families = testing::SharedMatmulFamilies();
  struct Tally {
    int caught = 0, missed = 0, falsely = 0, clean = 0;
  };
  std::map<std::string, Tally> tallies;  // "f16 wgmma", "f32 mma.sync", ...
  struct Accuracy {
    int rows = 0, occupancy_equal = 0;
    double relative_error_sum = 0;
  };
  std::map<std::string, Accuracy> accuracy;  // the register estimate against ptxas, by the same kinds
  absl::StatusOr<OccupancyCalculator> occupancy = OccupancyCalculator::Create(families.device);
  ASSERT_TRUE(occupancy.ok()) << occupancy.status();
  auto blocks_by_registers = [&](int64_t registers, int64_t warps) {
    OccupancyInput input;
    input.threads_per_block = warps * 32;
    input.registers_per_thread = registers;
    OccupancyFigures figures;
    EXPECT_TRUE(occupancy->Compute(input, &figures).ok());
    return figures.limits[static_cast<int>(OccupancyFactor::kRegisters)];
  };
  for (const std::string dtype : {"f16", "f32"}) {
    auto json = testing::ReadTestData(absl::StrCat("tests/data/planner/h200-heldout2-2026-11-29/h200-", dtype, ".json.gz"));
    ASSERT_TRUE(json.ok()) << json.status();
    google::protobuf::Struct root;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(*json, &root).ok());
    std::map<Config, int64_t> spills;     // ptxas's spill count per compiled configuration
    std::map<Config, int64_t> registers;  // and its registers per thread
    for (const auto& [key, value] : root.fields().at("compiled").struct_value().fields()) {
      const auto& c = value.struct_value().fields();
      if (c.at("kind").string_value() != "matmul" || c.at("status").string_value() != "ok") continue;
      Config config;
      for (const char* name : {"BLOCK_M", "BLOCK_N", "BLOCK_K", "NUM_STAGES", "NUM_WARPS"}) {
        config.push_back(std::llround(c.at("config").struct_value().fields().at(name).number_value()));
      }
      spills[config] = std::llround(c.at("n_spills").number_value());
      registers[config] = std::llround(c.at("n_regs").number_value());
    }
    ASSERT_GT(spills.size(), 150u) << dtype;
    const std::vector<std::string> sets = {"M=4096", "N=4096", "K=4096", dtype == "f32" ? "ELT=4" : "ELT=2"};
    auto values = BindParameters(families.plain, sets);
    auto axes = BuildParamSpace(families.plain, {}, sets);
    ASSERT_TRUE(values.ok() && axes.ok());
    PlanOptions options;
    options.top_k = 100000;
    options.threads = 1;
    options.compute_dtype = dtype == "f32" ? "tf32" : "f16";
    auto plan = Plan(families.plain, families.device, *axes, *values, options);
    ASSERT_TRUE(plan.ok()) << plan.status();
    std::set<Config> kept;
    for (const RankedConfig& config : plan->top) {
      kept.insert(config.values);
      auto measured = registers.find(config.values);
      // ptxas's 255 is its cap, not a count: those compiles say nothing of the estimate's error.
      if (measured == registers.end() || measured->second >= 255) continue;
      Accuracy& a = accuracy[absl::StrCat(dtype, config.values[0] >= 64 ? " wgmma" : " mma.sync")];
      ++a.rows;
      a.relative_error_sum += std::abs(static_cast<double>(config.fit.register_demand - measured->second)) /
                              static_cast<double>(measured->second);
      a.occupancy_equal += blocks_by_registers(config.fit.register_demand, config.values[4]) ==
                           blocks_by_registers(measured->second, config.values[4]);
    }
    for (const auto& [config, n] : spills) {
      Tally& t = tallies[absl::StrCat(dtype, config[0] >= 64 ? " wgmma" : " mma.sync")];
      const bool pruned = !kept.contains(config);  // ptxas compiled it: it fits shared memory
      (n > 0 ? (pruned ? t.caught : t.missed) : (pruned ? t.falsely : t.clean)) += 1;
    }
  }
  for (const auto& [kind, t] : tallies) {
    std::printf("%s: ptxas spills on %d, the estimate prunes %d of them; prunes %d of the %d that do not spill\n",
                kind.c_str(), t.caught + t.missed, t.caught, t.falsely, t.falsely + t.clean);
  }
  // Every cp.async keeps a 64-bit address: the f32 wgmma B copy (4 bytes, one element) and the
  // 16-byte copies of A and f16 B. With them the estimate prunes all 22 f32 wgmma configurations
  // ptxas spills on (20 with the B copies alone, 12 with neither), and one that ptxas fits in 255
  // registers, 256/128/64/2/8 (estimate 256: the budget's edge).
  EXPECT_EQ(tallies["f32 wgmma"].caught, 22);
  EXPECT_EQ(tallies["f32 wgmma"].falsely, 1);
  EXPECT_EQ(tallies["f16 wgmma"].missed, 0);
  EXPECT_EQ(tallies["f16 wgmma"].falsely, 0);
  // mma.sync holds its share of the B tile for the K step: the one f32 spill is pruned.
  EXPECT_EQ(tallies["f32 mma.sync"].caught, 1);
  EXPECT_EQ(tallies["f32 mma.sync"].falsely, 0);
  EXPECT_EQ(tallies["f16 mma.sync"].falsely, 0);
  auto mean_error = [](const Accuracy& a) { return a.relative_error_sum / std::max(a.rows, 1); };
  for (const auto& [kind, a] : accuracy) {
    std::printf("%s: %d configurations below 255, registers %.0f%% off ptxas on average, blocks a core's registers "
                "allow equal on %d\n", kind.c_str(), a.rows, 100 * mean_error(a), a.occupancy_equal);
  }
  // mma.sync holds its share of the B tile for the K step, and with 16-bit operands of the A
  // tile: f16 8% off, the blocks equal on 48 of 69 (with B's share alone 11% and 29; with neither,
  // both dtypes, 35% off and 5 of 138).
  const Accuracy mma_sync{accuracy["f16 mma.sync"].rows + accuracy["f32 mma.sync"].rows,
                          accuracy["f16 mma.sync"].occupancy_equal + accuracy["f32 mma.sync"].occupancy_equal,
                          accuracy["f16 mma.sync"].relative_error_sum + accuracy["f32 mma.sync"].relative_error_sum};
  EXPECT_LE(mean_error(mma_sync), 0.12);
  EXPECT_GE(mma_sync.occupancy_equal, mma_sync.rows / 2);
  EXPECT_LE(mean_error(accuracy["f16 mma.sync"]), 0.09);
  EXPECT_GE(accuracy["f16 mma.sync"].occupancy_equal, 48);
  // wgmma's copies' addresses: without the 16-byte copies' 20% and 21% off, the blocks equal on
  // 68 of 164 (f16) and 39 of 103 (f32).
  for (const char* kind : {"f16 wgmma", "f32 wgmma"}) {
    EXPECT_LE(mean_error(accuracy[kind]), 0.12) << kind;
    EXPECT_GE(accuracy[kind].occupancy_equal, accuracy[kind].rows * 3 / 5) << kind;
  }
}

}  // namespace
}  // namespace scratchsim
