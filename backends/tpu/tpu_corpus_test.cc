// The TPU backend against the real TPU compiler, with no TPU and no libtpu: every row of the
// recorded oracle corpus (tests/data/tpu/corpus.jsonl.gz, libtpu 0.0.42.1 AOT compiles for v4,
// v5e, v5p, v6e and v7x; tests/data/tpu/README.md) is lowered from its graph, judged by the fit
// engine on its generation, and compared with what libtpu said: the verdict (fits, out of VMEM,
// or not compilable at all), and for the kernels that failed on VMEM the figure XLA printed.
//
// Every row takes its body from tests/data/tpu/corpus_bodies.jsonl.gz (bench/tpu/corpus_bodies.py):
// the body as the current tracer reads it, which replaces the one a row's graph was written with
// (or adds one to graphs that predate PallasBody). The spill model was fitted on the kernels whose (kind, params)
// hash is even (bench/tpu/fit_spill_model.py); the figures are printed per half: the odd half is
// the holdout. docs/tpu.md has the table this prints.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "backends/tpu/pallas_lowering.h"
#include "backends/tpu/spill_model.h"
#include "backends/tpu/tpu_corpus_util.h"
#include "backends/tpu/vreg_replay.h"
#include "backends/tpu/xla_verdict.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/device.h"
#include "sim/engine.h"
#include "sim/expr.h"
#include "sim/graph.h"
#include "sim/simulator.h"

