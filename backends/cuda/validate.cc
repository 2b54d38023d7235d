// Predicted-versus-measured validation of the simulator against real kernel launches.
#include "backends/cuda/validate.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "proto/report.pb.h"
#include "sim/assignment.h"
#include "sim/checked_math.h"
#include "sim/graph.h"
#include "sim/json_text.h"
#include "sim/pipeline.h"
#include "sim/simulator.h"
#include "sim/status_macros.h"

namespace scratchsim::cuda {
namespace {

constexpr int kMaxConfigs = 100000;

// The values of one --sweep, in the syntax `simulate plan --param` takes (sim/assignment).
absl::StatusOr<std::vector<int64_t>> ParseSweepValues(absl::string_view sweep, absl::string_view text) {
  absl::StatusOr<std::vector<int64_t>> values = ParseValueList(text, kMaxConfigs);
  if (!values.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--sweep '", sweep, "': ", values.status().message()));
  }
  return values;
}

std::string Quote(absl::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += "\"\"";
    else out += c;
  }
  return out + "\"";
}

const char* YesNo(bool value) { return value ? "yes" : "no"; }

// Splits one CSV line, honouring double quotes.
std::vector<std::string> SplitCsvLine(absl::string_view line) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.push_back(std::move(field));
      field.clear();
    } else {
      field += c;
    }
  }
  fields.push_back(std::move(field));
  return fields;
}

constexpr const char* kCsvColumns[] = {
    "graph", "params", "opt_in", "instance", "threads_pred", "threads", "static_pred",
    "static", "dynamic_pred", "dynamic", "launch_pred", "launched", "failing_pred",
    "opt_in_error", "launch_error", "launch_pred_compiled_regs", "blocks_pred", "blocks",
    "blocks_pred_compiled_regs", "blocks_api",
    "limiter_pred", "occupancy_error", "regs_pred", "regs", "spill_pred", "local_bytes",
    "max_threads", "correctness", "time_ms", "smem_match", "launch_match", "blocks_match"};

}  // namespace

absl::StatusOr<std::vector<std::vector<std::string>>> ExpandSweeps(
    const std::vector<std::string>& sweeps) {
  std::vector<std::vector<std::string>> configs = {{}};
  std::set<std::string> seen;
  for (const std::string& sweep : sweeps) {
    std::pair<absl::string_view, absl::string_view> parts = absl::StrSplit(sweep, absl::MaxSplits('=', 1));
    if (parts.first.empty() || parts.second.empty() || !absl::StrContains(sweep, '=')) {
      return absl::InvalidArgumentError(
          absl::StrCat("--sweep '", sweep, "': expected P=LO..HI, P=LO..HI:pow2, P=LO..HI:step=S or P=V1,V2,..."));
    }
    if (!seen.insert(std::string(parts.first)).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("--sweep '", sweep, "': parameter '", parts.first, "' is swept twice"));
    }
    ASSIGN_OR_RETURN(std::vector<int64_t> values, ParseSweepValues(sweep, parts.second));
    if (configs.size() * values.size() > static_cast<size_t>(kMaxConfigs)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--sweep: more than ", kMaxConfigs, " configurations"));
    }
    std::vector<std::vector<std::string>> next;
    for (const std::vector<std::string>& config : configs) {
      for (int64_t v : values) {
        std::vector<std::string> extended = config;
        extended.push_back(absl::StrCat(parts.first, "=", v));
        next.push_back(std::move(extended));
      }
    }
    configs = std::move(next);
  }
  return configs;
}

