// `simulate plan` on Pallas graphs against the real TPU compiler: every configuration the plan
// ranks is one libtpu compiles, and the vmem_limit_bytes it says a configuration needs is one at
// which libtpu compiles it, checked on the rows of the oracle corpus
// (tests/data/tpu/corpus.jsonl.gz) that compiled the same blocks, and on the shipped Pallas
// families' top configurations compiled for that purpose (tests/data/tpu/plan_confirm.jsonl.gz).
// Through the command line, as a user runs it. Also: each grid step is charged its own HBM
// traffic, and the MXU's width per generation shapes the ranking.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "backends/tpu/tpu_corpus_util.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "sim/driver/cli.h"
#include "sim/driver/cli_test_util.h"

namespace scratchsim {
namespace {

std::string Source(const std::string& relative) { return std::string(SCRATCHSIM_SOURCE_DIR) + "/" + relative; }

using testing::CliRun;

CliRun Simulate(const std::vector<std::string>& args) { return testing::RunCli(args); }

Struct Json(const std::string& text) {
  Struct s;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(text, &s).ok()) << text.substr(0, 400);
  return s;
}

double Number(const Struct& s, const std::string& name) {
  auto it = s.fields().find(name);
  return it == s.fields().end() ? -1 : it->second.number_value();
}

// The lines of a .jsonl.gz under the source tree; none where it is missing.
std::vector<std::string> GzipLines(const std::string& relative) { return ReadGzipLines(Source(relative)); }

// (gen, bm, bn, bk) -> (libtpu verdict, requirement_bytes) of the corpus's bf16 matmul_acc rows.
using MatmulKey = std::tuple<std::string, int, int, int>;
std::map<MatmulKey, std::pair<std::string, int64_t>> CorpusMatmuls() {
  std::map<MatmulKey, std::pair<std::string, int64_t>> rows;
  for (const std::string& line : GzipLines("tests/data/tpu/corpus.jsonl.gz")) {
    if (line.find("\"matmul_acc\"") == std::string::npos) continue;
    Struct row = Json(line);
    const Struct& p = row.fields().at("params").struct_value();
    auto dtype = p.fields().find("dtype");
    if ((dtype != p.fields().end() && dtype->second.string_value() != "bf16") || p.fields().count("limit")) continue;
    const std::string verdict = row.fields().at("result").struct_value().fields().at("verdict").string_value();
    auto req = row.fields().find("requirement_bytes");
    rows[{row.fields().at("gen").string_value(), static_cast<int>(Number(p, "bm")), static_cast<int>(Number(p, "bn")),
          static_cast<int>(Number(p, "bk"))}] = {verdict, req != row.fields().end() && req->second.has_number_value()
                                                              ? static_cast<int64_t>(req->second.number_value())
                                                              : -1};
  }
  return rows;
}

// The 2048-wide bf16 matmul family (models/graphs/tpu_matmul_big.pbtxt, BM, BN, BK from 128 to
// 2048) planned on each generation.
TEST(TpuPlanTest, RankedConfigurationsCompileAndTheirLimitsHold) {
  SCRATCHSIM_REQUIRE_TEST_DATA("tests/data/tpu/corpus.jsonl.gz");
  const auto corpus = CorpusMatmuls();
  int confirmed = 0, limits_confirmed = 0;
  for (const char* gen : {"v4", "v5e", "v5p", "v6e", "v7x"}) {
    CliRun r = Simulate({"plan", "--device", absl::StrCat("tpu_", gen), "--graph", Source("models/graphs/tpu_matmul_big.pbtxt"),
                      "--param", "BM=128..2048:pow2", "--param", "BN=128..2048:pow2", "--param", "BK=128..2048:pow2", "--top", "20",
                      "--format", "json"});
    ASSERT_EQ(r.code, 0) << gen << ": " << r.err;
    Struct plan = Json(r.out);
    const auto& configs = plan.fields().at("configs").list_value().values();
    ASSERT_FALSE(configs.empty()) << gen;
    for (const Value& v : configs) {
      const Struct& c = v.struct_value();
      const Struct& p = c.fields().at("params").struct_value();
      const MatmulKey key{gen, static_cast<int>(Number(p, "BM")), static_cast<int>(Number(p, "BN")),
                          static_cast<int>(Number(p, "BK"))};
      // Every ranked configuration holds with the spills at their high bound.
      const double needed = Number(c, "vmem_limit_bytes_needed");
      ASSERT_GT(needed, 0) << gen;
      auto row = corpus.find(key);
      if (row == corpus.end()) continue;
      // libtpu compiles it, and at the limit the plan says it needs at most (the corpus's
      // requirement is the smallest limit that compiles it, verified to the byte).
      EXPECT_EQ(row->second.first, "fits") << gen << " BM=" << std::get<1>(key) << " BN=" << std::get<2>(key)
                                           << " BK=" << std::get<3>(key);
      ++confirmed;
      if (row->second.second > 0) {
        EXPECT_GE(needed, row->second.second) << gen;
        ++limits_confirmed;
      }
    }
  }
  // The corpus has these blocks for square and rectangular 128-2048 tiles: a good share of
  // the ranked configurations are checked against the compiler.
  EXPECT_GE(confirmed, 10);
  EXPECT_GE(limits_confirmed, 10);
  std::printf("ranked configurations confirmed by libtpu: %d (limit confirmed: %d)\n", confirmed, limits_confirmed);
}

// "BK=1024,BM=512,BN=1024": a configuration's parameters in name order (a Struct's are unordered).
std::string ParamsKey(const Struct& params) {
  std::map<std::string, int64_t> sorted;
  for (const auto& [name, value] : params.fields()) sorted[name] = static_cast<int64_t>(value.number_value());
  std::string key;
  for (const auto& [name, value] : sorted) absl::StrAppend(&key, key.empty() ? "" : ",", name, "=", value);
  return key;
}

// The shipped Pallas families (pallas_matmul, pallas_attention, tpu_matmul_big) planned on every
// generation, against libtpu's compiles of the same configurations (bench/tpu/confirm_plans.py,
// tests/data/tpu/plan_confirm.jsonl.gz): each configuration today's plan ranks in its top 10
// compiled at the default scoped limit and at the vmem_limit_bytes the plan says it needs, and
// that limit holds libtpu's figure for it.
TEST(TpuPlanTest, TopConfigurationsAreConfirmedByLibtpu) {
  SCRATCHSIM_REQUIRE_TEST_DATA("tests/data/tpu/plan_confirm.jsonl.gz");
  const std::vector<std::string> lines = GzipLines("tests/data/tpu/plan_confirm.jsonl.gz");
  // (gen, family, ParamsKey) -> the recorded row.
  std::map<std::tuple<std::string, std::string, std::string>, Struct> recorded;
  int top = 0;
  std::vector<std::string> families;
  for (const std::string& line : lines) {
    Struct row = Json(line);
    if (row.fields().count("header")) {
      top = static_cast<int>(Number(row, "top"));
      for (const Value& f : row.fields().at("families").list_value().values()) families.push_back(f.string_value());
      continue;
    }
    recorded[{row.fields().at("gen").string_value(), row.fields().at("family").string_value(),
              ParamsKey(row.fields().at("params").struct_value())}] = row;
  }
  ASSERT_GT(top, 0);
  int confirmed = 0;
  // How far the suggested limit is above libtpu's requirement, per kind of family (the price of
  // the spill band's high bound), printed for docs/tpu.md.
  std::map<std::string, std::vector<double>> overshoot;
  for (const char* gen : {"v4", "v5e", "v5p", "v6e", "v7x"}) {
    for (const std::string& family : families) {
      CliRun r = Simulate({"plan", "--device", absl::StrCat("tpu_", gen), "--graph",
                           Source(absl::StrCat("models/graphs/", family, ".pbtxt")), "--top", absl::StrCat(top),
                           "--format", "json"});
      ASSERT_EQ(r.code, 0) << gen << " " << family << ": " << r.err;
      const Struct plan = Json(r.out);
      for (const Value& v : plan.fields().at("configs").list_value().values()) {
        const Struct& c = v.struct_value();
        const std::string params = ParamsKey(c.fields().at("params").struct_value());
        auto row = recorded.find({gen, family, params});
        ASSERT_NE(row, recorded.end()) << gen << " " << family << " " << params
                                       << ": not compiled yet; rerun bench/tpu/confirm_plans.py (tests/data/tpu/README.md)";
        const Struct& at_default = row->second.fields().at("at_default").struct_value();
        const Struct& at_needed = row->second.fields().at("at_needed").struct_value();
        EXPECT_EQ(at_default.fields().at("verdict").string_value(), "fits") << gen << " " << family << " " << params;
        EXPECT_EQ(at_needed.fields().at("verdict").string_value(), "fits") << gen << " " << family << " " << params;
        // libtpu's scoped VMEM for the kernel is the smallest limit that compiles it.
        EXPECT_GE(Number(c, "vmem_limit_bytes_needed"), Number(at_default, "scoped_vmem_bytes"))
            << gen << " " << family << " " << params;
        overshoot[absl::StrContains(family, "attention") ? "attention" : "matmul"].push_back(
            Number(c, "vmem_limit_bytes_needed") / Number(at_default, "scoped_vmem_bytes") - 1);
        ++confirmed;
      }
    }
  }
  EXPECT_GE(families.size(), 3u);
  EXPECT_EQ(confirmed, 5 * static_cast<int>(families.size()) * top);
  std::printf("top-%d configurations confirmed by libtpu: %d\n", top, confirmed);
  for (auto& [kind, o] : overshoot) {
    std::sort(o.begin(), o.end());
    std::printf("%s: suggested limit above libtpu's requirement by a median %.0f%% (%.0f-%.0f%%)\n", kind.c_str(),
                100 * o[o.size() / 2], 100 * o.front(), 100 * o.back());
  }
}

// Each grid step is charged its own HBM traffic: the x and y blocks it loads, the z block once
// per (i, j). A step of the 512-block matmul moves about 1 MiB, not the whole grid's bytes.
TEST(TpuPlanTest, EachGridStepCarriesItsOwnTraffic) {
  CliRun r = Simulate({"plan", "--device", "tpu_v5e", "--graph", Source("models/graphs/tpu_matmul_big.pbtxt"), "--param",
                    "BM=512", "--param", "BN=512", "--param", "BK=512", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  Struct plan = Json(r.out);
  const Struct& c = plan.fields().at("configs").list_value().values(0).struct_value();
  // 16 x 16 x 16 steps of 2 x 512 KiB in and 512 KiB / 16 out, at v5e's 820 GB/s: ~5.4 ms; and
  // 2 x 8192^3 flops at 197 TFLOP/s: ~5.6 ms. The kernel is about balanced, not memory bound by 4096x.
  EXPECT_EQ(Number(c, "grid_blocks"), 4096);
  const double us = Number(c, "estimated_us");
  EXPECT_GT(us, 4000);
  EXPECT_LT(us, 20000);
}

// The MXU is 128 wide before v6e and 256 wide from it (device models' tpu.mxu_size, from JAX
// tpu_info.py): a 128-wide N or K block uses half of a v6e MXU, all of a v5e one.
TEST(TpuPlanTest, NarrowBlocksWasteTheWideMxu) {
  auto estimated = [](const char* device, const char* bn) {
    CliRun r = Simulate({"plan", "--device", device, "--graph", Source("models/graphs/tpu_matmul_big.pbtxt"), "--param",
                      "BM=1024", "--param", absl::StrCat("BN=", bn), "--param", "BK=512", "--format", "json"});
    EXPECT_EQ(r.code, 0) << r.err;
    Struct plan = Json(r.out);
    const Struct& c = plan.fields().at("configs").list_value().values(0).struct_value();
    return c.fields().at("terms_us").struct_value().fields().at("math").number_value();
  };
  // Math time for the whole problem at BN=128 against BN=256: the same on v5e; on v6e the MXU
  // cycles double while the vector unit's accumulator work (the same bytes either way) does not.
  EXPECT_NEAR(estimated("tpu_v5e", "128") / estimated("tpu_v5e", "256"), 1.0, 0.05);
  const double v6e = estimated("tpu_v6e", "128") / estimated("tpu_v6e", "256");
  EXPECT_GT(v6e, 1.5);
  EXPECT_LT(v6e, 2.0);
}

// The vector unit sets flash attention's step on v6e (its MXUs quadrupled, its vector unit did
// not): the plan says the math is issue-limited, and the estimate is longer than the flops at the
// peak would make it.
TEST(TpuPlanTest, FlashAttentionIsIssueLimitedOnV6e) {
  CliRun r = Simulate({"plan", "--device", "tpu_v6e", "--graph", Source("models/graphs/pallas_attention.pbtxt"), "--top",
                       "1", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  Struct plan = Json(r.out);
  const Struct& c = plan.fields().at("configs").list_value().values(0).struct_value();
  EXPECT_THAT(c.fields().at("why").string_value(), ::testing::HasSubstr("math issue-limited"));
  const Struct& terms = c.fields().at("terms_us").struct_value();
  // 2 x 2 x BQ x BK x D flops a step (D = 128) over v6e's 920 TFLOP/s, for every step, is less
  // than the math time the plan charges.
  const Struct& params = c.fields().at("params").struct_value();
  const double steps = c.fields().at("grid_blocks").number_value();
  const double at_peak_us = steps * 4.0 * params.fields().at("BQ").number_value() *
                            params.fields().at("BK").number_value() * 128 / 920e12 * 1e6;
  EXPECT_GT(terms.fields().at("math").number_value(), 1.5 * at_peak_us);
}

}  // namespace
}  // namespace scratchsim