namespace scratchsim {
namespace {

// What the fit engine says of one row's kernel.
struct Outcome {
  std::string prediction;  // "fits", "at risk", "does not fit", "invalid", "error: ..."
  int64_t scoped = 0;      // central instruction-scoped VMEM
  int64_t exact = 0;       // scoped minus the estimates
  int64_t largest_exact = 0;  // the largest allocation known exactly (all copies): what XLA names
                              // when one allocation exceeds the VMEM (spill slots come later)
  std::string message;        // the VMEM violation in XLA's words (WordTpuReport), if any
  int64_t scoped_high = 0; // scoped VMEM with the estimates at their high bound: the smallest
                           // vmem_limit_bytes with which the verdict is FITS
  bool near_limit = false;  // a FITS worded as near the limit (kNearLimitSpareBytes)
  std::string unsettled;    // why the model cannot settle a FITS (Report.unsettled), if so
};

// The shipped model of TPU generation `gen` ("v5e"), loaded once per test binary.
const DeviceModel& TpuDevice(const std::string& gen) {
  static std::map<std::string, DeviceModel>* devices = new std::map<std::string, DeviceModel>;
  auto it = devices->find(gen);
  if (it == devices->end()) it = devices->emplace(gen, *LoadDevice(absl::StrCat("tpu_", gen))).first;
  return it->second;
}

Outcome Judge(const KernelGraph& graph, const DeviceModel& device) {
  Outcome out;
  absl::StatusOr<PallasLowering> lowered = LowerPallas(graph, device);
  if (!lowered.ok()) return {absl::StrCat("error: ", lowered.status().message())};
  absl::StatusOr<CompiledGraph> compiled = CompileGraph(lowered->graph, graph.name());
  if (!compiled.ok()) return {absl::StrCat("error: ", compiled.status().message())};
  absl::StatusOr<FitEngine> engine = FitEngine::Create(*compiled, device);
  if (!engine.ok()) return {absl::StrCat("error: ", engine.status().message())};
  FitEngine::Scratch scratch;
  FitResult fit;
  absl::Status status = engine->Evaluate(compiled->defaults, scratch, &fit);
  if (!status.ok()) return {absl::StrCat("error: ", status.message())};
  if (fit.broken_requirement >= 0) return {"invalid"};
  SimulateOptions options;
  options.suggest = false;
  options.keep_placements = false;
  absl::StatusOr<Report> report = Explain(*engine, compiled->defaults, options);
  if (!report.ok()) return {absl::StrCat("error: ", report.status().message())};
  absl::Status worded = WordTpuReport(graph, *lowered, device, &*report);
  if (!worded.ok()) return {absl::StrCat("error: ", worded.message())};
  for (const Violation& v : report->violations()) {
    if (v.resource() == kVmemSpace && out.message.empty()) out.message = v.message();
  }
  out.prediction = report->verdict() == FITS ? "fits" : report->verdict() == AT_RISK ? "at risk" : "does not fit";
  out.near_limit = absl::StartsWith(report->unsettled(), "near the limit:");
  out.unsettled = report->unsettled();
  for (const SpaceReport& space : report->spaces()) {
    if (space.space() != kVmemSpace) continue;
    out.scoped = space.instruction_scoped_bytes();
    out.exact = out.scoped - space.estimated_bytes();
    out.scoped_high = space.has_estimates() ? space.instruction_scoped_bytes_high() : out.scoped;
    for (const BufferShare& share : space.live_at_peak()) {
      if (!share.estimated()) out.largest_exact = std::max(out.largest_exact, share.total_bytes());
    }
  }
  return out;
}

struct Tally {
  int rows = 0, agree = 0, false_fits = 0, fitting_not_fits = 0, at_risk = 0, at_risk_fitting = 0;
  int failing = 0, with_figure = 0, within = 0, pre_spill = 0, pre_spill_within = 0;
  int invalid_rows = 0, invalid_agree = 0, invalid_false = 0;
  // VMEM failures, and those whose report says the same one of XLA's three errors as libtpu.
  int worded_rows = 0, worded_alike = 0;
  // Rows with a verified smallest limit (requirement_bytes): our limit holds it (libtpu compiles
  // at any limit from the requirement up).
  int with_requirement = 0, limit_holds = 0;
  // Failing compiles whose error's figure includes the spills (E1001 over the windows and scratch,
  // capacity errors): libtpu needs at least that figure, so our high bound must reach it (to the
  // error's two decimals of a MiB).
  int with_whole_figure = 0, high_holds_figure = 0;
  // Failing compiles with a figure that `simulate --confirm always` compiled
  // (tests/data/tpu/confirm_failing.jsonl.gz), and those whose report's bytes are within 1% of the
  // corpus's figure: libtpu's where it compiled, the model's where it did not.
  int confirmed = 0, within_confirmed = 0, exact_confirmed = 0;
  int near_limit_fits = 0;  // FITS worded as near the limit
  int unsettled_fits = 0;   // FITS the model cannot settle (traced beside another libtpu, near the limit)
};

struct CorpusResult {
  std::map<std::string, std::map<std::string, Tally>> by_half;  // half ("fit", "holdout", "all") -> gen
  std::vector<std::string> false_fits, errors, bytes_misses, limit_misses, at_risk_fitting, wording_misses,
      high_misses;
  std::set<std::string> at_risk_ids;  // every AT RISK row
  // Fitting rows whose vmem_report lists scratch Mosaic added (internal scratch, temporaries for
  // sublane replication): id -> whether our exact part equals the report's total less its spill slots.
  std::map<std::string, bool> counted_scratch_exact;
  std::string header_versions;
  int rows = 0;
  bool have_confirmed = false;  // confirm_failing.jsonl.gz is here
  std::vector<std::string> confirmed_misses;
};

// What `simulate --confirm always` said of a corpus compile that ran out of VMEM
// (bench/tpu/confirm_cli.py --failing): the error's figure, what it needs (with its limit
// raised to the whole VMEM), or nothing where it compiled nothing.
struct Confirmed {
  int64_t size_bytes = 0, requirement_bytes = 0;
};

// Counts one judged compile of a corpus file into its half's and "all"'s tallies, and its misses.
void TallyCompile(const Struct& row, const Outcome& o, bool fit_half, const std::map<std::string, Confirmed>& confirmed,
                  CorpusResult* r) {
  const std::string id = Str(row, "id"), gen = Str(row, "gen");
  const Struct* result = Sub(row, "result");
  const std::string verdict = Str(*result, "verdict");
  const int64_t limit = Num(row, "vmem_limit_bytes") > 0 ? Num(row, "vmem_limit_bytes") : Num(row, "default_limit_bytes");
  for (const char* half : {fit_half ? "fit" : "holdout", "all"}) {
    Tally& t = r->by_half[half][gen];
    if (verdict == "error" || o.prediction == "invalid") {
      // Not a kernel Mosaic compiles (or we say it is not): no VMEM verdict to compare.
      t.invalid_rows += verdict == "error";
      t.invalid_agree += verdict == "error" && o.prediction == "invalid";
      t.invalid_false += verdict != "error" && o.prediction == "invalid";
      continue;
    }
    const bool fits = verdict == "fits";
    ++t.rows;
    if (Num(row, "requirement_bytes") > 0) {
      ++t.with_requirement;
      t.limit_holds += o.scoped_high >= Num(row, "requirement_bytes");
      if (o.scoped_high < Num(row, "requirement_bytes") && std::string(half) == "all") {
        r->limit_misses.push_back(absl::StrCat(id, ": our limit ", o.scoped_high, " < requirement ",
                                               Num(row, "requirement_bytes")));
      }
    }
    t.agree += (o.prediction == "fits") == fits;
    t.false_fits += o.prediction == "fits" && !fits;
    t.fitting_not_fits += o.prediction != "fits" && fits;
    t.at_risk += o.prediction == "at risk";
    t.near_limit_fits += o.near_limit;
    t.unsettled_fits += o.prediction == "fits" && !o.unsettled.empty();
    t.at_risk_fitting += o.prediction == "at risk" && fits;
    if (o.prediction == "at risk" && std::string(half) == "all") r->at_risk_ids.insert(id);
    if (o.prediction == "at risk" && fits && std::string(half) == "all") {
      r->at_risk_fitting.push_back(absl::StrCat(id, ": ours ", o.scoped, " (high ", o.scoped_high, "), limit ",
                                                limit, ", libtpu ", Num(row, "requirement_bytes")));
    }
    if (fits && std::string(half) == "all") {
      int64_t spill = 0;
      bool counted = false;
      if (const Struct* kernels = Sub(*result, "report") ? Sub(*Sub(*result, "report"), "kernels") : nullptr) {
        for (const auto& [name, kernel] : kernels->fields()) {
          const Value* allocations = Field(kernel.struct_value(), "allocations");
          if (allocations == nullptr) continue;
          for (const Value& a : allocations->list_value().values()) {
            const std::string what = Str(a.struct_value(), "what");
            if (what == "SPILL") spill += Num(a.struct_value(), "size");
            counted = counted || what == "internal scratch" || what == "temp for sublane replication";
          }
        }
      }
      if (counted && Num(row, "requirement_bytes") > 0) {
        r->counted_scratch_exact[id] = o.exact == Num(row, "requirement_bytes") - spill;
      }
    }
    if (fits) continue;
    ++t.failing;
    // The compiler's figure: E1001's X is the windows and scratch alone when they exceed the
    // limit (before register allocation), else the whole requirement; the capacity error's X
    // is the whole total; the one-allocation error's is that allocation.
    const int64_t x = Num(*result, "size_bytes");
    const int64_t requirement = Num(row, "requirement_bytes");
    int64_t figure = 0, ours = 0;
    const bool pre_spill = verdict == "vmem_scoped" && o.exact > limit;  // E1001 over the windows alone
    if (pre_spill) {
      figure = x, ours = o.exact;
      ++t.pre_spill;
    } else if (verdict == "vmem_scoped") {
      figure = requirement > 0 ? requirement : x, ours = o.scoped;
    } else if (verdict == "vmem_capacity") {
      figure = x, ours = o.scoped;
    } else if (verdict == "vmem_alloc") {
      figure = x, ours = o.largest_exact;
    }
    // XLA's three VMEM errors (docs/tpu.md): ours is worded as the one libtpu gave (an AT RISK
    // message quotes the E1001 it risks).
    const char* words = verdict == "vmem_scoped"     ? "Scoped allocation with size"
                        : verdict == "vmem_capacity" ? "Exceeded vmem capacity"
                        : verdict == "vmem_alloc"    ? "RESOURCE_EXHAUSTED: Allocation (size="
                                                     : nullptr;
    if (words != nullptr) {
      const bool worded = absl::StrContains(o.message, words);
      ++t.worded_rows;
      t.worded_alike += worded;
      if (!worded && std::string(half) == "all") {
        r->wording_misses.push_back(absl::StrCat(id, " ", verdict, ": ", o.message.substr(0, 160)));
      }
    }
    if (figure <= 0) continue;
    if (verdict != "vmem_alloc" && !pre_spill) {
      const int64_t rounding = requirement > 0 ? 0 : 5243;  // X is printed in MiB to two decimals
      ++t.with_whole_figure;
      t.high_holds_figure += o.scoped_high + rounding >= figure;
      if (o.scoped_high + rounding < figure && std::string(half) == "all") {
        r->high_misses.push_back(absl::StrCat(id, " ", verdict, ": our high ", o.scoped_high, " < compiler ", figure));
      }
    }
    ++t.with_figure;
    auto within_1pct = [figure](int64_t bytes) {
      return std::abs(static_cast<double>(bytes - figure)) <= 0.01 * static_cast<double>(figure);
    };
    const bool within = within_1pct(ours);
    t.within += within;
    t.pre_spill_within += within && pre_spill;
    if (!within && std::string(half) == "all") {
      r->bytes_misses.push_back(absl::StrCat(id, " ", verdict, pre_spill ? " (pre-spill)" : "",
                                             ": compiler ", figure, ", ours ", ours, " (exact part ", o.exact, ")"));
    }
    // With --confirm always the report's figure of the same kind is libtpu's (the error's, or
    // what it needs where the corpus's figure is the requirement); the model's where nothing
    // was compiled.
    int64_t reported = ours;
    if (auto c = confirmed.find(id); c != confirmed.end()) {
      ++t.confirmed;
      const bool figure_is_requirement = figure == requirement && requirement > 0;
      reported = figure_is_requirement ? c->second.requirement_bytes : c->second.size_bytes;
    }
    const bool reported_within = within_1pct(reported);
    t.within_confirmed += reported_within;
    t.exact_confirmed += reported == figure;
    if (r->have_confirmed && !reported_within && std::string(half) == "all") {
      r->confirmed_misses.push_back(absl::StrCat(id, " ", verdict, ": compiler ", figure, ", reported ", reported,
                                                 confirmed.count(id) ? "" : " (not compiled: the model's)"));
    }
  }
  if (o.prediction == "fits" && verdict != "fits" && verdict != "error") {
    r->false_fits.push_back(absl::StrCat(id, " ", verdict, " ", Str(*result, "size_str")));
  }
}

// The recorded corpus judged by the shipped model: corpus.jsonl.gz (libtpu 0.0.42.1, the one the
// model was fitted on), or the same catalogue compiled by another libtpu. Only the main corpus
// takes the re-traced bodies of corpus_bodies.jsonl.gz (its graphs were traced before bodies
// carried their program) and the --confirm record; every file takes its fit / holdout split.
CorpusResult LoadCorpus(const std::string& file) {
  const bool main_corpus = file == "corpus.jsonl.gz";
  CorpusResult loaded;
  CorpusResult* r = &loaded;
  const std::string dir = std::string(SCRATCHSIM_SOURCE_DIR) + "/tests/data/tpu/";
  // id -> (body textproto, in the fit half: bench/tpu/fit_spill_model.py's split, recorded there)
  std::map<std::string, std::pair<std::string, bool>> bodies;
  for (const std::string& line : ReadGzipLines(dir + "corpus_bodies.jsonl.gz")) {
    Struct s;
    if (!google::protobuf::util::JsonStringToMessage(line, &s).ok()) continue;
    bodies[Str(s, "id")] = {Str(s, "body"), Field(s, "fit") != nullptr && Field(s, "fit")->bool_value()};
  }
  std::map<std::string, Confirmed> confirmed;
  if (main_corpus && HaveTpuData("confirm_failing.jsonl.gz")) {
    r->have_confirmed = true;
    for (const std::string& line : ReadGzipLines(dir + "confirm_failing.jsonl.gz")) {
      Struct s;
      if (!google::protobuf::util::JsonStringToMessage(line, &s).ok() || Str(s, "confirmed_verdict").empty()) continue;
      confirmed[Str(s, "id")] = {Num(s, "size_bytes"), Num(s, "requirement_bytes")};
    }
  }
  std::map<std::string, DeviceModel> devices;
  for (const std::string& line : ReadGzipLines(dir + file)) {
    Struct row;
    if (!google::protobuf::util::JsonStringToMessage(line, &row).ok()) continue;
    if (Field(row, "header") != nullptr) {
      if (const Struct* v = Sub(row, "versions")) {
        r->header_versions = absl::StrCat("jax ", Str(*v, "jax"), ", jaxlib ", Str(*v, "jaxlib"), ", libtpu ",
                                          Str(*v, "libtpu"), ", ", Str(row, "date"));
      }
      continue;
    }
    const Struct* result = Sub(row, "result");
    const std::string verdict = result != nullptr ? Str(*result, "verdict") : "";
    if (verdict == "timeout" || verdict == "crash" || verdict == "build_error" || verdict.empty()) continue;
    if (Str(row, "graph").empty()) continue;
    const std::string id = Str(row, "id"), gen = Str(row, "gen");
    KernelGraph graph;
    if (!google::protobuf::TextFormat::ParseFromString(Str(row, "graph"), &graph)) {
      r->errors.push_back(absl::StrCat(id, ": graph does not parse"));
      continue;
    }
    auto body = bodies.find(id);
    if (main_corpus && body != bodies.end() &&
        !google::protobuf::TextFormat::ParseFromString(body->second.first, graph.mutable_pallas()->mutable_body())) {
      r->errors.push_back(absl::StrCat(id, ": body does not parse"));
      continue;
    }
    if (!devices.count(gen)) {
      absl::StatusOr<DeviceModel> device = LoadDevice(absl::StrCat("tpu_", gen));
      if (!device.ok()) {
        r->errors.push_back(absl::StrCat(id, ": ", device.status().message()));
        continue;
      }
      devices[gen] = *device;
    }
    const Outcome o = Judge(graph, devices[gen]);
    if (absl::StartsWith(o.prediction, "error")) {
      r->errors.push_back(absl::StrCat(id, ": ", o.prediction));
      continue;
    }
    ++r->rows;
    const bool fit_half = body != bodies.end() && body->second.second;
    TallyCompile(row, o, fit_half, confirmed, r);
  }
  return loaded;
}

const CorpusResult& Corpus(const std::string& file = "corpus.jsonl.gz") {
  static auto* loaded = new std::map<std::string, CorpusResult>;
  auto it = loaded->find(file);
  if (it == loaded->end()) it = loaded->emplace(file, LoadCorpus(file)).first;
  return it->second;
}

std::string Percent(int a, int b) { return b == 0 ? "-" : absl::StrFormat("%.1f%%", 100.0 * a / b); }

// A sweep is made by bench/tpu/sweep_spills.py, the corpus by bench/tpu/make_corpus.py
// (tests/data/tpu/README.md).
#define REQUIRE_SWEEP(file) SCRATCHSIM_REQUIRE_TEST_DATA("tests/data/tpu/" file)
#define REQUIRE_CORPUS() SCRATCHSIM_REQUIRE_TEST_DATA("tests/data/tpu/corpus.jsonl.gz")

// docs/tpu.md's table of a corpus file, per half of the fit split and generation, and every miss.
void PrintAgreementTable(const CorpusResult& c) {
  std::printf("TPU oracle corpus (%s): %d compiles judged\n", c.header_versions.c_str(), c.rows);
  for (const char* half : {"fit", "holdout", "all"}) {
    std::printf("\n%s:\n", half);
    std::printf("| gen | compiles | verdict agreement | false FITS | AT RISK (on fitting) | failing with a figure | "
                "bytes within 1%% | of which pre-spill | not compilable: agree |\n");
    for (const auto& [gen, t] : c.by_half.at(half)) {
      std::printf("| %s | %d | %d (%s) | %d | %d (%d) | %d | %d (%s) | %d of %d | %d of %d |\n", gen.c_str(), t.rows,
                  t.agree, Percent(t.agree, t.rows).c_str(), t.false_fits, t.at_risk, t.at_risk_fitting, t.with_figure,
                  t.within, Percent(t.within, t.with_figure).c_str(), t.pre_spill_within, t.pre_spill, t.invalid_agree,
                  t.invalid_rows);
    }
  }
  for (const std::string& e : c.errors) std::printf("error: %s\n", e.c_str());
  for (const std::string& f : c.false_fits) std::printf("false FITS: %s\n", f.c_str());
  for (const std::string& m : c.bytes_misses) std::printf("bytes off by more than 1%%: %s\n", m.c_str());
  for (const std::string& m : c.limit_misses) std::printf("limit below the requirement: %s\n", m.c_str());
  for (const std::string& m : c.high_misses) std::printf("high bound below the compiler's figure: %s\n", m.c_str());
  for (const std::string& m : c.at_risk_fitting) std::printf("AT RISK, libtpu fits: %s\n", m.c_str());
  if (c.have_confirmed) {
    std::printf("\nwith --confirm always (tests/data/tpu/confirm_failing.jsonl.gz):\n"
                "| gen | failing with a figure | compiled by --confirm | bytes within 1%% | to the byte |\n");
    for (const auto& [gen, t] : c.by_half.at("all")) {
      std::printf("| %s | %d | %d | %d (%s) | %d |\n", gen.c_str(), t.with_figure, t.confirmed, t.within_confirmed,
                  Percent(t.within_confirmed, t.with_figure).c_str(), t.exact_confirmed);
    }
    for (const std::string& m : c.confirmed_misses) std::printf("with --confirm, bytes off by more than 1%%: %s\n", m.c_str());
  }
  for (const auto& [gen, t] : c.by_half.at("all")) {
    std::printf("%s: %d FITS worded as near the limit\n", gen.c_str(), t.near_limit_fits);
  }
  for (const auto& [gen, t] : c.by_half.at("all")) {
    std::printf("%s: the vmem_limit_bytes that makes the verdict FITS holds libtpu's requirement on %d of %d rows, "
                "and the figure of %d of %d failing compiles whose figure includes the spills; %d FITS unsettled\n",
                gen.c_str(), t.limit_holds, t.with_requirement, t.high_holds_figure, t.with_whole_figure,
                t.unsettled_fits);
  }
}

TEST(TpuCorpusTest, PrintsTheAgreementTable) {
  REQUIRE_CORPUS();
  const CorpusResult& c = Corpus();
  ASSERT_GT(c.rows, 1000) << "tests/data/tpu/corpus.jsonl.gz unreadable";
  PrintAgreementTable(c);
  EXPECT_TRUE(c.errors.empty());
}

// The same catalogue compiled by the newest libtpu on PyPI (0.0.52, jax 0.10.2), which the model
// was not fitted on: the table printed for docs/tpu.md ("Against the compiler"), no false FITS, and
// the figures held as measured.
TEST(TpuCorpusTest, TheCorpusUnderTheNewestLibtpuHasNoFalseFits) {
  REQUIRE_SWEEP("corpus_libtpu0052.jsonl.gz");
  const CorpusResult& c = Corpus("corpus_libtpu0052.jsonl.gz");
  ASSERT_GT(c.rows, 1000) << "tests/data/tpu/corpus_libtpu0052.jsonl.gz unreadable";
  PrintAgreementTable(c);
  EXPECT_TRUE(c.errors.empty());
  EXPECT_TRUE(c.false_fits.empty()) << c.false_fits.front();
}

TEST(TpuCorpusTest, CountedMosaicScratchIsExact) {
  // Where libtpu lists scratch of its own that the limit counts, our exact part (windows, scratch
  // operands and that scratch) is the report's total less its spill slots, to the byte: every v4
  // layer norm (sublane-replication temporaries and internal scratch) and every paged attention
  // kernel with 2-4 query heads per KV head (internal scratch, v4-v5p). The ragged kernel's
  // internal scratch has another trigger, not modelled (printed).
  REQUIRE_CORPUS();
  int layernorm = 0, paged = 0;
  for (const auto& [id, exact] : Corpus().counted_scratch_exact) {
    if (absl::StrContains(id, "/layernorm/") || absl::StrContains(id, "/paged_attention/")) {
      EXPECT_TRUE(exact) << id;
      ++(absl::StrContains(id, "/layernorm/") ? layernorm : paged);
    } else if (!exact) {
      std::printf("counted scratch not modelled: %s\n", id.c_str());
    }
  }
  EXPECT_EQ(layernorm, 10);  // v4's fitting layer norms
  EXPECT_EQ(paged, 6);       // two kernels on v4, v5e, v5p
}

// A sweep of block shapes the corpus does not have, compiled with the scoped limit raised so that
// every report gives its spill slots (bench/tpu/sweep_spills.py): every spill lies within the
// band [low, high] the lowering gives the traced body, so no verdict on them could be a false
// FITS (nor a false DOES NOT FIT); how far the central estimate is from libtpu's figure is
// printed (docs/tpu.md). Returns the rows checked and the central estimate's largest error.
struct SweepCheck {
  int rows = 0;
  int64_t worst_central_error_bytes = 0;  // |central - libtpu| over the compiles that fit
  int large_spills = 0;                   // spills of 1 MiB or more
  int large_spills_within_1pct = 0;       // of which the central estimate is within 1%
  std::vector<std::string> outside;       // compiles whose spill lies outside the band
  int64_t worst_beyond_high_bytes = 0;    // the most a spill lies above the band's high bound
};
// Checks every compile of a sweep against the band (a failure each, unless `expect_inside` is false:
// then they are only listed in `outside`).
SweepCheck CheckSweepSpillsLieWithinTheBand(const std::string& file, const std::set<BodyClass>& classes,
                                            bool expect_inside = true) {
  std::map<std::string, std::vector<double>> errors;  // gen -> |central - libtpu| / libtpu, spills of 1 MiB or more
  SweepCheck out;
  for (const std::string& line : ReadGzipLines(std::string(SCRATCHSIM_SOURCE_DIR) + "/tests/data/tpu/" + file)) {
    Struct row;
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(line, &row).ok()) << file;
    if (Field(row, "header") != nullptr) continue;
    const std::string id = Str(row, "id"), gen = Str(row, "gen");
    const Struct* result = Sub(row, "result");
    if (result == nullptr) {
      ADD_FAILURE() << id << ": no result";
      continue;
    }
    // A compile that fits gives its spill slots exactly; one that fails (v4, whose limit is its
    // whole VMEM) gives them where its error lists them, to four digits.
    const bool fits = Str(*result, "verdict") == "fits";
    if (!fits && Num(*result, "spill_listed_bytes") <= 0) continue;
    KernelGraph graph;
    if (!google::protobuf::TextFormat::ParseFromString(Str(row, "graph"), &graph)) {
      ADD_FAILURE() << id << ": graph does not parse";
      continue;
    }
    // The estimate the lowering makes of this body (constant figures: a traced kernel's).
    const SpillEstimate estimate = EstimateSpills(graph.pallas().body(), TpuDevice(gen));
    EXPECT_TRUE(classes.count(estimate.body_class)) << id << ": " << BodyClassName(estimate.body_class);
    auto bytes = [&](const std::string& expr) -> int64_t {
      absl::StatusOr<int64_t> value = Expr::EvaluateConstant(expr);
      EXPECT_TRUE(value.ok()) << id << ": " << expr;
      return value.value_or(-1);
    };
    const int64_t low = bytes(estimate.low), central = bytes(estimate.central), high = bytes(estimate.high);
    const int64_t libtpu = fits ? Num(*result, "spill_bytes") : Num(*result, "spill_listed_bytes");
    const int64_t rounding = fits ? 0 : libtpu / 1000;  // the error's four digits
    out.worst_beyond_high_bytes = std::max(out.worst_beyond_high_bytes, libtpu - rounding - high);
    if (low > libtpu + rounding || high < libtpu - rounding) {
      out.outside.push_back(absl::StrCat(id, " (", BodyClassName(estimate.body_class), "): libtpu ", libtpu,
                                         ", band ", low, " to ", high));
    }
    if (expect_inside) {
      EXPECT_LE(low, libtpu + rounding) << id;
      EXPECT_GE(high, libtpu - rounding) << id;
    }
    if (libtpu >= (1 << 20)) {
      errors[gen].push_back(std::abs(static_cast<double>(central - libtpu)) / static_cast<double>(libtpu));
      ++out.large_spills;
      if (errors[gen].back() <= 0.01) ++out.large_spills_within_1pct;
    }
    if (fits) out.worst_central_error_bytes = std::max(out.worst_central_error_bytes, std::abs(central - libtpu));
    ++out.rows;
  }
  for (auto& [gen, e] : errors) {
    std::sort(e.begin(), e.end());
    std::printf("%s %s: %zu spills of 1 MiB or more, central estimate off by a median %.0f%% (worst %.0f%%)\n",
                file.c_str(), gen.c_str(), e.size(), 100 * e[e.size() / 2], 100 * e.back());
  }
  return out;
}

// Flash attention forward (sequence 8192, head_dim 128; block_q 256-2048, block_k 128-1024, 1-8
// inner iterations; tests/data/tpu/flash_spill_sweep.jsonl.gz, v4-v7x): the attention band, fitted
// on these and the corpus's fit half.
TEST(TpuCorpusTest, FlashSweepSpillsLieWithinTheBand) {
  REQUIRE_SWEEP("flash_spill_sweep.jsonl.gz");
  EXPECT_GE(CheckSweepSpillsLieWithinTheBand("flash_spill_sweep.jsonl.gz", {BodyClass::kAttention}).rows, 290);
}

// The same at head_dim 64 and 256 (tests/data/tpu/flash_head_dim_spill_sweep.jsonl.gz), which
// nothing was fitted on: out of sample. At d = 256 on v4-v5p the dots hold q and p across their
// MXU passes, once per unrolled iteration; the band holds every spill.
TEST(TpuCorpusTest, FlashHeadDimSweepSpillsLieWithinTheBand) {
  REQUIRE_SWEEP("flash_head_dim_spill_sweep.jsonl.gz");
  EXPECT_GE(CheckSweepSpillsLieWithinTheBand("flash_head_dim_spill_sweep.jsonl.gz", {BodyClass::kAttention}).rows, 250);
}

// Causal flash attention in bf16, and non-causal in f32, at head_dim 128 over 21 block shapes each
// (tests/data/tpu/flash_causal_spill_sweep.jsonl.gz), which nothing was fitted on.
TEST(TpuCorpusTest, CausalAndF32FlashSweepSpillsLieWithinTheBand) {
  REQUIRE_SWEEP("flash_causal_spill_sweep.jsonl.gz");
  EXPECT_GE(CheckSweepSpillsLieWithinTheBand("flash_causal_spill_sweep.jsonl.gz", {BodyClass::kAttention}).rows, 200);
}

// Flash attention's backward kernels, dq and dkv, over block shapes the corpus does not have
// (its block_q_major equals block_k_major; tests/data/tpu/flash_backward_spill_sweep.jsonl.gz):
// the dot band.
TEST(TpuCorpusTest, FlashBackwardSweepSpillsLieWithinTheBand) {
  REQUIRE_SWEEP("flash_backward_spill_sweep.jsonl.gz");
  EXPECT_GE(CheckSweepSpillsLieWithinTheBand("flash_backward_spill_sweep.jsonl.gz", {BodyClass::kDot}).rows, 200);
}

// The same 42 shapes at head_dim 256 (tests/data/tpu/flash_backward_d256_spill_sweep.jsonl.gz),
// out of sample: the corpus's d = 256 backward kernels have equal q and k blocks.
TEST(TpuCorpusTest, FlashBackwardHeadDim256SweepSpillsLieWithinTheBand) {
  REQUIRE_SWEEP("flash_backward_d256_spill_sweep.jsonl.gz");
  EXPECT_GE(CheckSweepSpillsLieWithinTheBand("flash_backward_d256_spill_sweep.jsonl.gz", {BodyClass::kDot}).rows, 200);
}

// Softmax and layer norm, f32 and bf16, d 256-8192 by 128-2048 rows
// (tests/data/tpu/reduction_spill_sweep.jsonl.gz): the reduction band, [0, figure]. Tall, narrow
// blocks spill more than the block because of their per-row statistics (reduction_output_bytes),
// tall blocks of 1024-3072 lanes far less than it.
TEST(TpuCorpusTest, ReductionSweepSpillsLieWithinTheBand) {
  REQUIRE_SWEEP("reduction_spill_sweep.jsonl.gz");
  EXPECT_GE(CheckSweepSpillsLieWithinTheBand("reduction_spill_sweep.jsonl.gz", {BodyClass::kReduction}).rows, 450);
}

// The same at row widths that are not whole lane tiles (d 200, 520, 1000, 3000;
// tests/data/tpu/reduction_odd_spill_sweep.jsonl.gz), which nothing was fitted on.
TEST(TpuCorpusTest, OddWidthReductionSweepSpillsLieWithinTheBand) {
  REQUIRE_SWEEP("reduction_odd_spill_sweep.jsonl.gz");
  EXPECT_GE(CheckSweepSpillsLieWithinTheBand("reduction_odd_spill_sweep.jsonl.gz", {BodyClass::kReduction}).rows, 300);
}

// JAX's ragged paged attention, 26 shapes (8-32 query heads over 1-8 kv heads, 256-2048 kv tokens
// and 32-256 queries a block; page sizes 16 and 64 give each shape twice) on v4-v7x
// (tests/data/tpu/ragged_spill_sweep.jsonl.gz): the looped band, fitted on these and the corpus's
// fit half. Blocks of few kv tokens spill up to 2.45 x the scores of every head; with the heads'
// running statistics in the figure no spill exceeds 1.26 x it.
TEST(TpuCorpusTest, RaggedSweepSpillsLieWithinTheBand) {
  REQUIRE_SWEEP("ragged_spill_sweep.jsonl.gz");
  EXPECT_GE(CheckSweepSpillsLieWithinTheBand("ragged_spill_sweep.jsonl.gz", {BodyClass::kLooped}).rows, 250);
}

// A block transposed whole: bf16 and int8, 128-2048 rows by 256-4096 columns, and f32, on v4-v7x
// (tests/data/tpu/transpose_spill_sweep.jsonl.gz): the transpose band, fitted on these and the
// corpus's fit half. A 16-bit transpose spills its 128-row strip less 10 (v4), 36 (v5e, v5p) or 50
// (v6e, v7x) vregs; the central estimate is within 24 vregs of libtpu's on every compile, where
// the operand's bytes (the figure before body.transposes) were off by up to 0.25 x the block.
TEST(TpuCorpusTest, TransposeSweepSpillsLieWithinTheBand) {
  REQUIRE_SWEEP("transpose_spill_sweep.jsonl.gz");
  const SweepCheck check =
      CheckSweepSpillsLieWithinTheBand("transpose_spill_sweep.jsonl.gz", {BodyClass::kTranspose, BodyClass::kStreaming});
  EXPECT_GE(check.rows, 350);
  EXPECT_LE(check.worst_central_error_bytes, 24 * 4096);
  std::printf("transpose sweep: central estimate off by at most %lld B\n",
              static_cast<long long>(check.worst_central_error_bytes));
}

// Blocks of (lead, rows, cols) with their two minor dims swapped, lead 1, 2 and 4
// (tests/data/tpu/transpose_batched_spill_sweep.jsonl.gz), which nothing was fitted on: the
// leading dim does not multiply what is held (v6e spills 14 vregs at 512 x 1024 for every lead),
// so the figure is the largest transpose, not its count.
TEST(TpuCorpusTest, BatchedTransposeSweepSpillsLieWithinTheBand) {
  REQUIRE_SWEEP("transpose_batched_spill_sweep.jsonl.gz");
  const SweepCheck check =
      CheckSweepSpillsLieWithinTheBand("transpose_batched_spill_sweep.jsonl.gz", {BodyClass::kTranspose});
  EXPECT_GE(check.rows, 40);
  EXPECT_LE(check.worst_central_error_bytes, 24 * 4096);
}

// int8 copies of unaligned widths (minor dim 129-1000, not a multiple of 128), 64-4096 rows,
// leading dims 1-4 (tests/data/tpu/unaligned8_spill_sweep.jsonl.gz): v4 spills the block widened
// to 32 bits less 21-28 vregs, or nothing at widths 160, 192 and 255, at 64 rows and at 192 rows of most widths; v5e-v7x nothing. The streaming
// band holds every one.
TEST(TpuCorpusTest, UnalignedNarrowLoadSweepSpillsLieWithinTheBand) {
  REQUIRE_SWEEP("unaligned8_spill_sweep.jsonl.gz");
  const SweepCheck check = CheckSweepSpillsLieWithinTheBand("unaligned8_spill_sweep.jsonl.gz", {BodyClass::kStreaming});
  EXPECT_GE(check.rows, 400);
  EXPECT_EQ(check.large_spills_within_1pct, check.large_spills);
}

// bf16 matmuls with an f32 accumulator over blocks that are not powers of two (384-1536;
// tests/data/tpu/matmul_odd_spill_sweep.jsonl.gz): the matmul band. No coefficient was fitted on
// it; the rule that k's uneven passes keep a column of partials was read off it (k = 384).
TEST(TpuCorpusTest, OddBlockMatmulSweepSpillsLieWithinTheBand) {
  REQUIRE_SWEEP("matmul_odd_spill_sweep.jsonl.gz");
  EXPECT_GE(CheckSweepSpillsLieWithinTheBand("matmul_odd_spill_sweep.jsonl.gz", {BodyClass::kMatmul}).rows, 60);
}

// f32, int8 and fp8 matmuls over blocks of 384-1536, megablox gmm over tiles of 384-1536 and paged
// attention at head counts, head dims and pages per block the corpus does not have
// (tests/data/tpu/kernels_odd_spill_sweep.jsonl.gz): no central was fitted on it, but the bands'
// bounds take it (fit_spill_model.py --bound-sweep), since f32 blocks spilled beyond what the
// corpus's 32-bit band allowed (v5e 1536 x 768 x 384: 1.77 x held).
TEST(TpuCorpusTest, OddKernelSweepSpillsLieWithinTheBand) {
  REQUIRE_SWEEP("kernels_odd_spill_sweep.jsonl.gz");
  EXPECT_GE(CheckSweepSpillsLieWithinTheBand("kernels_odd_spill_sweep.jsonl.gz",
                                             {BodyClass::kMatmul, BodyClass::kMatmul8, BodyClass::kMatmul32,
                                              BodyClass::kLooped, BodyClass::kDot, BodyClass::kStreaming})
                .rows,
            100);
}

// Flash attention's backward kernels causal and in f32, and transposes of 384-1152 blocks in bf16
// and int8 (tests/data/tpu/misc_odd_spill_sweep.jsonl.gz): no central was fitted on it, but the
// bands' bounds take it (--bound-sweep), since causal dq and dkv spilled up to 1.5 x the dot band's
// high on v6e and two transposes of 384 rows on v6e and v7x 2 vregs below the transpose band.
TEST(TpuCorpusTest, CausalBackwardAndOddTransposeSweepSpillsLieWithinTheBand) {
  REQUIRE_SWEEP("misc_odd_spill_sweep.jsonl.gz");
  EXPECT_GE(CheckSweepSpillsLieWithinTheBand("misc_odd_spill_sweep.jsonl.gz",
                                             {BodyClass::kDot, BodyClass::kDot32, BodyClass::kTranspose,
                                              BodyClass::kStreaming})
                .rows,
            90);
}

// A holdout sweep, kept out of every fit and bound: its compiles judged against the band, those
// outside it printed (not failed: the tests hold their count as measured).
SweepCheck CheckHoldout(const std::string& file, const std::set<BodyClass>& classes) {
  const SweepCheck check = CheckSweepSpillsLieWithinTheBand(file, classes, /*expect_inside=*/false);
  for (const std::string& o : check.outside) std::printf("%s: outside the band: %s\n", file.c_str(), o.c_str());
  std::printf("%s: %zu of %d compiles outside the band\n", file.c_str(), check.outside.size(), check.rows);
  return check;
}

// Every kind at shapes no other sweep or corpus row has (tests/data/tpu/holdout_spill_sweep.jsonl.gz):
// how far the bands reach beyond what they were drawn from.
TEST(TpuCorpusTest, HoldoutSweepSpillsStayAsMeasured) {
  REQUIRE_SWEEP("holdout_spill_sweep.jsonl.gz");
  const SweepCheck check =
      CheckHoldout("holdout_spill_sweep.jsonl.gz",
                   {BodyClass::kAttention, BodyClass::kDot, BodyClass::kMatmul, BodyClass::kMatmul32,
                    BodyClass::kReduction, BodyClass::kTranspose, BodyClass::kLooped, BodyClass::kStreaming});
  EXPECT_GE(check.rows, 100);
  // No more misses than recorded when the band was fitted (docs/validation/tpu-history.md, "The
  // holdout sweeps", lists each).
  EXPECT_LE(check.outside.size(), 3u);
}

// A second holdout (tests/data/tpu/holdout2_spill_sweep.jsonl.gz), kept out like the first.
TEST(TpuCorpusTest, SecondHoldoutSweepSpillsStayAsMeasured) {
  REQUIRE_SWEEP("holdout2_spill_sweep.jsonl.gz");
  const SweepCheck check =
      CheckHoldout("holdout2_spill_sweep.jsonl.gz",
                   {BodyClass::kAttention, BodyClass::kDot, BodyClass::kDot32, BodyClass::kMatmul, BodyClass::kMatmul8,
                    BodyClass::kMatmul32, BodyClass::kReduction, BodyClass::kTranspose, BodyClass::kLooped,
                    BodyClass::kStreaming});
  EXPECT_GE(check.rows, 80);
  // No more misses than recorded (docs/validation/tpu-history.md, "The holdout sweeps").
  EXPECT_LE(check.outside.size(), 1u);
}

// A FITS with less to spare at the high bound than the largest band miss of the two holdouts is
// worded as near the limit (kNearLimitSpareBytes, spill_model.h): that figure is theirs.
TEST(TpuCorpusTest, HoldoutBandMissesStayWithinTheLargest) {
  REQUIRE_SWEEP("holdout_spill_sweep.jsonl.gz");
  REQUIRE_SWEEP("holdout2_spill_sweep.jsonl.gz");
  const std::set<BodyClass> all = {BodyClass::kAttention, BodyClass::kDot,       BodyClass::kDot32,     BodyClass::kMatmul,
                                   BodyClass::kMatmul8,   BodyClass::kMatmul32,  BodyClass::kReduction, BodyClass::kTranspose,
                                   BodyClass::kLooped,    BodyClass::kStreaming};
  const int64_t worst = std::max(CheckHoldout("holdout_spill_sweep.jsonl.gz", all).worst_beyond_high_bytes,
                                 CheckHoldout("holdout2_spill_sweep.jsonl.gz", all).worst_beyond_high_bytes);
  EXPECT_EQ(worst, kNearLimitSpareBytes);
}

// The worst answer is FITS for a kernel the compiler rejects: none in the whole corpus.
TEST(TpuCorpusTest, NoFalseFits) {
  REQUIRE_CORPUS();
  const CorpusResult& c = Corpus();
  EXPECT_TRUE(c.false_fits.empty()) << c.false_fits.size() << " false FITS, first: " << c.false_fits.front();
}

// A VMEM failure comes in one of XLA's three errors: E1001 against the scoped limit; the capacity
// error, which XLA checks first, when the program exceeds what one core may use (on v4, whose
// default scoped limit is the whole VMEM, every failure); or, where the scoped region is the whole
// VMEM, "Allocation (size=...) would exceed memory" for one window or scratch buffer larger than
// it. Ours says the one libtpu said, on every failing row.
TEST(TpuCorpusTest, VmemErrorsAreWordedAsLibtpus) {
  REQUIRE_CORPUS();
  int rows = 0;
  for (const auto& [gen, t] : Corpus().by_half.at("all")) {
    EXPECT_EQ(t.worded_alike, t.worded_rows) << gen;
    rows += t.worded_rows;
  }
  EXPECT_GE(rows, 350);
  std::printf("%d failing compiles, %zu worded otherwise than by libtpu\n", rows, Corpus().wording_misses.size());
  for (const std::string& miss : Corpus().wording_misses) ADD_FAILURE() << miss;
}

// Every kernel Mosaic refuses to compile (Buffered(3), int8 arithmetic, int8 matmuls on v4,
// misaligned int8 blocks) is refused, and no compilable kernel is.
TEST(TpuCorpusTest, NotCompilableKernelsAreRefused) {
  REQUIRE_CORPUS();
  for (const auto& [gen, t] : Corpus().by_half.at("all")) {
    EXPECT_EQ(t.invalid_agree, t.invalid_rows) << gen;
    EXPECT_EQ(t.invalid_false, 0) << gen;
  }
}

// When the windows and scratch alone exceed the limit, XLA's E1001 figure is theirs, and ours
// equals it to 1%: the BlockSpec model is exact.
TEST(TpuCorpusTest, PreSpillFiguresAreExact) {
  REQUIRE_CORPUS();
  for (const auto& [gen, t] : Corpus().by_half.at("all")) {
    EXPECT_EQ(t.pre_spill_within, t.pre_spill) << gen;
  }
}

// simulate --confirm against the corpus (bench/tpu/confirm_cli.py, recorded in
// tests/data/tpu/export_confirm.jsonl.gz): libtpu compiling a graph's exported call says what it
// said of the traced function, the verdict and the bytes to the byte, on every row it compiled,
// the AT RISK ones among them. The rows it did not compile are kernels the model refuses before
// compiling (libtpu refuses them too); a ragged paged kernel traced without the TPU's device would
// be one more (its lowering asks the device kind; confirm_cli.py traces under it).
// libtpu's verdict as the confirmed verdict simulate --confirm reports (tpu_aot.CONFIRMED_VERDICTS);
// empty for a verdict with none (a timeout).
std::string ConfirmedVerdict(const std::string& libtpu) {
  static const auto* confirmed = new std::map<std::string, std::string>{{"fits", "FITS"},
                                                                        {"vmem_scoped", "DOES_NOT_FIT"},
                                                                        {"vmem_capacity", "DOES_NOT_FIT"},
                                                                        {"vmem_alloc", "DOES_NOT_FIT"},
                                                                        {"error", "NOT_COMPILABLE"}};
  auto it = confirmed->find(libtpu);
  return it == confirmed->end() ? std::string() : it->second;
}

TEST(TpuCorpusTest, SimulateConfirmSaysWhatLibtpuSaidOfTheTracedFunction) {
  SCRATCHSIM_REQUIRE_TEST_DATA("tests/data/tpu/export_confirm.jsonl.gz");
  REQUIRE_CORPUS();
  const std::string dir = std::string(SCRATCHSIM_SOURCE_DIR) + "/tests/data/tpu/";
  // id -> libtpu's verdict on the traced function (as a confirmed verdict) and its bytes
  std::map<std::string, std::pair<std::string, int64_t>> corpus;
  for (const std::string& line : ReadGzipLines(dir + "corpus.jsonl.gz")) {
    Struct row;
    if (!google::protobuf::util::JsonStringToMessage(line, &row).ok() || Sub(row, "result") == nullptr) continue;
    const Struct& result = *Sub(row, "result");
    const std::string verdict = ConfirmedVerdict(Str(result, "verdict"));
    if (verdict.empty()) continue;
    const Struct* pallas = Sub(result, "pallas");
    corpus[Str(row, "id")] = {verdict, verdict == "FITS" ? (pallas ? Num(*pallas, "total_bytes") : 0)
                                                         : Num(result, "size_bytes")};
  }
  int compiled = 0, at_risk = 0, refused = 0, not_exported = 0;
  std::set<std::string> settled_fits;  // AT RISK by the model, FITS by libtpu through --confirm
  std::set<std::string> recorded;
  for (const std::string& line : ReadGzipLines(dir + "export_confirm.jsonl.gz")) {
    Struct row;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(line, &row).ok()) << line.substr(0, 200);
    if (Field(row, "header") != nullptr) continue;
    const std::string id = Str(row, "id");
    ASSERT_TRUE(corpus.count(id)) << id << " is not a corpus compile";
    const auto& [verdict, bytes] = corpus.at(id);
    recorded.insert(id);
    if (!Str(row, "confirmed_verdict").empty()) {
      ++compiled;
      at_risk += Str(row, "model_verdict") == "AT_RISK";
      if (Str(row, "model_verdict") == "AT_RISK" && Str(row, "confirmed_verdict") == "FITS") settled_fits.insert(id);
      EXPECT_EQ(Str(row, "confirmed_verdict"), verdict) << id;
      if (verdict != "NOT_COMPILABLE") EXPECT_EQ(Num(row, "confirmed_bytes"), bytes) << id;
    } else if (Field(row, "refused_by_model") != nullptr && Field(row, "refused_by_model")->bool_value()) {
      ++refused;
      EXPECT_EQ(verdict, "NOT_COMPILABLE") << id << ": the model refused a kernel libtpu compiles";
    } else {
      ++not_exported;
      EXPECT_EQ(Str(row, "kind"), "ragged_paged") << id << ": " << Str(row, "error");
      EXPECT_THAT(Str(row, "error"), ::testing::HasSubstr("pallas.jax_export")) << id;
    }
  }
  std::printf("simulate --confirm: %d corpus kernels compiled (%d of them AT RISK by the model), all as libtpu "
              "compiled the traced function; %d refused by the model before compiling; %d not exported\n",
              compiled, at_risk, refused, not_exported);
  EXPECT_GE(compiled, 200);
  EXPECT_GE(at_risk, 50);
  for (const std::string& id : Corpus().at_risk_ids) EXPECT_TRUE(recorded.count(id)) << id << ": AT RISK, not in the record";
  std::printf("the record has all %zu AT RISK corpus kernels\n", Corpus().at_risk_ids.size());
  // Every disagreement of the model with libtpu is an AT RISK kernel that compiles
  // (AgreementAndAtRiskStayAsMeasured); with --confirm at-risk libtpu settles each as FITS, so the
  // verdicts agree on every corpus compile.
  std::map<std::string, int> settled_per_gen;
  for (const std::string& entry : Corpus().at_risk_fitting) {
    const std::string id = entry.substr(0, entry.find(": "));
    EXPECT_TRUE(settled_fits.count(id)) << id << ": AT RISK and compiles, but not confirmed";
    ++settled_per_gen[id.substr(0, id.find('/'))];
  }
  for (const auto& [gen, t] : Corpus().by_half.at("all")) {
    const int agree = t.agree + settled_per_gen[gen];
    std::printf("%s with --confirm at-risk: verdict agreement %d of %d (%s)\n", gen.c_str(), agree, t.rows,
                Percent(agree, t.rows).c_str());
    EXPECT_EQ(agree, t.rows) << gen;
  }
}

