// The importer against Triton's own metadata.shared on the CPU-compiled kernel catalogue
// (tests/data/triton/catalogue: every release, 8 targets, 35 kinds, both specialization regimes;
// docs/triton-fixtures.md). Exactness per (version, target), per (version, kind) and per
// (version, target, kind); verdict flips (a prediction on the other side of the target's limit
// than Triton's figure). docs/triton.md has the table this test prints.
//
//   TTGIR_VERBOSE=1       every miss with the plan's buffers
//   TTGIR_DUMP=<text>     the plan of every fixture whose id contains <text>
//   TTGIR_CATALOGUE_TABLE=<file>  writes the per-(version, target, kind) table as Markdown
//   TTGIR_CATALOGUE=<dir> one release unpacked by hand (<dir>/index.json, <dir>/<target>/)
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/triton/ttgir_allocation.h"
#include "backends/triton/ttgir_catalogue_testdata.h"
#include "backends/triton/ttgir_parser.h"
#include "gtest/gtest.h"

namespace scratchsim::triton {
namespace {

struct Tally {
  int exact = 0, total = 0, under = 0, over = 0, errors = 0, flips = 0;
  double Rate() const { return total == 0 ? 1.0 : static_cast<double>(exact) / total; }
};

std::string Percent(const Tally& t) {
  return absl::StrCat(t.exact, "/", t.total, " (", static_cast<int>(t.Rate() * 1000) / 10.0, "%)");
}

struct Result {
  std::map<std::string, Tally> by_version;
  std::map<std::pair<std::string, std::string>, Tally> by_target, by_kind;
  std::map<std::tuple<std::string, std::string, std::string>, Tally> by_target_kind;
  std::vector<std::string> flips, errors;
};

const Result& Evaluate() {
  static const Result* result = [] {
    auto* r = new Result;
    const bool verbose = std::getenv("TTGIR_VERBOSE") != nullptr;
    for (const CatalogueVersion& v : ReadCatalogue()) {
      // The catalogue knows which release compiled each kernel: the rules of that release apply
      // (what `--triton-version` gives the front end where the TTGIR does not tell).
      PlanOptions options;
      if (absl::StatusOr<TritonRelease> release = ParseTritonRelease(v.version); release.ok()) {
        options.release = *release;
      } else {
        r->errors.push_back(absl::StrCat(v.version, ": ", release.status().ToString()));
        continue;
      }
      for (const CatalogueRecord& rec : v.records) {
        if (rec.ttgir_path.empty()) continue;
        const std::string text = ReadWholeFile(rec.ttgir_path);
        absl::StatusOr<SharedMemoryPlan> plan = PlanTtgir(text, rec.id, options);
        Tally* tallies[] = {&r->by_version[v.version], &r->by_target[{v.version, rec.target}],
                            &r->by_kind[{v.version, rec.kind}],
                            &r->by_target_kind[{v.version, rec.target, rec.kind}]};
        for (Tally* t : tallies) ++t->total;
        if (!plan.ok()) {
          for (Tally* t : tallies) ++t->errors;
          r->errors.push_back(absl::StrCat(v.version, " ", rec.id, ": ", plan.status().ToString()));
          continue;
        }
        const int64_t ours = plan->allocation.shared;
        if (const char* dump = std::getenv("TTGIR_DUMP"); dump != nullptr && rec.id.find(dump) != std::string::npos) {
          std::cout << "PLAN " << v.version << " " << rec.id << " triton=" << rec.shared << " ours=" << ours << "\n";
          for (size_t i = 0; i < plan->buffers.size(); ++i) {
            const SharedBuffer& b = plan->buffers[i];
            std::cout << "   " << b.name << " " << b.shape << " size " << b.buffer.size << " @" << plan->allocation.offsets[i]
                      << " live [" << b.buffer.start << "," << b.buffer.end << ")\n";
          }
        }
        if (ours == rec.shared) {
          for (Tally* t : tallies) ++t->exact;
          continue;
        }
        for (Tally* t : tallies) ++(ours < rec.shared ? t->under : t->over);
        if ((ours > rec.limit) != (rec.shared > rec.limit)) {
          for (Tally* t : tallies) ++t->flips;
          r->flips.push_back(absl::StrCat(v.version, " ", rec.id, ": triton ", rec.shared, ", ours ", ours,
                                          ", limit ", rec.limit));
        }
        if (verbose) {
          std::cout << "MISS " << v.version << " " << rec.id << " triton=" << rec.shared << " ours=" << ours
                    << " diff=" << ours - rec.shared << "\n";
          for (size_t i = 0; i < plan->buffers.size(); ++i) {
            const SharedBuffer& b = plan->buffers[i];
            std::cout << "   " << b.name << " " << b.shape << " line " << b.line << " size " << b.buffer.size
                      << " align " << b.buffer.alignment << " live [" << b.buffer.start << "," << b.buffer.end
                      << ") @" << plan->allocation.offsets[i] << "\n";
          }
        }
      }
    }
    return r;
  }();
  return *result;
}

std::string Table(const Result& r) {
  std::string out;
  std::map<std::string, std::vector<std::string>> targets_of;
  for (const auto& [k, t] : r.by_target) targets_of[k.first].push_back(k.second);
  for (const auto& [version, targets] : targets_of) {
    absl::StrAppend(&out, "\n### Triton ", version, "\n\n| kind |");
    for (const std::string& t : targets) absl::StrAppend(&out, " ", t, " |");
    absl::StrAppend(&out, " all |\n|---|");
    for (size_t i = 0; i <= targets.size(); ++i) absl::StrAppend(&out, "---:|");
    absl::StrAppend(&out, "\n");
    for (const auto& [vk, kt] : r.by_kind) {
      if (vk.first != version) continue;
      absl::StrAppend(&out, "| ", vk.second, " |");
      for (const std::string& t : targets) {
        auto it = r.by_target_kind.find({version, t, vk.second});
        if (it == r.by_target_kind.end()) absl::StrAppend(&out, " – |");
        else absl::StrAppend(&out, " ", it->second.exact, "/", it->second.total, " |");
      }
      absl::StrAppend(&out, " ", kt.exact, "/", kt.total, " |\n");
    }
    absl::StrAppend(&out, "| **all** |");
    for (const std::string& t : targets) {
      const Tally& tt = r.by_target.at({version, t});
      absl::StrAppend(&out, " **", tt.exact, "/", tt.total, "** |");
    }
    const Tally& all = r.by_version.at(version);
    absl::StrAppend(&out, " **", all.exact, "/", all.total, "** |\n");
  }
  return out;
}

TEST(TtgirCatalogueTest, ReportsExactnessPerVersionTargetAndKind) {
  const Result& r = Evaluate();
  ASSERT_FALSE(r.by_version.empty()) << "no catalogue (tests/data/triton/catalogue/<version>/index.json)";
  for (const auto& [v, t] : r.by_version) {
    std::cout << "Triton " << v << ": " << Percent(t) << " exact, " << t.under << " under, " << t.over
              << " over, " << t.errors << " errors, " << t.flips << " verdict flips\n";
  }
  for (const auto& [k, t] : r.by_target) {
    std::cout << "  " << k.first << " " << k.second << ": " << Percent(t) << " (under " << t.under << ", over "
              << t.over << ", errors " << t.errors << ")\n";
  }
  for (const auto& [k, t] : r.by_kind) {
    std::cout << "  " << k.first << " " << k.second << ": " << Percent(t) << " (under " << t.under << ", over "
              << t.over << ", errors " << t.errors << ")\n";
  }
  const std::string table = Table(r);
  std::cout << table;
  if (const char* path = std::getenv("TTGIR_CATALOGUE_TABLE")) std::ofstream(path) << table;
  for (size_t i = 0; i < r.errors.size() && i < 20; ++i) std::cout << "ERROR " << r.errors[i] << "\n";
  if (r.errors.size() > 20) std::cout << "... and " << r.errors.size() - 20 << " more errors\n";
  for (const std::string& f : r.flips) std::cout << "FLIP " << f << "\n";
}

// Issue 15's targets, met on both releases (docs/triton.md): at least 1,500 fixtures per release,
// metadata.shared byte-exact on at least 99.5% of each (release, target) pair's fixtures and on at
// least 98% of each kind's, no verdict flip, no error. The measured counts are floors too: on the
// same catalogue (the same number of fixtures) fewer exact ones is a regression.
TEST(TtgirCatalogueTest, MeetsTheTargets) {
  const Result& r = Evaluate();
  const std::map<std::string, std::pair<int, int>> measured = {
      {"3.6.0", {3696, 3696}},  // exact, of
      {"3.9.0", {2468, 2468}},
  };
  for (const auto& [v, t] : r.by_version) {
    EXPECT_GE(t.total, 1500) << "Triton " << v;
    EXPECT_EQ(t.errors, 0) << "Triton " << v;
    EXPECT_EQ(t.flips, 0) << "Triton " << v;
    auto m = measured.find(v);
    if (m != measured.end() && m->second.second == t.total) EXPECT_GE(t.exact, m->second.first) << "Triton " << v;
  }
  for (const auto& [k, t] : r.by_target) {
    EXPECT_GE(t.exact * 1000, t.total * 995) << "Triton " << k.first << " " << k.second << ": " << Percent(t);
  }
  for (const auto& [k, t] : r.by_kind) {
    EXPECT_GE(t.exact * 100, t.total * 98) << "Triton " << k.first << " " << k.second << ": " << Percent(t);
  }
}

// What the TTGIR itself tells (DetectTritonRelease), per release and target: right, silent
// (the plan then assumes the newest release and says so), and never wrong; and how exact the
// figures are when only the TTGIR is read (no release given).
TEST(TtgirCatalogueTest, ReleaseTheTtgirTellsIsNeverWrong) {
  int wrong = 0;
  for (const CatalogueVersion& v : ReadCatalogue()) {
    absl::StatusOr<TritonRelease> actual = ParseTritonRelease(v.version);
    ASSERT_TRUE(actual.ok()) << actual.status();
    std::map<std::string, std::tuple<int, int, int, int>> per_target;  // told, silent, wrong, exact
    for (const CatalogueRecord& rec : v.records) {
      if (rec.ttgir_path.empty()) continue;
      absl::StatusOr<TtgirModule> module = ParseTtgir(ReadWholeFile(rec.ttgir_path), rec.id);
      ASSERT_TRUE(module.ok()) << module.status();
      const TritonReleaseCue cue = DetectTritonRelease(*module);
      auto& [told, silent, bad, exact] = per_target[rec.target];
      if (cue.release == TritonRelease::kUnknown) {
        ++silent;
      } else if (cue.release == *actual) {
        ++told;
      } else {
        ++bad;
        ++wrong;
        ADD_FAILURE() << rec.id << ": read as Triton " << TritonReleaseName(cue.release) << " (" << cue.cue << ")";
      }
      absl::StatusOr<SharedMemoryPlan> plan = PlanSharedMemory(*module);
      if (plan.ok() && plan->allocation.shared == rec.shared) ++exact;
    }
    for (const auto& [target, counts] : per_target) {
      const auto& [told, silent, bad, exact] = counts;
      std::cout << "Triton " << v.version << " " << target << ": release told by " << told << ", silent in " << silent
                << ", wrong in " << bad << "; exact from the TTGIR alone " << exact << "/" << told + silent + bad
                << "\n";
    }
  }
  EXPECT_EQ(wrong, 0);
}

}  // namespace
// Tensor memory (PlanTensorMemory) against Triton's metadata.tmem_size on every sm_100 kernel
// of both releases: never below Triton's (the launch check must not pass a kernel Triton
// refuses); the one known miss is a causal attention over by 2x (docs/triton.md).
TEST(TtgirCatalogueTest, TensorMemoryColumnsAreTritons) {
  int kernels = 0, exact = 0;
  for (const CatalogueVersion& v : ReadCatalogue()) {
    for (const CatalogueRecord& r : v.records) {
      if (r.target != "sm_100" || r.ttgir_path.empty()) continue;
      auto module = ParseTtgir(ReadWholeFile(r.ttgir_path), r.ttgir_path);
      ASSERT_TRUE(module.ok()) << module.status();
      auto tmem = PlanTensorMemory(*module);
      ASSERT_TRUE(tmem.ok()) << tmem.status();
      ++kernels;
      EXPECT_GE(tmem->columns, r.tmem) << r.id;
      if (tmem->columns == r.tmem) {
        ++exact;
      } else {
        std::cout << "tensor memory: " << v.version << " " << r.id << " " << tmem->columns << " columns, Triton "
                  << r.tmem << "\n";
      }
    }
  }
  EXPECT_GE(kernels, 700);
  EXPECT_GE(exact, kernels - 1);
}

}  // namespace scratchsim::triton
