#include "sim/suggest.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "sim/checked_math.h"
#include "sim/device.h"
#include "sim/status_macros.h"

namespace scratchsim {
namespace {

constexpr int kMaxCandidatesPerParameter = 64;
constexpr int kMaxGreedySteps = 24;
// The combination search evaluates at most this many configurations (about a millisecond
// each thousand on the engine).
constexpr int64_t kMaxCombinations = int64_t{1} << 16;
// The whole search stops once the configurations it evaluated placed this much: per evaluation
// n^2 / 2 + n for its n blocks, the pairs placement may compare. A graph of ten blocks keeps
// every evaluation the limits above allow; one of 683 (a ring of 681 copies) stops after about
// 290, a second or two, where it took minutes (found by the planner fuzz target, issue 17).
constexpr int64_t kMaxSearchWork = int64_t{1} << 26;

bool IsPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// Smaller values worth trying for `parameter` at `value`, largest first.
std::vector<int64_t> SmallerValues(const Parameter& parameter, int64_t value) {
  std::vector<int64_t> out;
  const int64_t floor = std::max<int64_t>(parameter.min(), 1);
  if (parameter.power_of_two() || (IsPowerOfTwo(value) && value > 8)) {
    for (int64_t v = value / 2; v >= floor && static_cast<int>(out.size()) < kMaxCandidatesPerParameter; v /= 2) {
      out.push_back(v);
    }
  } else {
    for (int64_t v = value - 1; v >= floor && static_cast<int>(out.size()) < kMaxCandidatesPerParameter; --v) {
      out.push_back(v);
    }
  }
  return out;
}

class FixFinder {
 public:
  FixFinder(const FitEngine& engine, absl::Span<const int64_t> values, const FitResult& failing)
      : engine_(engine),
        graph_(engine.graph()),
        parameters_(engine.graph().graph.parameters()),
        base_(values.begin(), values.end()),
        failing_(failing) {}

  absl::StatusOr<std::vector<Suggestion>> Find() {
    std::vector<Suggestion> out;
    // One parameter at a time: the largest smaller value that fits.
    for (int slot = 0; slot < parameters_.size(); ++slot) {
      if (parameters_[slot].problem_size()) continue;
      for (int64_t candidate : SmallerValues(parameters_[slot], base_[slot])) {
        std::vector<int64_t> trial = base_;
        trial[slot] = candidate;
        Outcome outcome = Try(trial);
        if (outcome == Outcome::kError) break;  // e.g. a tile below what a shape allows
        if (outcome == Outcome::kFits) {
          out.push_back(MakeSuggestion(trial));
          break;
        }
      }
    }
    if (out.empty()) {
      if (auto fit = Greedy(base_, Pressure(failing_))) out.push_back(MakeSuggestion(*fit));
    }
    if (out.empty()) {
      if (auto fit = ClosestCombination(base_)) out.push_back(MakeSuggestion(*fit));
    }
    // Still nothing: the kernel's structure, not its tuning, is the problem. Say which problem
    // dimension would have to be tiled, and to what; no parameter of the suggestion changes a
    // problem size.
    if (out.empty()) {
      for (int slot = 0; slot < parameters_.size() && out.empty(); ++slot) {
        if (!parameters_[slot].problem_size()) continue;
        for (int64_t candidate : SmallerValues(parameters_[slot], base_[slot])) {
          std::vector<int64_t> trial = base_;
          trial[slot] = candidate;
          Outcome outcome = Try(trial);
          if (outcome == Outcome::kError) break;
          if (outcome == Outcome::kBroken) continue;
          std::optional<std::vector<int64_t>> fit;
          if (outcome == Outcome::kFits) fit = trial;
          if (!fit) fit = Greedy(trial, Pressure(last_));
          if (!fit) fit = ClosestCombination(trial);
          if (!fit) continue;
          Suggestion s = MakeSuggestion(*fit);
          s.set_text(absl::StrCat("no tuning parameter fits at any value; ", parameters_[slot].name(),
                                  " is a problem dimension held whole in one block: split it into blocks of at most ",
                                  candidate, " (", s.text(), ")"));
          s.clear_parameters();
          s.set_restructure(true);
          out.push_back(std::move(s));
          break;
        }
      }
    }
    RETURN_IF_ERROR(AddLimitAdvice(&out));
    return out;
  }

 private:
  enum class Outcome { kFits, kDoesNotFit, kBroken, kError };

  // Evaluates `values` while the search has work left (kError once it has not); last_ keeps the
  // result.
  Outcome Try(const std::vector<int64_t>& values) {
    if (work_ > kMaxSearchWork) return Outcome::kError;
    const absl::Status status = engine_.Evaluate(values, scratch_, &last_);
    const int64_t blocks = static_cast<int64_t>(scratch_.blocks.size());
    work_ += blocks * blocks / 2 + blocks + 1;
    if (!status.ok()) return Outcome::kError;
    if (last_.broken_requirement >= 0) return Outcome::kBroken;
    return last_.fits ? Outcome::kFits : Outcome::kDoesNotFit;
  }