absl::StatusOr<Prediction> Predict(const KernelGraph& graph, const std::string& origin,
                                   const DeviceModel& device,
                                   const std::vector<std::string>& overrides,
                                   std::optional<bool> opt_in,
                                   std::optional<int> compiled_registers) {
  KernelGraph copy = graph;
  if (opt_in.has_value()) copy.mutable_launch()->set_shared_memory_opt_in(*opt_in);
  const bool has_registers = !copy.launch().registers_per_thread().empty();
  if (compiled_registers.has_value()) {
    // What-if: the count ptxas chose, which already respects any cap.
    copy.mutable_launch()->set_registers_per_thread(absl::StrCat(*compiled_registers));
    copy.mutable_launch()->clear_max_registers_per_thread();
  }
  ASSIGN_OR_RETURN(CompiledKernel bound, CompileGraphKernel(std::move(copy), origin, overrides));
  const CompiledGraph& compiled = bound.compiled;
  const std::vector<int64_t>& values = bound.values;
  SimulateOptions options;
  options.suggest = false;
  ASSIGN_OR_RETURN(Report report, SimulateOnce(compiled, device, values, options));

  Prediction p;
  p.opt_in = compiled.launch.shared_memory_opt_in;
  for (size_t i = 0; i < compiled.symbols.names().size(); ++i) {
    p.params[compiled.symbols.names()[i]] = values[i];
  }
  p.threads = report.threads().required_threads();
  std::set<std::string> static_buffers;
  for (const CompiledBuffer& buffer : compiled.buffers) {
    if (buffer.static_allocation) static_buffers.insert(buffer.name);
  }
  for (const SpaceReport& space : report.spaces()) {
    if (space.kind() != SHARED_MEMORY) continue;
    int64_t static_top = 0;
    for (const Placement& placement : space.placements()) {
      if (static_buffers.count(placement.buffer()) == 0) continue;
      static_top = std::max(static_top, placement.offset() + placement.size_bytes());
    }
    const MemorySpace* model = nullptr;
    for (const MemorySpace& candidate : device.memory_spaces()) {
      if (candidate.name() == space.space()) model = &candidate;
    }
    int64_t alignment = model != nullptr ? std::max<int64_t>(model->alignment_bytes(), 1) : 1;
    std::optional<int64_t> static_aligned = CheckedRoundUp(static_top, alignment);
    if (!static_aligned) return absl::OutOfRangeError("static shared bytes overflow");
    p.static_shared_bytes = static_top;
    p.dynamic_shared_bytes = space.peak_bytes() - (static_top > 0 ? *static_aligned : 0);
  }
  p.launches = report.fits();
  std::vector<std::string> failing;
  for (const Violation& violation : report.violations()) {
    if (violation.fatal()) failing.push_back(violation.resource());
  }
  p.failing = absl::StrJoin(failing, ";");
  if (report.has_occupancy()) {
    p.blocks_per_sm = report.occupancy().blocks_per_core();
    p.limiting_factor = report.occupancy().limiting_factor();
  }
  p.has_registers = has_registers || compiled_registers.has_value();
  if (report.has_registers()) {
    p.registers = report.registers().allocated_per_thread();
    p.spill_bytes_per_thread = report.registers().spill_bytes_per_thread();
  }
  return p;
}

void CompareRow(ValidationRow& row) {
  const Prediction& p = row.predicted;
  const Measurement& m = row.measured;
  row.smem_match = p.static_shared_bytes == m.static_shared_bytes &&
                   p.dynamic_shared_bytes == m.dynamic_shared_bytes;
  row.launch_match = p.launches == m.launched;
  row.blocks_match = p.blocks_per_sm == m.blocks_per_sm;
  row.blocks_compiled_match = p.blocks_per_sm_compiled_registers == m.blocks_per_sm;
  row.launch_compiled_match = p.launches_compiled_registers == m.launched;
  row.threads_match = p.threads == m.threads;
}

ValidationSummary Summarize(const std::vector<ValidationRow>& rows) {
  ValidationSummary s;
  double abs_error_sum = 0;
  for (const ValidationRow& row : rows) {
    ++s.configs;
    s.smem_exact += row.smem_match;
    s.launch_match += row.launch_match;
    s.blocks_match += row.blocks_match;
    s.blocks_compiled_match += row.blocks_compiled_match;
    s.launch_compiled_match += row.launch_compiled_match;
    s.threads_match += row.threads_match;
    s.launched += row.measured.launched;
    s.correct += row.measured.correctness == "ok";
    if (row.predicted.has_registers) {
      ++s.register_rows;
      int error = std::abs(row.predicted.registers - row.measured.registers);
      s.registers_exact += error == 0;
      s.registers_within_8 += error <= 8;
      abs_error_sum += error;
      s.spill_exact += row.predicted.spill_bytes_per_thread == row.measured.local_bytes;
    }
  }
  if (s.register_rows > 0) s.registers_mean_abs_error = abs_error_sum / s.register_rows;
  return s;
}

