// The importer against Triton's own metadata.shared on the CPU-compiled kernel catalogue
// (tests/data/triton/catalogue: every release, 8 targets, 35 kinds, both specialization regimes;
// docs/triton-fixtures.md). Exactness per (version, target), per (version, kind) and per
// (version, target, kind); verdict flips (a prediction on the other side of the target's limit
// than Triton's figure). docs/triton.md has the table this test prints.
//
//   TTGIR_VERBOSE=1       every miss with the plan's buffers
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
  for (const std::string& e : r.errors) std::cout << "ERROR " << e << "\n";
  for (const std::string& f : r.flips) std::cout << "FLIP " << f << "\n";
}

}  // namespace
}  // namespace scratchsim::triton