  // How far over its limits a configuration is: the sum of required/available over fatal breaches.
  // (A memory limit with estimates: at their high bound, where a fix must hold.)
  static double Pressure(const FitResult& fit) {
    double pressure = 0;
    for (int l = 0; l < kNumLimits; ++l) {
      const Breach& b = fit.has_estimates && IsMemoryLimit(static_cast<Limit>(l)) ? fit.breaches_high[l] : fit.breaches[l];
      if (!b.breached || static_cast<Limit>(l) == Limit::kRegisterSpill) continue;
      if (b.available > 0) pressure += static_cast<double>(b.required) / static_cast<double>(b.available);
    }
    return pressure;
  }

  // Lowers whichever tuning parameter relieves the most pressure, repeatedly, from `current`.
  std::optional<std::vector<int64_t>> Greedy(std::vector<int64_t> current, double pressure) {
    for (int step = 0; step < kMaxGreedySteps; ++step) {
      int best_slot = -1;
      int64_t best_value = 0;
      double best_pressure = pressure;
      bool best_fits = false;
      for (int slot = 0; slot < parameters_.size(); ++slot) {
        if (parameters_[slot].problem_size()) continue;
        std::vector<int64_t> smaller = SmallerValues(parameters_[slot], current[slot]);
        if (smaller.empty()) continue;
        std::vector<int64_t> trial = current;
        trial[slot] = smaller.front();
        Outcome outcome = Try(trial);
        if (outcome == Outcome::kError || outcome == Outcome::kBroken) continue;
        const double p = Pressure(last_);
        if (p < best_pressure) {
          best_pressure = p;
          best_slot = slot;
          best_value = smaller.front();
          best_fits = outcome == Outcome::kFits;
        }
      }
      if (best_slot < 0) return std::nullopt;
      current[best_slot] = best_value;
      pressure = best_pressure;
      if (best_fits) return current;
    }
    return std::nullopt;
  }

  // Every combination of the tuning parameters' current and smaller values (the nearest ones
  // first when there are too many): the fitting one that changes the fewest parameters, by the
  // least (log2 of the ratios), earliest in enumeration order on ties.
  std::optional<std::vector<int64_t>> ClosestCombination(const std::vector<int64_t>& from) {
    std::vector<int> slots;
    std::vector<std::vector<int64_t>> choices;
    for (int slot = 0; slot < parameters_.size(); ++slot) {
      if (parameters_[slot].problem_size()) continue;
      std::vector<int64_t> values = {from[slot]};
      for (int64_t v : SmallerValues(parameters_[slot], from[slot])) values.push_back(v);
      if (values.size() < 2) continue;
      slots.push_back(slot);
      choices.push_back(std::move(values));
    }
    if (slots.empty()) return std::nullopt;
    // Trim the longest lists until the product is within budget.
    auto product = [&] {
      int64_t p = 1;
      for (const auto& c : choices) p = CheckedMul(p, static_cast<int64_t>(c.size())).value_or(INT64_MAX);
      return p;
    };
    while (product() > kMaxCombinations) {
      auto longest = std::max_element(choices.begin(), choices.end(),
                                      [](const auto& a, const auto& b) { return a.size() < b.size(); });
      if (longest->size() <= 2) break;
      longest->pop_back();
    }
    if (product() > kMaxCombinations) return std::nullopt;

    std::optional<std::vector<int64_t>> best;
    std::pair<int, double> best_cost{INT32_MAX, 0};
    std::vector<size_t> digit(slots.size(), 0);
    std::vector<int64_t> trial = from;
    for (;;) {
      int changed = 0;
      double distance = 0;
      for (size_t i = 0; i < slots.size(); ++i) {
        trial[slots[i]] = choices[i][digit[i]];
        if (digit[i] > 0) {
          ++changed;
          distance += std::log2(static_cast<double>(choices[i][0]) / static_cast<double>(choices[i][digit[i]]));
        }
      }
      const std::pair<int, double> cost{changed, distance};
      if (changed > 0 && cost < best_cost && Try(trial) == Outcome::kFits) {
        best_cost = cost;
        best = trial;
      }
      size_t i = 0;
      while (i < digit.size() && ++digit[i] == choices[i].size()) digit[i++] = 0;
      if (i == digit.size()) break;
    }
    return best;
  }