// With --confirm always (tests/data/tpu/confirm_failing.jsonl.gz: every corpus compile that ran
// out of VMEM, traced under its generation's device and confirmed through simulate), a failing
// compile's bytes are libtpu's: the error's figure, and what it needs where the corpus measured
// that, each within 1% of the corpus's (to the byte: the same compile of the same kernel).
TEST(TpuCorpusTest, ConfirmGivesLibtpusBytesOnEveryFailingCompile) {
  REQUIRE_CORPUS();
  SCRATCHSIM_REQUIRE_TEST_DATA("tests/data/tpu/confirm_failing.jsonl.gz");
  int rows = 0;
  for (const auto& [gen, t] : Corpus().by_half.at("all")) {
    EXPECT_EQ(t.confirmed, t.with_figure) << gen << ": failing compiles that --confirm did not compile";
    EXPECT_EQ(t.within_confirmed, t.with_figure) << gen;
    EXPECT_EQ(t.exact_confirmed, t.with_figure) << gen;
    rows += t.with_figure;
  }
  EXPECT_GE(rows, 300);
}

// The figures of the shipped model (docs/tpu.md, "Against the compiler"): a change that loses
// agreement, adds AT RISK rows or moves figures away from the compiler's fails here.
// A failing compile whose error gives the whole requirement (E1001 over the windows and scratch,
// spills included; a capacity error's total): libtpu needs at least that much, so the estimate's
// high bound, the vmem_limit_bytes our report suggests, must reach it on every such row, or a
// limit between the two would be a false FITS.
TEST(TpuCorpusTest, HighBoundReachesEveryFailingFigure) {
  REQUIRE_CORPUS();
  int rows = 0;
  for (const auto& [gen, t] : Corpus().by_half.at("all")) {
    EXPECT_EQ(t.high_holds_figure, t.with_whole_figure) << gen;
    rows += t.with_whole_figure;
  }
  EXPECT_GE(rows, 150);
}