std::string SummaryLine(const ValidationSummary& s) {
  const int n = s.configs;
  return absl::StrFormat(
      "%d configs: smem exact %d/%d, launch verdict %d/%d (with compiled registers %d/%d), "
      "occupancy %d/%d (with compiled registers %d/%d), threads %d/%d, registers exact %d/%d (within 8: %d/%d, mean |error| "
      "%.1f), spill bytes exact %d/%d, correct %d/%d launched",
      n, s.smem_exact, n, s.launch_match, n, s.launch_compiled_match, n, s.blocks_match, n,
      s.blocks_compiled_match, n,
      s.threads_match, n, s.registers_exact, s.register_rows, s.registers_within_8,
      s.register_rows, s.registers_mean_abs_error, s.spill_exact, s.register_rows, s.correct,
      s.launched);
}

std::string RenderTable(const std::vector<ValidationRow>& rows) {
  std::string out = absl::StrFormat(
      "%-22s %-44s %-3s %13s %15s %11s %9s %9s %9s %-12s %s\n", "graph", "params", "opt",
      "static p/m", "dynamic p/m", "launch p/m", "blk p/m", "blk(cr)", "regs p/m", "limiter",
      "check");
  for (const ValidationRow& row : rows) {
    const Prediction& p = row.predicted;
    const Measurement& m = row.measured;
    std::string mark = row.smem_match && row.launch_match && row.blocks_match ? "" : " <- MISMATCH";
    out += absl::StrFormat(
        "%-22s %-44s %-3s %6d/%-6d %7d/%-7d %5s/%-5s %4d/%-4d %9d %4d/%-4d %-12s %s%s\n",
        row.graph, absl::StrJoin(row.overrides, " "), p.opt_in ? "on" : "off",
        p.static_shared_bytes, m.static_shared_bytes, p.dynamic_shared_bytes,
        m.dynamic_shared_bytes, YesNo(p.launches), YesNo(m.launched), p.blocks_per_sm,
        m.blocks_per_sm, p.blocks_per_sm_compiled_registers, p.registers, m.registers,
        p.limiting_factor.empty() ? "-" : p.limiting_factor,
        m.launched ? m.correctness : m.launch_error, mark);
  }
  return out;
}

std::string RenderCsv(const std::vector<ValidationRow>& rows) {
  std::string out = absl::StrJoin(kCsvColumns, ",") + "\n";
  for (const ValidationRow& row : rows) {
    const Prediction& p = row.predicted;
    const Measurement& m = row.measured;
    std::vector<std::string> fields = {
        row.graph, Quote(absl::StrJoin(row.overrides, " ")), p.opt_in ? "1" : "0",
        Quote(m.instance), absl::StrCat(p.threads), absl::StrCat(m.threads),
        absl::StrCat(p.static_shared_bytes), absl::StrCat(m.static_shared_bytes),
        absl::StrCat(p.dynamic_shared_bytes), absl::StrCat(m.dynamic_shared_bytes),
        p.launches ? "1" : "0", m.launched ? "1" : "0", Quote(p.failing), m.opt_in_error,
        m.launch_error, p.launches_compiled_registers ? "1" : "0",
        absl::StrCat(p.blocks_per_sm), absl::StrCat(m.blocks_per_sm),
        absl::StrCat(p.blocks_per_sm_compiled_registers), absl::StrCat(m.occupancy_api_blocks),
        Quote(p.limiting_factor),
        m.occupancy_error, p.has_registers ? absl::StrCat(p.registers) : "",
        absl::StrCat(m.registers), p.has_registers ? absl::StrCat(p.spill_bytes_per_thread) : "",
        absl::StrCat(m.local_bytes), absl::StrCat(m.max_threads_per_block), Quote(m.correctness),
        absl::StrFormat("%.4f", m.time_ms), row.smem_match ? "1" : "0",
        row.launch_match ? "1" : "0", row.blocks_match ? "1" : "0"};
    out += absl::StrJoin(fields, ",") + "\n";
  }
  return out;
}