  // "BLOCK_M 128 -> 64, num_stages 4 -> 3: fits (smem 98304 B of 232448 B)".
  Suggestion MakeSuggestion(const std::vector<int64_t>& to) {
    (void)engine_.Evaluate(to, scratch_, &last_);  // last_ holds the fitting result (found before, so it evaluates)
    std::vector<std::string> changes;
    Suggestion s;
    for (size_t i = 0; i < to.size(); ++i) {
      if (base_[i] == to[i]) continue;
      changes.push_back(absl::StrCat(graph_.symbols.names()[i], " ", base_[i], " -> ", to[i]));
      ParameterValue* p = s.add_parameters();
      p->set_name(graph_.symbols.names()[i]);
      p->set_value(to[i]);
    }
    int64_t bytes = 0;
    std::string figure;
    const Breach& failed = failing_.breaches[static_cast<int>(failing_.limit)];
    if (failing_.limit == Limit::kThreads) {
      figure = absl::StrFormat("%d of %d threads", last_.threads, last_.thread_limit);
    } else if (failing_.limit == Limit::kNoResidency) {
      figure = absl::StrFormat("%d block%s per core", last_.blocks_per_core(), last_.blocks_per_core() == 1 ? "" : "s");
    } else if (failed.space >= 0) {
      const SpaceFigures& space = last_.spaces[failed.space];
      bytes = space.peak;
      figure = absl::StrFormat("%s %d B of %d B", engine_.device().memory_spaces(failed.space).name(), space.peak,
                               space.limit);
    }
    s.set_text(absl::StrCat(absl::StrJoin(changes, ", "), ": fits", figure.empty() ? "" : absl::StrCat(" (", figure, ")")));
    s.set_resulting_bytes(bytes);
    return s;
  }

  // Advice that no parameter value gives: fewer warps, a higher limit.
  absl::Status AddLimitAdvice(std::vector<Suggestion>* out) {
    const DeviceModel& device = engine_.device();
    const Breach& threads = failing_.breaches[static_cast<int>(Limit::kThreads)];
    if (threads.breached) {
      RETURN_IF_ERROR(engine_.Evaluate(base_, scratch_, &last_));  // the partitions' warps
      const int64_t warp_size = std::max(device.limits().warp_size(), 1);
      const int64_t excess_warps = CeilDiv(threads.required - threads.available, warp_size);
      std::vector<std::string> partitions;
      for (size_t i = 0; i < graph_.launch.partitions.size(); ++i) {
        const int64_t w = scratch_.partition_warps[i];
        if (w > excess_warps) {
          partitions.push_back(absl::StrCat(graph_.launch.partitions[i].name, " ", w, " -> ", w - excess_warps));
        }
      }
      Suggestion s;
      s.set_text(absl::StrCat("remove ", excess_warps, " warps (", threads.required - threads.available,
                              " threads) from the partitions",
                              partitions.empty() ? "" : absl::StrCat(", e.g. ", absl::StrJoin(partitions, " or ")),
                              "; or raise the kernel's thread limit to ", threads.required, " (hardware maximum ",
                              device.limits().max_threads_per_block(), ")"));
      out->push_back(std::move(s));
    }
    // With estimates, the limit that makes the verdict FITS holds them at their high bound.
    const bool estimates = failing_.has_estimates;
    const Breach& scoped = (estimates ? failing_.breaches_high : failing_.breaches)[static_cast<int>(Limit::kVmemScoped)];
    if (scoped.breached) {
      const MemorySpace& vmem = device.memory_spaces(scoped.space);
      const SpaceFigures& fig = (estimates ? failing_.spaces_high : failing_.spaces)[scoped.space];
      const int64_t allowed = vmem.max_scoped_limit_bytes() > 0 ? vmem.max_scoped_limit_bytes()
                                                                : vmem.capacity_per_core_bytes();
      const int64_t needed = scoped.required;  // the smallest limit that holds the scoped allocations
      Suggestion s;
      if (needed <= allowed && needed + fig.second <= UsableBytesPerCore(vmem)) {
        s.set_text(absl::StrFormat(
            "%s vmem_limit_bytes=%d (%.2f MiB): the smallest scoped limit that holds the allocations%s; the hardware "
            "allows up to %d B",
            fig.limit_source == LimitSource::kVmemLimitBytes ? absl::StrCat("raise the kernel's ", fig.limit, " B to")
                                                             : std::string("set"),
            needed, needed / 1048576.0, estimates ? " with the estimates at their high bound" : "", allowed));
        s.set_raise_limit_bytes(needed);
      } else {
        s.set_text(absl::StrFormat("no vmem_limit_bytes helps: the scoped allocations need %d B, more than the %d B "
                                   "one core allows: shrink the blocks",
                                   needed, allowed));
      }
      s.set_resulting_bytes(needed);
      out->push_back(std::move(s));
    }
    return absl::OkStatus();
  }

  const FitEngine& engine_;
  const CompiledGraph& graph_;
  const google::protobuf::RepeatedPtrField<Parameter>& parameters_;
  const std::vector<int64_t> base_;
  const FitResult& failing_;
  FitEngine::Scratch scratch_;
  FitResult last_;
  int64_t work_ = 0;  // what the evaluations so far placed (kMaxSearchWork)
};

}  // namespace

absl::StatusOr<std::vector<Suggestion>> SuggestFixes(const FitEngine& engine, absl::Span<const int64_t> values,
                                                     const FitResult& failing) {
  return FixFinder(engine, values, failing).Find();
}

}  // namespace scratchsim