TEST(TpuCorpusTest, AgreementAndAtRiskStayAsMeasured) {
  REQUIRE_CORPUS();
  struct Expected {
    const char* gen;
    double min_agreement;  // of compiles with a VMEM verdict
    int max_at_risk;
    double min_within;     // of failing compiles with a figure
  };
  // Floors and ceilings just under the shipped model's figures (docs/tpu.md, "Against the
  // compiler"). Softmax and layer norm blocks that spill past the limit are AT RISK, not DOES NOT
  // FIT: their band's low bound is 0.
  for (const Expected& e : {Expected{"v4", 0.978, 22, 0.855}, Expected{"v5e", 0.991, 19, 0.905},
                            Expected{"v5p", 0.988, 19, 0.91}, Expected{"v6e", 0.993, 9, 0.89},
                            Expected{"v7x", 0.99, 9, 0.94}}) {
    const Tally& t = Corpus().by_half.at("all").at(e.gen);
    EXPECT_GE(static_cast<double>(t.agree) / t.rows, e.min_agreement) << e.gen;
    EXPECT_LE(t.at_risk, e.max_at_risk) << e.gen;
    EXPECT_GE(static_cast<double>(t.within) / std::max(t.with_figure, 1), e.min_within) << e.gen;
  }
  // FITS worded as near the limit (docs/tpu.md, "The compiler in the loop").
  int near_limit = 0;
  for (const auto& [gen, t] : Corpus().by_half.at("all")) near_limit += t.near_limit_fits;
  EXPECT_LE(near_limit, 10);
  // The limit that makes the verdict FITS holds libtpu's requirement on every row that has one.
  EXPECT_TRUE(Corpus().limit_misses.empty()) << Corpus().limit_misses.front();
}

}  // namespace
}  // namespace scratchsim