std::string RenderJson(const std::vector<ValidationRow>& rows, const ValidationSummary& s,
                       const std::string& device_description) {
  std::string out = absl::StrCat("{\n  \"device\": ", JsonString(device_description),
                                 ",\n  \"summary\": ", JsonString(SummaryLine(s)), ",\n");
  absl::StrAppend(&out, "  \"counts\": {\"configs\": ", s.configs, ", \"smem_exact\": ", s.smem_exact,
                  ", \"launch_match\": ", s.launch_match, ", \"blocks_match\": ", s.blocks_match,
                  ", \"blocks_compiled_registers_match\": ", s.blocks_compiled_match,
                  ", \"launch_compiled_registers_match\": ", s.launch_compiled_match,
                  ", \"threads_match\": ", s.threads_match, ", \"register_rows\": ", s.register_rows,
                  ", \"registers_exact\": ", s.registers_exact, ", \"registers_within_8\": ",
                  s.registers_within_8, ", \"spill_exact\": ", s.spill_exact,
                  ", \"launched\": ", s.launched, ", \"correct\": ", s.correct, "},\n");
  out += "  \"configs\": [\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const ValidationRow& row = rows[i];
    const Prediction& p = row.predicted;
    const Measurement& m = row.measured;
    std::vector<std::string> params;
    for (const auto& [name, value] : p.params) params.push_back(absl::StrCat(JsonString(name), ": ", value));
    absl::StrAppend(
        &out, "    {\"graph\": ", JsonString(row.graph), ", \"overrides\": ",
        JsonString(absl::StrJoin(row.overrides, " ")), ", \"params\": {", absl::StrJoin(params, ", "),
        "}, \"opt_in\": ", p.opt_in ? "true" : "false",
        ",\n     \"predicted\": {\"threads\": ", p.threads, ", \"static_shared_bytes\": ",
        p.static_shared_bytes, ", \"dynamic_shared_bytes\": ", p.dynamic_shared_bytes,
        ", \"launches\": ", p.launches ? "true" : "false", ", \"failing\": ", JsonString(p.failing),
        ", \"blocks_per_sm\": ", p.blocks_per_sm, ", \"blocks_per_sm_compiled_registers\": ",
        p.blocks_per_sm_compiled_registers, ", \"launches_compiled_registers\": ",
        p.launches_compiled_registers ? "true" : "false", ", \"limiting_factor\": ", JsonString(p.limiting_factor),
        ", \"registers\": ", p.has_registers ? absl::StrCat(p.registers) : "null",
        ", \"spill_bytes_per_thread\": ",
        p.has_registers ? absl::StrCat(p.spill_bytes_per_thread) : "null", "},\n");
    absl::StrAppend(
        &out, "     \"measured\": {\"instance\": ", JsonString(m.instance), ", \"threads\": ", m.threads,
        ", \"static_shared_bytes\": ", m.static_shared_bytes, ", \"dynamic_shared_bytes\": ",
        m.dynamic_shared_bytes, ", \"registers\": ", m.registers, ", \"local_bytes\": ", m.local_bytes,
        ", \"max_threads_per_block\": ", m.max_threads_per_block, ", \"opt_in_error\": ",
        JsonString(m.opt_in_error), ", \"launch_error\": ", JsonString(m.launch_error),
        ", \"launched\": ", m.launched ? "true" : "false", ", \"blocks_per_sm\": ", m.blocks_per_sm,
        ", \"occupancy_api_blocks\": ", m.occupancy_api_blocks, ", \"occupancy_error\": ", JsonString(m.occupancy_error), ", \"correctness\": ",
        JsonString(m.correctness), ", \"time_ms\": ", absl::StrFormat("%.4f", m.time_ms), "},\n");
    absl::StrAppend(&out, "     \"match\": {\"smem\": ", row.smem_match ? "true" : "false",
                    ", \"launch\": ", row.launch_match ? "true" : "false", ", \"blocks_per_sm\": ",
                    row.blocks_match ? "true" : "false", "}}", i + 1 < rows.size() ? ",\n" : "\n");
  }
  out += "  ]\n}\n";
  return out;
}

