// The registers a compiler allocated for configurations of a kernel graph (proto
// CompiledRegisters): the fit engine's figure in place of the graph's estimate where it has one.
#ifndef SCRATCHSIM_SIM_COMPILED_REGISTERS_H_
#define SCRATCHSIM_SIM_COMPILED_REGISTERS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "proto/device.pb.h"
#include "proto/graph.pb.h"
#include "sim/config_index.h"
#include "sim/expr.h"
#include "sim/graph.h"

namespace scratchsim {

struct CompiledFigure {
  int64_t registers = 0;    // per thread, as allocated
  int64_t spill_bytes = 0;  // spill stores per thread
};

class CompiledRegisterTable {
 public:
  // The table of `compiled` (read from `origin`, which errors name) for `graph` planned on
  // `device`. Errors: another graph's or another target's figures (registers are the compile's,
  // for one architecture), a configuration named twice with different figures, registers
  // outside 1..the device's per-thread maximum, negative spill bytes, sets as ConfigIndex::Add,
  // a compiled_where that is not an expression over the graph's parameters.
  static absl::StatusOr<CompiledRegisterTable> Build(const CompiledGraph& graph, const DeviceModel& device,
                                                     const CompiledRegisters& compiled, const std::string& origin);

  // The compiler's figure for a configuration's parameter values (one per graph symbol), if it
  // compiled that configuration for a problem like this one: every compiled_where is nonzero (one
  // that cannot be evaluated, as a division by zero, does not hold). `assumed`, where given, says
  // whether they all hold, so a miss for another problem is told from a configuration not compiled.
  const CompiledFigure* Find(absl::Span<const int64_t> values, bool* assumed = nullptr) const;

  // The compiled_where expressions, as written.
  std::vector<std::string> assumptions() const;

  int size() const { return index_.size(); }
  const std::vector<std::string>& parameters() const { return index_.parameters(); }
  const std::string& compiler() const { return compiler_; }
  const std::string& origin() const { return origin_; }

 private:
  ConfigIndex index_;
  std::vector<CompiledFigure> figures_;  // per entry of index_
  std::vector<Expr> compiled_where_;

  bool Assumed(absl::Span<const int64_t> values) const;
  std::string compiler_;
  std::string origin_;
};

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_COMPILED_REGISTERS_H_