namespace scratchsim {
namespace {

// How the model does on one file of kernel families the bands were never fitted on
// (tests/data/tpu/{dev,heldout}_families*.jsonl.gz): each compile was made at the generation's
// default limit (result_default) and with the limit raised, where the report gives the kernel's
// requirement (result.total_bytes).
// One family's figures in a family file: docs/tpu.md's per-family tables.
struct FamilyTally {
  int compiles = 0, at_risk = 0, with_requirement = 0, within_5pct = 0, within_1pct = 0, libtpu_spills = 0;
  std::vector<double> spill_ratios;  // the model's central spill over libtpu's slots, where libtpu spills
};

struct FamilyCheck {
  std::map<std::string, FamilyTally> by_family;  // kind -> its figures
  int rows = 0, decisive = 0, agree = 0, at_risk = 0, fits = 0, unsettled = 0, with_requirement = 0;
  int within_1pct = 0, within_5pct = 0, high_holds = 0;
  std::vector<std::string> outside_fit;  // bodies outside the shapes their band was drawn from
  std::vector<std::string> false_fits;   // FITS where libtpu fails at the default limit
  std::vector<std::string> false_refusals;  // DOES NOT FIT where libtpu compiles at the default limit
  std::vector<std::string> high_misses;  // the high bound below the requirement: a false FITS at
                                         // some limit between the two
  int exact_part_equal = 0;              // the exactly known part equals libtpu's, spills aside
  std::vector<std::string> exact_below;  // ... and where it is below libtpu's, by how much
  std::vector<std::string> exact_above;  // ... and where above
};

FamilyCheck CheckFamilies(const std::string& file) {
  FamilyCheck out;
  for (const std::string& line : ReadGzipLines(std::string(SCRATCHSIM_SOURCE_DIR) + "/tests/data/tpu/" + file)) {
    Struct row;
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(line, &row).ok()) << file;
    if (Field(row, "header") != nullptr) continue;
    const std::string id = Str(row, "id"), gen = Str(row, "gen");
    const Struct* raised = Sub(row, "result");
    const Struct* at_default = Sub(row, "result_default");
    KernelGraph graph;
    if (raised == nullptr || at_default == nullptr ||
        !google::protobuf::TextFormat::ParseFromString(Str(row, "graph"), &graph)) {
      ADD_FAILURE() << id << ": no result, no default result or a graph that does not parse";
      continue;
    }
    graph.mutable_tpu()->clear_vmem_limit_bytes();  // judged at the generation's default limit
    const Outcome model = Judge(graph, TpuDevice(gen));
    const std::string libtpu = Str(*at_default, "verdict");
    const bool libtpu_fits = libtpu == "fits";
    const bool libtpu_vmem = absl::StartsWith(libtpu, "vmem");
    if (!libtpu_fits && !libtpu_vmem) continue;  // Mosaic refused it, or it timed out
    ++out.rows;
    FamilyTally& family = out.by_family[Str(row, "kind")];
    ++family.compiles;
    family.at_risk += model.prediction == "at risk";
    const PallasBody& body = graph.pallas().body();
    const std::vector<std::string> outside =
        ShapesOutsideTheFit(body, EstimateSpills(body, TpuDevice(gen)), TpuDevice(gen));
    if (!outside.empty()) {
      out.outside_fit.push_back(absl::StrCat(id, " (", model.prediction, "): ", absl::StrJoin(outside, "; ")));
    }
    if (model.prediction == "at risk") ++out.at_risk;
    if (model.prediction == "fits" || model.prediction == "does not fit") {
      ++out.decisive;
      if ((model.prediction == "fits") == libtpu_fits) ++out.agree;
      if (model.prediction == "fits") ++out.fits;
      if (model.prediction == "fits" && !model.unsettled.empty()) ++out.unsettled;
      if (model.prediction == "fits" && !libtpu_fits) out.false_fits.push_back(absl::StrCat(id, ": ", libtpu));
      if (model.prediction == "does not fit" && libtpu_fits) {
        out.false_refusals.push_back(absl::StrCat(id, ": model ", model.scoped, " B, ", model.message));
      }
    }
    if (Str(*raised, "verdict") != "fits" || Num(*raised, "total_bytes") <= 0) continue;
    const int64_t requirement = Num(*raised, "total_bytes");
    ++out.with_requirement;
    const double error = std::abs(static_cast<double>(model.scoped - requirement)) / static_cast<double>(requirement);
    // What the model knows exactly (windows, scratch, Mosaic's counted scratch) against libtpu's
    // requirement less its spill slots.
    const int64_t libtpu_exact = requirement - Num(*raised, "spill_bytes");
    if (model.exact == libtpu_exact) ++out.exact_part_equal;
    if (model.exact < libtpu_exact) out.exact_below.push_back(absl::StrCat(id, ": ", libtpu_exact - model.exact, " B"));
    if (model.exact > libtpu_exact) out.exact_above.push_back(absl::StrCat(id, ": ", model.exact - libtpu_exact, " B"));
    if (error <= 0.01) ++out.within_1pct;
    if (error <= 0.05) ++out.within_5pct;
    ++family.with_requirement;
    family.within_1pct += error <= 0.01;
    family.within_5pct += error <= 0.05;
    if (const int64_t slots = Num(*raised, "spill_bytes"); slots > 0) {
      ++family.libtpu_spills;
      family.spill_ratios.push_back(static_cast<double>(model.scoped - model.exact) / static_cast<double>(slots));
    }
    if (model.scoped_high >= requirement) {
      ++out.high_holds;
    } else {
      out.high_misses.push_back(absl::StrCat(id, ": high ", model.scoped_high, " < libtpu ", requirement));
    }
  }
  std::printf("%s: %d rows; decisive %d, agreeing %d, false FITS %zu, AT RISK %d, FITS %d (unsettled %d); bytes of "
              "%d within 1%% %d, within 5%% %d; high bound holds on %d\n",
              file.c_str(), out.rows, out.decisive, out.agree, out.false_fits.size(), out.at_risk, out.fits, out.unsettled,
              out.with_requirement, out.within_1pct, out.within_5pct, out.high_holds);
  std::printf("  the exactly known part equals libtpu's requirement less its spill slots on %d of %d; below it on %zu\n",
              out.exact_part_equal, out.with_requirement, out.exact_below.size());
  for (const std::string& r : out.false_refusals) std::printf("  DOES NOT FIT where libtpu compiles %s\n", r.c_str());
  for (const std::string& b : out.exact_below) std::printf("  exact part below libtpu's %s\n", b.c_str());
  for (const std::string& a : out.exact_above) std::printf("  exact part above libtpu's %s\n", a.c_str());
  std::printf("  %zu outside the shapes their spill band was drawn from\n", out.outside_fit.size());
  for (const std::string& o : out.outside_fit) std::printf("  outside the fitted shapes %s\n", o.c_str());
  std::printf("  | family | compiles | AT RISK | bytes within 5%% / 1%% | libtpu spills on | model / libtpu spill slots "
              "where libtpu spills: median (range) |\n");
  for (auto& [kind, t] : out.by_family) {
    std::string ratios = "-";
    if (!t.spill_ratios.empty()) {
      absl::c_sort(t.spill_ratios);
      const size_t n = t.spill_ratios.size();
      const double median = (t.spill_ratios[(n - 1) / 2] + t.spill_ratios[n / 2]) / 2;
      ratios = absl::StrFormat("%.2f (%.2f-%.2f)", median, t.spill_ratios.front(), t.spill_ratios.back());
    }
    std::printf("  | %s | %d | %d | %d / %d of %d | %d | %s |\n", kind.c_str(), t.compiles, t.at_risk, t.within_5pct,
                t.within_1pct, t.with_requirement, t.libtpu_spills, ratios.c_str());
  }
  for (const std::string& f : out.false_fits) std::printf("  false FITS %s\n", f.c_str());
  for (const std::string& m : out.high_misses) std::printf("  high bound miss %s\n", m.c_str());
  return out;
}

// What every family file's test holds: no false FITS at the default limit or at any limit between
// the model's high bound and libtpu's requirement, and its other figures as measured (floors for
// the bytes, ceilings for AT RISK; the exactly known part where a test gives it).
struct HeldAsMeasured {
  int min_rows = 0;
  int within_5pct = 0, within_1pct = 0;
  int max_at_risk = std::numeric_limits<int>::max();
  int exact_part_equal = -1;  // -1: not held
  size_t exact_below = 0;
  // Rows whose requirement lies above the model's high bound, each named where the test is: a
  // limit between the two would be a false FITS. The target is none.
  size_t known_high_misses = 0;
  // False FITS at the default limit, each named where the test is. The target is none.
  size_t known_false_fits = 0;
};

FamilyCheck ExpectNoFalseFitsAndFiguresAsMeasured(const std::string& file, const HeldAsMeasured& held) {
  const FamilyCheck check = CheckFamilies(file);
  EXPECT_GE(check.rows, held.min_rows) << file;
  EXPECT_EQ(check.false_fits.size(), held.known_false_fits) << file;
  EXPECT_EQ(check.high_misses.size(), held.known_high_misses) << file;
  EXPECT_GE(check.within_5pct, held.within_5pct) << file;
  EXPECT_GE(check.within_1pct, held.within_1pct) << file;
  EXPECT_LE(check.at_risk, held.max_at_risk) << file;
  if (held.exact_part_equal >= 0) {
    EXPECT_EQ(check.exact_part_equal, held.exact_part_equal) << file;
    EXPECT_EQ(check.exact_below.size(), held.exact_below) << file;
  }
  return check;
}

// The families the failure report named (bench/tpu/heldout_kernels.py, set "dev"): the model was
// developed looking at them, so they are not a held-out figure. No false FITS at the default
// limit, and the high bound holds libtpu's requirement on every compile: a v7x block-sparse matmul
// (2048 x 512 x 512 bf16, blocks by scalar-prefetched indices), which spills 1.9 MB where the
// matmul band says 0, has a left operand twice the largest the band's figure-0 regime was drawn
// from, so its band is widened (docs/tpu.md, "The vreg replay": shapes the band was drawn from).
TEST(TpuCorpusTest, DevFamiliesHaveNoFalseFitsAtTheDefaultLimit) {
  REQUIRE_SWEEP("dev_families.jsonl.gz");
  // The exactly known part is below libtpu's by its internal scratch on the v5e and v5p cumulative
  // sums (6). The v5p GELU of two parallel steps, a false DOES NOT FIT with its windows counted
  // double-buffered, is AT RISK with them single (the megacore rule); the widened central
  // (computed values, the replay's alone) was chosen on the bytes figures (docs/tpu.md,
  // "Held-out families": computed values).
  ExpectNoFalseFitsAndFiguresAsMeasured(
      "dev_families.jsonl.gz",
      {.min_rows = 300, .within_5pct = 235, .within_1pct = 143, .max_at_risk = 49, .exact_part_equal = 288,
       .exact_below = 6});
}

// The register pressure P of LLO's schedule (tests/data/tpu/vreg_alloc_probe.txt, made by
// bench/tpu/probe_vreg_alloc.py on dev-family kernels only) against the vreg replay's computed
// values held across a barrier, on the probed kernel's traced body (dev_families.jsonl.gz). The
// table is docs/tpu.md's ("How libtpu allocates spill slots"); the counts are held as measured.
std::string ParamsKey(const std::string& kind, const std::string& gen, const Struct& params) {
  std::map<std::string, std::string> sorted;
  for (const auto& [name, value] : params.fields()) {
    sorted[name] = value.has_string_value() ? value.string_value() : absl::StrCat(value.number_value());
  }
  return absl::StrCat(kind, " ", gen, " ", absl::StrJoin(sorted, ",", absl::PairFormatter("=")));
}

TEST(TpuCorpusTest, ComputedValuesHeldAcrossABarrierAgainstLlosPressure) {
  REQUIRE_SWEEP("dev_families.jsonl.gz");
  REQUIRE_SWEEP("vreg_alloc_probe.txt");
  std::map<std::string, std::pair<std::string, KernelGraph>> graphs;  // key -> (gen, graph)
  for (const std::string& line :
       ReadGzipLines(std::string(SCRATCHSIM_SOURCE_DIR) + "/tests/data/tpu/dev_families.jsonl.gz")) {
    Struct row;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(line, &row).ok());
    const Struct* params = Sub(row, "params");
    if (params == nullptr) continue;
    KernelGraph graph;
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(Str(row, "graph"), &graph)) << Str(row, "id");
    graphs[ParamsKey(Str(row, "kind"), Str(row, "gen"), *params)] = {Str(row, "gen"), std::move(graph)};
  }
  int with_pressure = 0, wide_rows = 0, wide_within_10 = 0, narrow_within_10 = 0;
  std::printf("| gen | kernel | P | computed held | + barrier results | held (loads too) | computed / P |\n");
  for (const std::string& line :
       ReadGzipLines(std::string(SCRATCHSIM_SOURCE_DIR) + "/tests/data/tpu/vreg_alloc_probe.txt")) {
    if (line.empty() || line[0] == '#') continue;
    Struct probe;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(line, &probe).ok()) << line;
    const int64_t pressure = Num(probe, "pressure");
    if (pressure <= 0) continue;  // no register-pressure dump
    const std::string key = ParamsKey(Str(probe, "kind"), Str(probe, "gen"), *Sub(probe, "params"));
    auto it = graphs.find(key);
    ASSERT_NE(it, graphs.end()) << key << ": not in dev_families.jsonl.gz";
    absl::StatusOr<VregReplay> replay = ReplayVregs(it->second.second.pallas().body(), TpuDevice(it->second.first));
    ASSERT_TRUE(replay.ok()) << key << ": " << replay.status();
    const int64_t computed = replay->peak_computed_held_bytes / 4096;
    const int64_t results = (replay->peak_computed_held_bytes + replay->barrier_results_bytes) / 4096;
    const double ratio = static_cast<double>(computed) / static_cast<double>(pressure);
    const bool within = std::abs(ratio - 1) <= 0.10;
    ++with_pressure;
    if (Num(probe, "vregs") == 64) {
      ++wide_rows;
      wide_within_10 += within;
    } else {
      narrow_within_10 += within;
    }
    std::printf("| %s | %s | %lld | %lld | %lld | %lld | %.2f |\n", it->second.first.c_str(), key.c_str(),
                static_cast<long long>(pressure), static_cast<long long>(computed), static_cast<long long>(results),
                static_cast<long long>(replay->peak_held_bytes / 4096), ratio);
  }
  std::printf("%d kernels with a P; computed held within 10%% of P on %d of %d 64-vreg rows, %d of %d on v4\n",
              with_pressure, wide_within_10, wide_rows, narrow_within_10, with_pressure - wide_rows);
  EXPECT_EQ(with_pressure, 34);
  // Not a predictor of P: within 10% on 4 of the 20 64-vreg rows (0 where LLO holds a turned block,
  // a streamed copy or an MXU operand: 75-436 vregs), so it is not wired into the estimate. A
  // change that moves these counts changes docs/tpu.md's table.
  EXPECT_EQ(wide_within_10, 4);
  EXPECT_EQ(narrow_within_10, 2);
}