absl::StatusOr<std::vector<ValidationRow>> ParseMeasuredCsv(const std::string& contents,
                                                            const std::string& origin) {
  std::vector<absl::string_view> lines = absl::StrSplit(contents, '\n', absl::SkipEmpty());
  if (lines.empty()) return absl::InvalidArgumentError(absl::StrCat(origin, ": empty CSV"));
  std::vector<std::string> header = SplitCsvLine(lines[0]);
  std::map<std::string, size_t> column;
  for (size_t i = 0; i < header.size(); ++i) column[header[i]] = i;
  for (const char* needed : {"graph", "params", "opt_in", "instance", "threads", "static", "dynamic",
                             "launched", "opt_in_error", "launch_error", "blocks", "occupancy_error",
                             "regs", "local_bytes", "max_threads", "correctness", "time_ms"}) {
    if (column.count(needed) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(origin, ":1: missing column '", needed, "'"));
    }
  }
  std::vector<ValidationRow> rows;
  for (size_t line = 1; line < lines.size(); ++line) {
    std::vector<std::string> fields = SplitCsvLine(lines[line]);
    if (fields.size() != header.size()) {
      return absl::InvalidArgumentError(absl::StrCat(origin, ":", line + 1, ": ", fields.size(),
                                                     " fields, header has ", header.size()));
    }
    auto field = [&](const char* name) -> const std::string& { return fields[column[name]]; };
    auto integer = [&](const char* name, int64_t* out) -> absl::Status {
      if (!absl::SimpleAtoi(field(name), out)) {
        return absl::InvalidArgumentError(absl::StrCat(origin, ":", line + 1, ": column '", name,
                                                       "': '", field(name), "' is not an integer"));
      }
      return absl::OkStatus();
    };
    ValidationRow row;
    row.graph = field("graph");
    row.overrides = absl::StrSplit(field("params"), ' ', absl::SkipEmpty());
    row.predicted.opt_in = field("opt_in") == "1";
    Measurement& m = row.measured;
    m.instance = field("instance");
    int64_t value;
    RETURN_IF_ERROR(integer("threads", &value));
    m.threads = static_cast<int>(value);
    RETURN_IF_ERROR(integer("static", &m.static_shared_bytes));
    RETURN_IF_ERROR(integer("dynamic", &m.dynamic_shared_bytes));
    RETURN_IF_ERROR(integer("launched", &value));
    m.launched = value != 0;
    m.opt_in_error = field("opt_in_error");
    m.launch_error = field("launch_error");
    RETURN_IF_ERROR(integer("blocks", &value));
    m.blocks_per_sm = static_cast<int>(value);
    if (column.count("blocks_api") != 0) {
      RETURN_IF_ERROR(integer("blocks_api", &value));
      m.occupancy_api_blocks = static_cast<int>(value);
    }
    m.occupancy_error = field("occupancy_error");
    RETURN_IF_ERROR(integer("regs", &value));
    m.registers = static_cast<int>(value);
    RETURN_IF_ERROR(integer("local_bytes", &m.local_bytes));
    RETURN_IF_ERROR(integer("max_threads", &value));
    m.max_threads_per_block = static_cast<int>(value);
    m.correctness = field("correctness");
    if (!absl::SimpleAtod(field("time_ms"), &m.time_ms)) {
      return absl::InvalidArgumentError(
          absl::StrCat(origin, ":", line + 1, ": column 'time_ms' is not a number"));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace scratchsim::cuda
