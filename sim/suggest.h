// Finds the smallest changes that make a failing configuration fit, by asking the fit engine:
// one tunable parameter lowered, else a combination; plus limit-specific fixes (warps, vmem_limit_bytes).
#ifndef SCRATCHSIM_SIM_SUGGEST_H_
#define SCRATCHSIM_SIM_SUGGEST_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "proto/report.pb.h"
#include "sim/engine.h"

namespace scratchsim {

// `failing` is the engine's result for `values`. Suggestions change tuning parameters only,
// lowest first: one parameter; a greedy combination; the closest fitting combination of every
// tunable parameter's smaller values. Only when none fits does a suggestion say which problem
// dimension the kernel would have to tile (restructure, no parameters).
absl::StatusOr<std::vector<Suggestion>> SuggestFixes(const FitEngine& engine, absl::Span<const int64_t> values,
                                                     const FitResult& failing);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_SUGGEST_H_