// Every family file, under both libtpu versions.
std::vector<std::string> AllFamilyFiles() {
  std::vector<std::string> out;
  for (const char* set : {"dev", "heldout", "heldout2", "heldout3", "heldout4", "heldout5", "heldout6", "heldout7",
                          "heldout8"}) {
    out.push_back(absl::StrCat(set, "_families.jsonl.gz"));
    out.push_back(absl::StrCat(set, "_families_libtpu0052.jsonl.gz"));
  }
  return out;
}

// Calls `visit` with every compile of `files` that libtpu fits: its file, its row, libtpu's result
// and its graph's body. A missing file fails the test.
void ForEachFittingCompile(
    const std::vector<std::string>& files,
    const std::function<void(const std::string&, const Struct&, const Struct&, const PallasBody&)>& visit) {
  for (const std::string& file : files) {
    SCRATCHSIM_REQUIRE_TEST_DATA("tests/data/tpu/" + file);
    for (const std::string& line : ReadGzipLines(std::string(SCRATCHSIM_SOURCE_DIR) + "/tests/data/tpu/" + file)) {
      Struct row;
      ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(line, &row).ok()) << file;
      const Struct* result = Sub(row, "result");
      if (Field(row, "header") != nullptr || result == nullptr || Str(*result, "verdict") != "fits") continue;
      KernelGraph graph;
      if (!google::protobuf::TextFormat::ParseFromString(Str(row, "graph"), &graph)) continue;
      visit(file, row, *result, graph.pallas().body());
    }
  }
}

// Checks a hold no schedule avoids on every recorded compile of the family files: libtpu spills at
// least what the register file cannot keep of `held(replay)`, on every compile where that is more
// than nothing (at least 20 of them). Prints how many and the tightest.
void ExpectSpillsHoldWhat(const char* what, int64_t (*held)(const VregReplay&)) {
  int rows = 0, bounded = 0;
  double tightest = 1e9;
  std::string tightest_id;
  ForEachFittingCompile(AllFamilyFiles(), [&](const std::string& file, const Struct& row, const Struct& result,
                                              const PallasBody& body) {
    const DeviceModel device = TpuDevice(Str(row, "gen"));
    absl::StatusOr<VregReplay> replay = ReplayVregs(body, device);
    ASSERT_TRUE(replay.ok()) << Str(row, "id") << ": " << replay.status();
    ++rows;
    const int64_t low = held(*replay) - RegisterFileBytes(device);
    if (low <= 0) return;
    ++bounded;
    const int64_t spill = Num(result, "spill_bytes");
    EXPECT_GE(spill, low) << Str(row, "gen") << " " << Str(row, "id") << " " << Str(row, "kind") << " (" << file
                          << "): " << what << " " << held(*replay) << " B";
    const double ratio = static_cast<double>(spill) / static_cast<double>(low);
    if (ratio < tightest) tightest = ratio, tightest_id = Str(row, "gen") + " " + Str(row, "id");
  });
  std::printf("%d compiles, %d with %s more than the register file; the least spilled is %.3f of that (%s)\n", rows,
              bounded, what, tightest, tightest_id.c_str());
  EXPECT_GE(bounded, 20) << what;
}

// A reduction over a block's sublanes reads every vreg of its operand before it yields, so the
// computed values read on both sides of it are held whole (the low of its band).
TEST(TpuCorpusTest, SpillsHoldWhatColumnSumsHold) {
  ExpectSpillsHoldWhat("a column sum holding", [](const VregReplay& r) { return r.sublane_reduction_computed_held_bytes; });
}

// Each output's stores are one run of LLO's schedule, so a computed value two outputs' stores need
// is held whole between their runs (VregReplay::store_group_held_bytes; the held-out AdamW update's,
// under both libtpu versions, are the compiles with such a hold).
TEST(TpuCorpusTest, SpillsHoldWhatStoreGroupsHold) {
  ExpectSpillsHoldWhat("stores holding", [](const VregReplay& r) { return r.store_group_held_bytes; });
}

// The bound the vreg replay puts on spill slots (SpillBoundBytes: the program-order peak, or every
// value across a rolled loop), checked on every recorded compile whose graph carries its program:
// libtpu's spill slots stay at or below it (rounded to whole vregs), but on the compiles where LLO
// runs independent chains ahead of the program's order, each named with its mechanism.
TEST(TpuCorpusTest, SpillsStayWithinTheReplaysBound) {
  const std::map<std::string, std::string> known_beyond = {
      // Eight rotated heads' loads and unpacks run ahead of the roll (docs/tpu.md, the fourth set's
      // KV cache update; spill_model.cc, UnpackedAheadOfAnXluBytes, bounds the band instead).
      {"v6e/kv_cache_update/d4095bbb3b", "heads unpacked ahead of an XLU roll"},
      {"v7x/kv_cache_update/d4095bbb3b", "heads unpacked ahead of an XLU roll"},
      // 16 independent score-softmax-value chains overlapped (part-tile-concat-probe.txt).
      {"v5e/mha_concat_outproj/049abdd2bf", "independent head chains overlapped"},
      {"v5p/mha_concat_outproj/049abdd2bf", "independent head chains overlapped"},
      // A v4 3x3 depthwise conv2d of the fifth set, whose high bound misses too (docs/tpu.md).
      {"v4/depthwise_conv2d/0a6a7f190c", "shifted windows on v4, not named"}};
  const std::vector<std::string> files = {
      "flash_spill_sweep.jsonl.gz", "flash_head_dim_spill_sweep.jsonl.gz", "flash_causal_spill_sweep.jsonl.gz",
      "flash_backward_spill_sweep.jsonl.gz", "flash_backward_d256_spill_sweep.jsonl.gz",
      "reduction_spill_sweep.jsonl.gz", "reduction_odd_spill_sweep.jsonl.gz", "ragged_spill_sweep.jsonl.gz",
      "transpose_spill_sweep.jsonl.gz", "transpose_batched_spill_sweep.jsonl.gz", "matmul_odd_spill_sweep.jsonl.gz",
      "kernels_odd_spill_sweep.jsonl.gz", "misc_odd_spill_sweep.jsonl.gz", "holdout_spill_sweep.jsonl.gz",
      "holdout2_spill_sweep.jsonl.gz", "unaligned8_spill_sweep.jsonl.gz", "dev_families.jsonl.gz",
      "heldout_families.jsonl.gz", "heldout2_families.jsonl.gz", "heldout_families_libtpu0052.jsonl.gz",
      "heldout2_families_libtpu0052.jsonl.gz", "dev_families_libtpu0052.jsonl.gz", "heldout3_families.jsonl.gz",
      "heldout3_families_libtpu0052.jsonl.gz", "heldout4_families.jsonl.gz", "heldout5_families.jsonl.gz",
      "heldout6_families.jsonl.gz", "heldout7_families.jsonl.gz", "heldout8_families.jsonl.gz",
      "heldout9_families.jsonl.gz", "heldout10_families.jsonl.gz", "heldout11_families.jsonl.gz",
      "heldout12_families.jsonl.gz", "heldout13_families.jsonl.gz"};
  int rows = 0, spilling = 0;
  double worst = 0;
  std::string worst_id;
  ForEachFittingCompile(files, [&](const std::string& file, const Struct& row, const Struct& result,
                                   const PallasBody& body) {
    ASSERT_GT(body.program_size(), 0) << Str(row, "id") << ": re-trace " << file << " (bench/tpu/retrace.py)";
    absl::StatusOr<VregReplay> replay = ReplayVregs(body, TpuDevice(Str(row, "gen")));
    ASSERT_TRUE(replay.ok()) << Str(row, "id") << ": " << replay.status();
    const int64_t spill = Num(result, "spill_bytes");
    const int64_t peak = (SpillBoundBytes(*replay) + 4095) / 4096 * 4096;
    ++rows;
    if (spill == 0) return;
    ++spilling;
    const auto known = known_beyond.find(Str(row, "id"));
    if (known != known_beyond.end()) {
      EXPECT_GT(spill, peak) << known->first << " is within the bound now: take it off the known list";
      return;
    }
    EXPECT_LE(spill, peak) << Str(row, "id") << " (" << file << ")";
    const double ratio = static_cast<double>(spill) / static_cast<double>(std::max<int64_t>(peak, 1));
    if (ratio > worst) worst = ratio, worst_id = Str(row, "id");
  });
  std::printf("%d compiles, %d spilling; the most spilled is %.2f of the replay's bound (%s)\n", rows, spilling,
              worst, worst_id.c_str());
  EXPECT_GE(spilling, 500);
}

// A second held-out set (bench/tpu/heldout_kernels.py, set "heldout2"), written and compiled after
// the replicated-layout rule was fixed, to judge it on structures it was not found on: index and
// position iotas held across reductions and dots, and a gated norm. The same targets; the figures
// are held as measured (docs/tpu.md, "Held-out families").
TEST(TpuCorpusTest, SecondHeldOutSetHasNoFalseFits) {
  REQUIRE_SWEEP("heldout2_families.jsonl.gz");
  ExpectNoFalseFitsAndFiguresAsMeasured(
      "heldout2_families.jsonl.gz", {.min_rows = 100, .within_5pct = 101, .within_1pct = 53, .max_at_risk = 54});
}

