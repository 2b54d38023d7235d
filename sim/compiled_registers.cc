#include "sim/compiled_registers.h"

#include "absl/strings/str_cat.h"
#include "sim/device.h"
#include "sim/status_macros.h"

namespace scratchsim {

absl::StatusOr<CompiledRegisterTable> CompiledRegisterTable::Build(const CompiledGraph& graph,
                                                                   const DeviceModel& device,
                                                                   const CompiledRegisters& compiled,
                                                                   const std::string& origin) {
  if (compiled.graph() != graph.graph.name()) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": graph: '", compiled.graph(),
                                                   "' is not the planned graph '", graph.graph.name(), "'"));
  }
  if (compiled.target() != device.arch()) {
    return absl::InvalidArgumentError(absl::StrCat(
        origin, ": target: '", compiled.target(), "' is not the architecture of device '", device.name(), "' ('",
        device.arch(), "'): registers are the compiler's for one target; compile for ", device.arch()));
  }
  const int64_t max_registers = MaxRegistersPerThread(device);
  CompiledRegisterTable table;
  table.compiler_ = compiled.compiler();
  table.origin_ = origin;
  for (int i = 0; i < compiled.compiled_where_size(); ++i) {
    absl::StatusOr<Expr> condition = Expr::Parse(compiled.compiled_where(i), graph.symbols, &graph.definitions);
    if (!condition.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(origin, ": compiled_where[", i, "]: '", compiled.compiled_where(i),
                                                     "': ", condition.status().message()));
    }
    table.compiled_where_.push_back(*std::move(condition));
  }
  for (int i = 0; i < compiled.configs_size(); ++i) {
    const CompiledConfig& c = compiled.configs(i);
    const std::string field = absl::StrCat(origin, ": configs[", i, "]");
    if (c.registers() < 1 || c.registers() > max_registers) {
      return absl::InvalidArgumentError(absl::StrCat(field, ".registers: ", c.registers(), " is outside 1..",
                                                     max_registers, ", the registers a thread can have on ",
                                                     device.name()));
    }
    if (c.spill_bytes() < 0) {
      return absl::InvalidArgumentError(absl::StrCat(field, ".spill_bytes: ", c.spill_bytes(), " is negative"));
    }
    const std::vector<std::string> sets(c.sets().begin(), c.sets().end());
    ASSIGN_OR_RETURN(const ConfigIndex::Added added, table.index_.Add(graph, sets, field + ".sets"));
    const CompiledFigure figure{c.registers(), c.spill_bytes()};
    if (added.new_entry) {
      table.figures_.push_back(figure);
    } else if (const CompiledFigure& seen = table.figures_[added.entry];
               seen.registers != figure.registers || seen.spill_bytes != figure.spill_bytes) {
      return absl::InvalidArgumentError(absl::StrCat(field, ": repeats an earlier configuration with other figures (",
                                                     figure.registers, " registers, ",
                                                     figure.spill_bytes, " spill bytes against ", seen.registers,
                                                     " and ", seen.spill_bytes, ")"));
    }
  }
  return table;
}

bool CompiledRegisterTable::Assumed(absl::Span<const int64_t> values) const {
  for (const Expr& condition : compiled_where_) {
    const absl::StatusOr<int64_t> holds = condition.Evaluate(values);
    if (!holds.ok() || *holds == 0) return false;
  }
  return true;
}

std::vector<std::string> CompiledRegisterTable::assumptions() const {
  std::vector<std::string> texts;
  for (const Expr& condition : compiled_where_) texts.push_back(condition.text());
  return texts;
}

const CompiledFigure* CompiledRegisterTable::Find(absl::Span<const int64_t> values, bool* assumed) const {
  const bool holds = Assumed(values);
  if (assumed != nullptr) *assumed = holds;
  if (!holds) return nullptr;
  const std::optional<int> entry = index_.Find(values);
  return entry ? &figures_[*entry] : nullptr;
}

}  // namespace scratchsim