// A third held-out set (bench/tpu/heldout_kernels.py, set "heldout3"), written after the second was
// judged and compiled with the model as it stood: scans carried in scratch (a rolled one among
// them), small-rank and integer dots, epilogues that roll lanes, a backward over vocabulary
// blocks. Judged once; the same targets and its figures held as measured (docs/tpu.md, "Held-out
// families").
TEST(TpuCorpusTest, ThirdHeldOutSetHasNoFalseFits) {
  REQUIRE_SWEEP("heldout3_families.jsonl.gz");
  // The exactly known part equals libtpu's wherever the model adds no v4 row-broadcast scratch: the
  // QK-norm + RoPE kernels' 512 B norm-weight window takes the 1 KiB allocation granule
  // (buffer_granule_bytes; tests/data/tpu/allocation_granule_probe.txt), as libtpu allocates it.
  ExpectNoFalseFitsAndFiguresAsMeasured(
      "heldout3_families.jsonl.gz", {.min_rows = 260, .within_5pct = 137, .within_1pct = 77, .max_at_risk = 30,
                                     .exact_part_equal = 249, .exact_below = 0});
}

// A fourth held-out set (bench/tpu/heldout_kernels.py, set "heldout4"), written after the third was
// judged and compiled before the model judged it (the allocation granule in): flash attention's
// dK/dV backward, paged decode attention, group norm, an embedding gather, max pooling, RMSNorm +
// int8 quantization, RoPE + an in-place KV cache update. Judged once; its figures held as measured
// (docs/tpu.md, "Held-out families").
TEST(TpuCorpusTest, FourthHeldOutSetHasNoFalseFits) {
  REQUIRE_SWEEP("heldout4_families.jsonl.gz");
  // Judged blind (before the three rules it led to): decisive 176 of 178 agreeing (two v5p false
  // DOES NOT FIT: two parallel steps, a window single-buffered), bytes within 5% on 137 and within
  // 1% on 101 of 197, AT RISK 32, the high bound short of libtpu's requirement on 6 (four v4 bf16
  // embedding gathers, whose converted one-row values make Mosaic count its internal scratch; a v6e
  // and a v7x KV cache update, whose unpacked heads LLO holds ahead of a roll). docs/tpu.md,
  // "Held-out families". Two dK/dV backward rows (v6e and v7x, f463adf7dc, head dim 256) sit 9-14%
  // under libtpu's requirement: p and dS enter their dots transposed and one MXU tile wide there,
  // which the MXU-pass rule (RightOperandSpansSeveralMxuTiles) does not hold, and libtpu does.
  ExpectNoFalseFitsAndFiguresAsMeasured(
      "heldout4_families.jsonl.gz", {.min_rows = 210, .within_5pct = 148, .within_1pct = 108, .max_at_risk = 30,
                                     .exact_part_equal = 186, .exact_below = 8});
}

// A fifth held-out set (set "heldout5"), written after the fourth set's three rules and compiled
// before the model judged it: a grouped matmul, causal GQA flash attention, depthwise conv2d, int8
// KV decode attention, a VQ codebook argmin, Welford statistics. Held as measured with the rule it
// led to, a dot operand converted from 8 bits unpacked whole on v4 (the blind figures: docs/tpu.md,
// "Held-out families"): no false FITS (v4 int8 KV decode d2d97ebbf5 and a4f3e4de0e, where libtpu
// spills 8.2-8.9 MB, the int8 K block at 32 bits, are DOES NOT FIT). The high bound misses libtpu's
// requirement on 3: a4f3e4de0e on v6e and v7x (by 106-176 KB; on v5e and v5p the replay's score
// block held across the max now bounds it) and a v4 depthwise conv2d (57 KB). Four v4 Welford rows
// have their exactly known part 36 KiB below libtpu's: the internal scratch of their converted
// bf16 rows, an estimate whose central is that (their column sums take no temporaries).
TEST(TpuCorpusTest, FifthHeldOutSetIsHeldAsMeasured) {
  REQUIRE_SWEEP("heldout5_families.jsonl.gz");
  ExpectNoFalseFitsAndFiguresAsMeasured(
      "heldout5_families.jsonl.gz", {.min_rows = 180, .within_5pct = 112, .within_1pct = 69, .max_at_risk = 37,
                                     .exact_part_equal = 156, .exact_below = 8, .known_high_misses = 3});
}

// A sixth held-out set (set "heldout6"), compiled before the model judged it: an int8/int4
// weight-only linear in PyTorch's (out, in) layout with zero points, an fp8 scaled matmul, a
// fused linear + cross-entropy with z-loss, a top-p / min-p sampling mask, flash attention with a
// bias block, splash-style block-sparse attention. Judged once, blind (with the converted-dot-operand
// rule); held as measured (docs/tpu.md, "Held-out families"). Its bytes then led to the replay
// holding no dot operand converted from 8 bits on v5e-v7x, which convert it vreg by vreg
// (tests/data/tpu/converted_dot_operand_probe.txt): the set is no longer blind to that change.
TEST(TpuCorpusTest, SixthHeldOutSetIsHeldAsMeasured) {
  REQUIRE_SWEEP("heldout6_families.jsonl.gz");
  ExpectNoFalseFitsAndFiguresAsMeasured(
      "heldout6_families.jsonl.gz", {.min_rows = 180, .within_5pct = 92, .within_1pct = 45, .max_at_risk = 32,
                                     .exact_part_equal = 149, .exact_below = 0});
}

// A seventh held-out set (set "heldout7"), compiled before the model judged it: chunked-prefill
// attention over an int8 KV cache, int4/int8 MoE gate + up projections by a scalar-prefetched tile
// map, RMSNorm + int8 Q/K/V projections, attention with axial 2-D RoPE by lane rolls, a top-k
// router with a carried per-expert capacity, the dx half of a SwiGLU backward. Judged once, blind
// (with the replay holding no 8-bit-converted dot operand on v5e-v7x); held as measured
// (docs/tpu.md, "Held-out families"). No longer blind to the widened central's 16-bit dot term
// (tests/data/tpu/streamed_dot_operand_probe.txt), which moved its bytes within 1% from 34 to 36,
// nor to v4's internal scratch for row vectors of one lane tile, which left 94 / 35.
TEST(TpuCorpusTest, SeventhHeldOutSetIsHeldAsMeasured) {
  REQUIRE_SWEEP("heldout7_families.jsonl.gz");
  // The exactly known part is below libtpu's on 10: by 4 KiB (the packing temporary, an estimate)
  // on seven v4 rows, 12 KiB on one v4 RMSNorm + int8 QKV, and 512 KiB on the v5e and v5p
  // RMSNorm + int8 QKV of d = 2,048, hd = 256 (a mechanism not yet named).
  ExpectNoFalseFitsAndFiguresAsMeasured(
      "heldout7_families.jsonl.gz", {.min_rows = 180, .within_5pct = 100, .within_1pct = 45, .max_at_risk = 31,
                                     .exact_part_equal = 145, .exact_below = 10});
}

// An eighth held-out set (set "heldout8"), compiled before the model judged it: MLA decode
// attention over a compressed latent cache, a w8a8 matmul with per-token and per-channel scales,
// Mamba-2's chunked SSD scan, a layer-norm backward accumulating dgamma / dbeta in scratch, LoRA
// shrink + expand, an MoE capacity mask by a carried cumulative sum. Judged once, blind, with the
// model as it stood after the 16-bit dot term (bytes within 5% / 1%: 61 / 34 of 152); held as
// measured (docs/tpu.md, "Held-out families"). No longer blind to the replay's computed right
// operand made a tile at a time, which moved them to 74 / 44.
TEST(TpuCorpusTest, EighthHeldOutSetIsHeldAsMeasured) {
  REQUIRE_SWEEP("heldout8_families.jsonl.gz");
  // 174 of its 180 compiles have a VMEM verdict: Mosaic refuses the v4 w8a8 matmul (an int8 x int8
  // dot: E2001, unsupported matmul RHS type on v4).
  ExpectNoFalseFitsAndFiguresAsMeasured(
      "heldout8_families.jsonl.gz", {.min_rows = 174, .within_5pct = 74, .within_1pct = 44, .max_at_risk = 27,
                                     .exact_part_equal = 152, .exact_below = 0});
}

// A ninth held-out set (set "heldout9"), written after the tile-aligned concatenation rule and
// compiled before the model judged it: every family concatenates (a U-Net skip concatenation into a
// 1x1 conv, RoPE by rotate_half, speculative-decoding attention appending the new tokens' K and V,
// heads concatenated into the output projection, gate and up weights concatenated for one dot).
// Judged once, blind, with the rule (without it: AT RISK 29, bytes within 5% / 1% 42 / 18 of 135;
// docs/tpu.md, "Held-out families"). The high bound misses libtpu's requirement on 2: the 16-head,
// d = 64 output projection on v5e and v5p (by 0.98 MB), where LLO overlaps the 16 heads' independent
// chains beyond the program's order (not the concatenation: part-tile-concat-probe.txt). Its
// rotate_half RoPE then led to a concatenation of part tiles holding its result whole (77 / 38 to
// 95 / 48): the set is no longer blind to that rule.
TEST(TpuCorpusTest, NinthHeldOutSetIsHeldAsMeasured) {
  REQUIRE_SWEEP("heldout9_families.jsonl.gz");
  ExpectNoFalseFitsAndFiguresAsMeasured(
      "heldout9_families.jsonl.gz", {.min_rows = 150, .within_5pct = 95, .within_1pct = 48, .max_at_risk = 21,
                                     .exact_part_equal = 135, .exact_below = 0, .known_high_misses = 2});
}

// A tenth held-out set (set "heldout10"), written after the part-tile concatenation rule and
// compiled before the model judged it: partial rotary embeddings, MLA prefill attention over
// concatenated nope + rope head parts, NeRF's positional encoding into its first layer. Judged
// once, blind (26 / 7 of 82 within 5% / 1%; without the rule 26 / 9, the same AT RISK): the rule
// did not carry to partial rotary, whose spill slots were 0.67 of what it held. That led to the
// slice rule (a slice covering every vreg of its operand is that operand), which moves it to 47 /
// 15: the set is no longer blind to it (docs/tpu.md, "Held-out families"). Four NeRF compiles of
// 8,192-row blocks (v4-v6e) ran past the row timeout.
TEST(TpuCorpusTest, TenthHeldOutSetIsHeldAsMeasured) {
  REQUIRE_SWEEP("heldout10_families.jsonl.gz");
  ExpectNoFalseFitsAndFiguresAsMeasured(
      "heldout10_families.jsonl.gz", {.min_rows = 86, .within_5pct = 47, .within_1pct = 15, .max_at_risk = 21,
                                      .exact_part_equal = 82, .exact_below = 0});
}

// An eleventh held-out set (set "heldout11"), written after the slice rule (a slice that covers
// every vreg of its operand is that operand's vregs) and compiled before the model judged it: every
// family slices values in its body (Mamba's causal conv1d by shifted row slices of a padded block, a
// GLU over a fused gate + up projection split on the lanes, attention over a fused QKV block split
// per head). Judged once, blind: AT RISK 17, bytes within 5% / 1% 49 / 22 of 85, the same with the
// slice rule switched off (docs/tpu.md, "Held-out families"). Its QKV attention, 0 / 0 then (model
// 1.41 x libtpu's spill slots), led to a slice of a load counting as loaded (24 / 7 of 30): the
// set is no longer blind to that rule.
TEST(TpuCorpusTest, EleventhHeldOutSetIsHeldAsMeasured) {
  REQUIRE_SWEEP("heldout11_families.jsonl.gz");
  ExpectNoFalseFitsAndFiguresAsMeasured(
      "heldout11_families.jsonl.gz", {.min_rows = 90, .within_5pct = 73, .within_1pct = 29, .max_at_risk = 17,
                                      .exact_part_equal = 85, .exact_below = 0});
}

// A twelfth held-out set (set "heldout12"), written after the MXU-pass rule (a dot's computed left
// operand is held whole, packed, only where its right operand spans more than one MXU tile) and
// compiled before the model judged it: every family feeds a dot a left operand computed in the body,
// one MXU tile wide or several (a SwiGLU's down projection fused after the gating, a LayerNorm fused
// before its linear, attention at Gemma's 256-lane head dim). Judged once, blind: no AT RISK, bytes
// within 5% / 1% 51 / 26 of 90, 40 / 15 with the rule switched off, the whole difference the SwiGLU
// down projection's (docs/tpu.md, "Held-out families"). Its attention (6 / 2, at 0.45 x libtpu's
// slots) led to a validated band's central being at least the replay's held values less v4's
// register file (HoldWhatTheReplayHoldsInTheBand): 28 / 13 then, and the set no longer blind to it.
TEST(TpuCorpusTest, TwelfthHeldOutSetIsHeldAsMeasured) {
  REQUIRE_SWEEP("heldout12_families.jsonl.gz");
  ExpectNoFalseFitsAndFiguresAsMeasured(
      "heldout12_families.jsonl.gz", {.min_rows = 90, .within_5pct = 73, .within_1pct = 37, .max_at_risk = 0,
                                      .exact_part_equal = 90, .exact_below = 0});
}

// A thirteenth held-out set (set "heldout13"), written after a validated band's central was made at
// least the replay's held values less v4's register file, and compiled before the model judged it:
// every family softmaxes a whole score block in one grid step (Whisper's decoder cross-attention over
// 1,500 encoder frames, ViT's attention over 197 tokens, multi-query decode attention). Judged once,
// blind: no AT RISK, bytes within 5% / 1% 67 / 29 of 90, 43 / 15 with the central rule switched off
// (docs/tpu.md, "Held-out families").
TEST(TpuCorpusTest, ThirteenthHeldOutSetIsHeldAsMeasured) {
  REQUIRE_SWEEP("heldout13_families.jsonl.gz");
  ExpectNoFalseFitsAndFiguresAsMeasured(
      "heldout13_families.jsonl.gz", {.min_rows = 90, .within_5pct = 67, .within_1pct = 29, .max_at_risk = 0,
                                      .exact_part_equal = 90, .exact_below = 0});
}

// The third held-out set checked as a user with libtpu installed checks it (bench/tpu/confirm_cli.py
// --families, recorded in tests/data/tpu/confirm_heldout3.jsonl.gz): every compile traced at its
// generation's default limit and run through simulate --confirm at-risk. The model settles what it
// can; libtpu compiles the rest (the AT RISK verdicts), and the verdict the report ends with is
// libtpu's at the default limit on every row, its bytes libtpu's to the byte where it compiled.
TEST(TpuCorpusTest, ConfirmSettlesEveryVerdictOfTheThirdHeldOutSet) {
  REQUIRE_SWEEP("heldout3_families.jsonl.gz");
  REQUIRE_SWEEP("confirm_heldout3.jsonl.gz");
  const std::string dir = std::string(SCRATCHSIM_SOURCE_DIR) + "/tests/data/tpu/";
  std::map<std::string, std::pair<std::string, int64_t>> libtpu;  // id -> verdict at the default limit, bytes
  for (const std::string& line : ReadGzipLines(dir + "heldout3_families.jsonl.gz")) {
    Struct row;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(line, &row).ok());
    const Struct* at_default = Sub(row, "result_default");
    if (at_default == nullptr) continue;
    const std::string verdict = ConfirmedVerdict(Str(*at_default, "verdict"));
    if (verdict != "FITS" && verdict != "DOES_NOT_FIT") continue;  // Mosaic refused it, or it timed out
    libtpu[Str(row, "id")] = {verdict, Num(*at_default, verdict == "FITS" ? "total_bytes" : "size_bytes")};
  }
  int rows = 0, compiled = 0;
  for (const std::string& line : ReadGzipLines(dir + "confirm_heldout3.jsonl.gz")) {
    Struct row;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(line, &row).ok());
    if (Field(row, "header") != nullptr) continue;
    const std::string id = Str(row, "id");
    ASSERT_TRUE(libtpu.count(id)) << id << " is not a compile of the set with a VMEM verdict";
    ++rows;
    EXPECT_EQ(Str(row, "verdict"), libtpu.at(id).first) << id;
    if (Str(row, "confirmed_verdict").empty()) continue;  // settled by the model
    ++compiled;
    EXPECT_EQ(Str(row, "model_verdict"), "AT_RISK") << id;
    if (libtpu.at(id).first == "FITS") {
      EXPECT_EQ(Num(row, "confirmed_bytes"), libtpu.at(id).second) << id;
    } else if (Field(row, "confirmed_bytes") != nullptr && Field(row, "confirmed_bytes")->has_number_value()) {
      // The family file has the failing figure from libtpu's error text, MiB to two places; the
      // confirmation measures what the kernel needs. The two print alike.
      EXPECT_NEAR(Num(row, "confirmed_bytes"), libtpu.at(id).second, (1 << 20) * 0.005 + 1) << id;
    } else {
      EXPECT_TRUE(Field(row, "exceeds_capacity") != nullptr && Field(row, "exceeds_capacity")->bool_value()) << id;
    }
    EXPECT_TRUE(Field(row, "agree") != nullptr && Field(row, "agree")->bool_value()) << id;
  }
  std::printf("confirm_heldout3.jsonl.gz: %d compiles checked, %d of them compiled by libtpu, every verdict libtpu's\n",
              rows, compiled);
  EXPECT_EQ(rows, static_cast<int>(libtpu.size()));
  EXPECT_EQ(compiled, CheckFamilies("heldout3_families.jsonl.gz").at_risk);
}

// A family file compiled by the newest libtpu on PyPI (0.0.52), not the one the model was fitted
// on: the same targets and its figures held as measured (docs/tpu.md, "Versions"), and every FITS
// that rests on the spill model says the model was fitted on another libtpu and is unsettled,
// which --confirm at-risk has that libtpu settle. `fits_without_a_spill_estimate` are FITS the
// spill model plays no part in.
void ExpectUnsettledBesideAnotherLibtpu(const std::string& file, const HeldAsMeasured& held,
                                        int fits_without_a_spill_estimate) {
  const FamilyCheck check = ExpectNoFalseFitsAndFiguresAsMeasured(file, held);
  EXPECT_GT(check.fits, 0) << file;
  EXPECT_EQ(check.fits - check.unsettled, fits_without_a_spill_estimate) << file;
}

// The held-out families, 3 shapes of each.
TEST(TpuCorpusTest, HeldOutFamiliesTracedBesideAnotherLibtpuAreUnsettled) {
  REQUIRE_SWEEP("heldout_families_libtpu0052.jsonl.gz");
  ExpectUnsettledBesideAnotherLibtpu("heldout_families_libtpu0052.jsonl.gz",
                                     {.min_rows = 200, .within_5pct = 104, .within_1pct = 43, .max_at_risk = 32}, 0);
}

// The second held-out set, every shape of heldout2_families.jsonl.gz.
TEST(TpuCorpusTest, SecondHeldOutSetBesideAnotherLibtpuHasNoFalseFits) {
  REQUIRE_SWEEP("heldout2_families_libtpu0052.jsonl.gz");
  ExpectUnsettledBesideAnotherLibtpu("heldout2_families_libtpu0052.jsonl.gz",
                                     {.min_rows = 100, .within_5pct = 67, .within_1pct = 41, .max_at_risk = 54}, 0);
}

// The third held-out set, every shape of heldout3_families.jsonl.gz.
TEST(TpuCorpusTest, ThirdHeldOutSetBesideAnotherLibtpuHasNoFalseFits) {
  REQUIRE_SWEEP("heldout3_families_libtpu0052.jsonl.gz");
  ExpectUnsettledBesideAnotherLibtpu("heldout3_families_libtpu0052.jsonl.gz",
                                     {.min_rows = 260, .within_5pct = 139, .within_1pct = 81, .max_at_risk = 30}, 0);
}

// The fourth to eighth held-out sets, every shape of each. Where 0.0.52 spills more than the band
// fitted on 0.0.42.1 allows, the high bound misses its requirement; the FITS at such a limit is
// unsettled, as the report says, and --confirm settles it. The fourth set's FITS without a spill
// estimate are streaming bodies (embedding gathers, KV cache copies).
TEST(TpuCorpusTest, FourthHeldOutSetBesideAnotherLibtpuHasNoFalseFits) {
  REQUIRE_SWEEP("heldout4_families_libtpu0052.jsonl.gz");
  // v7x paged attention (b717189487): 0.0.52 spills 340 KiB where 0.0.42.1 spilled 200 KiB.
  ExpectUnsettledBesideAnotherLibtpu(
      "heldout4_families_libtpu0052.jsonl.gz",
      {.min_rows = 200, .within_5pct = 151, .within_1pct = 106, .max_at_risk = 30, .known_high_misses = 1}, 21);
}

TEST(TpuCorpusTest, FifthHeldOutSetBesideAnotherLibtpuHasNoFalseFits) {
  REQUIRE_SWEEP("heldout5_families_libtpu0052.jsonl.gz");
  // Two v4 depthwise conv2d kernels (ccbe9ef247, 0d15900884), the family whose third v4 row misses
  // under 0.0.42.1 too (FifthHeldOutSetIsHeldAsMeasured).
  ExpectUnsettledBesideAnotherLibtpu(
      "heldout5_families_libtpu0052.jsonl.gz",
      {.min_rows = 170, .within_5pct = 108, .within_1pct = 58, .max_at_risk = 37, .known_high_misses = 2}, 0);
}

TEST(TpuCorpusTest, SixthHeldOutSetBesideAnotherLibtpuHasNoFalseFits) {
  REQUIRE_SWEEP("heldout6_families_libtpu0052.jsonl.gz");
  ExpectUnsettledBesideAnotherLibtpu("heldout6_families_libtpu0052.jsonl.gz",
                                     {.min_rows = 170, .within_5pct = 95, .within_1pct = 42, .max_at_risk = 32}, 0);
}

TEST(TpuCorpusTest, SeventhHeldOutSetBesideAnotherLibtpuHasNoFalseFits) {
  REQUIRE_SWEEP("heldout7_families_libtpu0052.jsonl.gz");
  ExpectUnsettledBesideAnotherLibtpu("heldout7_families_libtpu0052.jsonl.gz",
                                     {.min_rows = 170, .within_5pct = 97, .within_1pct = 41, .max_at_risk = 31}, 0);
}

TEST(TpuCorpusTest, EighthHeldOutSetBesideAnotherLibtpuHasNoFalseFits) {
  REQUIRE_SWEEP("heldout8_families_libtpu0052.jsonl.gz");
  ExpectUnsettledBesideAnotherLibtpu("heldout8_families_libtpu0052.jsonl.gz",
                                     {.min_rows = 170, .within_5pct = 78, .within_1pct = 43, .max_at_risk = 27}, 0);
}

// The ninth held-out set under libtpu 0.0.52, every shape (compiled with the 0.0.42.1 file).
TEST(TpuCorpusTest, NinthHeldOutSetBesideAnotherLibtpuHasNoFalseFits) {
  REQUIRE_SWEEP("heldout9_families_libtpu0052.jsonl.gz");
  ExpectUnsettledBesideAnotherLibtpu("heldout9_families_libtpu0052.jsonl.gz",
                                     {.min_rows = 150, .within_5pct = 99, .within_1pct = 50, .max_at_risk = 21}, 0);
}

// The eleventh held-out set under libtpu 0.0.52, every shape.
TEST(TpuCorpusTest, EleventhHeldOutSetBesideAnotherLibtpuHasNoFalseFits) {
  REQUIRE_SWEEP("heldout11_families_libtpu0052.jsonl.gz");
  ExpectUnsettledBesideAnotherLibtpu("heldout11_families_libtpu0052.jsonl.gz",
                                     {.min_rows = 90, .within_5pct = 69, .within_1pct = 27, .max_at_risk = 17}, 0);
}

// The twelfth held-out set under libtpu 0.0.52, every shape.
TEST(TpuCorpusTest, TwelfthHeldOutSetBesideAnotherLibtpuHasNoFalseFits) {
  REQUIRE_SWEEP("heldout12_families_libtpu0052.jsonl.gz");
  ExpectUnsettledBesideAnotherLibtpu("heldout12_families_libtpu0052.jsonl.gz",
                                     {.min_rows = 90, .within_5pct = 77, .within_1pct = 33, .max_at_risk = 0}, 0);
}

// The thirteenth held-out set under libtpu 0.0.52, every shape.
TEST(TpuCorpusTest, ThirteenthHeldOutSetBesideAnotherLibtpuHasNoFalseFits) {
  REQUIRE_SWEEP("heldout13_families_libtpu0052.jsonl.gz");
  ExpectUnsettledBesideAnotherLibtpu("heldout13_families_libtpu0052.jsonl.gz",
                                     {.min_rows = 90, .within_5pct = 66, .within_1pct = 25, .max_at_risk = 0}, 0);
}

// The dev families, 4 shapes a family on every generation. The 10 FITS without a spill estimate are
// transpose + add's, a streaming body with no spill slots.
TEST(TpuCorpusTest, DevFamiliesBesideAnotherLibtpuHaveNoFalseFits) {
  REQUIRE_SWEEP("dev_families_libtpu0052.jsonl.gz");
  ExpectUnsettledBesideAnotherLibtpu("dev_families_libtpu0052.jsonl.gz",
                                     {.min_rows = 250, .within_5pct = 211, .within_1pct = 134, .max_at_risk = 43}, 10);
}

// Kernel families nothing was fitted or tuned on (bench/tpu/heldout_kernels.py, set "heldout"):
// the targets are no false FITS at the default limit or at any limit between the model's
// high bound and libtpu's requirement; the other figures are printed and held as measured
// (docs/tpu.md, "Held-out families").
TEST(TpuCorpusTest, HeldOutFamiliesHaveNoFalseFits) {
  REQUIRE_SWEEP("heldout_families.jsonl.gz");
  // The exactly known part is libtpu's but for 21 rows, below it on 9 v4 int8 kernels by Mosaic's
  // 4 KiB packing temporary, which the model carries as an estimate (CountedMosaicScratch); the
  // bytes with replicated layouts and the widened central from the replay's computed values
  // (docs/tpu.md, "Where the bytes error lies").
  ExpectNoFalseFitsAndFiguresAsMeasured("heldout_families.jsonl.gz",
                                        {.min_rows = 400, .within_5pct = 341, .within_1pct = 135, .max_at_risk = 111,
                                         .exact_part_equal = 499, .exact_below = 9});
}

}  // namespace
}  // namespace scratchsim
