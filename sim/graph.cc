#include "sim/graph.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <filesystem>
#include <iterator>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <map>
#include <memory>
#include <queue>
#include <type_traits>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "boost/graph/adjacency_list.hpp"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"
#include "boost/graph/depth_first_search.hpp"
#include "sim/checked_math.h"
#include "sim/dtype.h"
#include "sim/proto_io.h"
#include "sim/status_macros.h"

namespace scratchsim {
namespace {

// A million-buffer graph holds a million of these (docs/performance.md, "Memory of large graphs").
static_assert(sizeof(CompiledBuffer) <= 208, "CompiledBuffer grew: keep rarely set fields in RareBufferFields");

std::string GraphLimitMessage(int64_t count, int64_t limit) {
  return absl::StrCat("has ", count, " entries, more than the supported ", limit);
}

// A name every expression may use whose value comes from the device, never from --set.
struct DeviceSymbol {
  const char* name;
  int64_t unbound_value;  // before a device is bound (a graph checked on its own)
  int64_t (*value)(const DeviceModel& device);
};

int64_t WarpSize(const DeviceModel& device) { return device.limits().warp_size() > 0 ? device.limits().warp_size() : 32; }

int64_t SmArch(const DeviceModel& device) {
  return device.vendor() == "nvidia" ? device.limits().compute_major() * 10 + device.limits().compute_minor() : 0;
}

// Device facts in core clock cycles, rounded to the nearest integer; 0 where the device model
// lacks the figure (or a clock or core count to convert it), so a graph can switch a term off.
int64_t DramLatencyCycles(const DeviceModel& device) {
  const Performance& perf = device.performance();
  if (!(perf.dram_latency_ns() > 0) || !(perf.clock_mhz() > 0)) return 0;
  return std::llround(perf.dram_latency_ns() * perf.clock_mhz() * 1e-3);
}

int64_t L2BytesPerCoreCycle(const DeviceModel& device) {
  const Performance& perf = device.performance();
  const int64_t cores = device.limits().num_cores();
  if (!(perf.l2_bandwidth_gbps() > 0) || !(perf.clock_mhz() > 0) || cores <= 0) return 0;
  return std::llround(perf.l2_bandwidth_gbps() * 1e3 / perf.clock_mhz() / static_cast<double>(cores));
}

// WARP_SIZE: the warp (wavefront) size. SM_ARCH: the NVIDIA compute capability x 10 (90 on the
// H100; 0 on other vendors), so one graph can say which MMA a target gets. DRAM_LATENCY_CYCLES:
// performance.dram_latency_ns at clock_mhz, the latency the perf model charges a pipelined load.
// L2_BYTES_PER_CORE_CYCLE: l2_bandwidth_gbps shared by every core, per core and clock.
constexpr DeviceSymbol kDeviceSymbols[] = {
    {"WARP_SIZE", 32, WarpSize},
    {"SM_ARCH", 0, SmArch},
    {"DRAM_LATENCY_CYCLES", 0, DramLatencyCycles},
    {"L2_BYTES_PER_CORE_CYCLE", 0, L2BytesPerCoreCycle},
};

bool IsDeviceSymbolName(absl::string_view name) {
  for (const DeviceSymbol& symbol : kDeviceSymbols) {
    if (name == symbol.name) return true;
  }
  return false;
}

// Parallel edges are harmless here (in-degrees count them consistently), and vecS is far
// cheaper than a set per vertex on large graphs.
using OpGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
using OpVertex = boost::graph_traits<OpGraph>::vertex_descriptor;

// Records the first back edge a DFS meets; the tree-edge parents then spell out the cycle.
class CycleRecorder : public boost::default_dfs_visitor {
 public:
  CycleRecorder(std::vector<int>* parent, std::vector<int>* cycle) : parent_(parent), cycle_(cycle) {}
  void tree_edge(boost::graph_traits<OpGraph>::edge_descriptor e, const OpGraph& g) {
    (*parent_)[boost::target(e, g)] = static_cast<int>(boost::source(e, g));
  }
  void back_edge(boost::graph_traits<OpGraph>::edge_descriptor e, const OpGraph& g) {
    if (!cycle_->empty()) return;
    int from = static_cast<int>(boost::source(e, g));
    int to = static_cast<int>(boost::target(e, g));
    std::vector<int> path = {from};
    for (int v = from; v != to && v >= 0;) {
      v = (*parent_)[v];
      path.push_back(v);
    }
    std::reverse(path.begin(), path.end());
    path.push_back(to);
    *cycle_ = std::move(path);
  }

 private:
  std::vector<int>* parent_;
  std::vector<int>* cycle_;
};

// Takes every message out of a repeated field: each one is then owned, and freed, on its own.
template <typename Message>
std::vector<std::unique_ptr<Message>> TakeAll(google::protobuf::RepeatedPtrField<Message>* field) {
  const int n = field->size();
  std::vector<Message*> owned(n);
  field->ExtractSubrange(0, n, owned.data());
  std::vector<std::unique_ptr<Message>> messages(n);
  for (int i = 0; i < n; ++i) messages[i].reset(owned[i]);
  return messages;
}

class GraphCompiler {
 public:
  GraphCompiler(KernelGraph graph, std::string origin, std::string wire) : wire_(std::move(wire)) {
    out_.graph = std::move(graph);
    out_.origin = std::move(origin);
  }

  absl::StatusOr<CompiledGraph> Run() {
    RETURN_IF_ERROR(CheckSizes());
    RETURN_IF_ERROR(CompileParameters());
    RETURN_IF_ERROR(CompileDefinitions());
    RETURN_IF_ERROR(CompileBuffers());
    RETURN_IF_ERROR(CompileLoops());
    RETURN_IF_ERROR(CompileOps());
    std::string().swap(wire_);  // every buffer and op is compiled
    RETURN_IF_ERROR(OrderOps());
    RETURN_IF_ERROR(CompileLaunch());
    return std::move(out_);
  }

 private:
  absl::Status Bad(absl::string_view where, absl::string_view problem) const {
    return absl::InvalidArgumentError(absl::StrCat(out_.origin, ": ", where, ": ", problem));
  }

  // `where` is a string or a callable producing one: message text is built only on error,
  // which keeps compiling large graphs cheap.
  template <typename Where>
  static std::string Location(const Where& where) {
    if constexpr (std::is_invocable_v<Where>) {
      return where();
    } else {
      return std::string(where);
    }
  }

  // Each distinct text is parsed once and its Expr shared (a million buffers of shape 16 x 64
  // hold two expressions, not two million).
  template <typename Where>
  absl::StatusOr<Expr> Compile(absl::string_view text, const Where& where) {
    if (text.empty()) return Bad(Location(where), "is empty");
    if (auto it = expressions_.find(text); it != expressions_.end()) return it->second;
    auto expr = Expr::Parse(text, out_.symbols, &out_.definitions);
    if (!expr.ok()) return Bad(Location(where), expr.status().message());
    // Keyed by the Expr's own text, which lives as long as the Expr.
    expressions_.emplace(expr->text(), *expr);
    return std::move(*expr);
  }

  template <typename Where>
  absl::StatusOr<std::optional<Expr>> CompileOptional(absl::string_view text, const Where& where) {
    if (text.empty()) return std::optional<Expr>();
    ASSIGN_OR_RETURN(Expr expr, Compile(text, where));
    return std::optional<Expr>(std::move(expr));
  }

  static bool IsIdentifier(absl::string_view name) {
    if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
    return std::all_of(name.begin(), name.end(),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
  }

  // The limits of graph.h, before anything is compiled.
  absl::Status CheckSizes() const {
    const KernelGraph& g = out_.graph;
    for (const auto& [field, count, limit] :
         {std::tuple<const char*, int, int>{"buffers", g.buffers_size(), kMaxGraphBuffers},
          {"ops", g.ops_size(), kMaxGraphOps},
          {"loops", g.loops_size(), kMaxGraphLoops},
          {"parameters", g.parameters_size(), kMaxGraphParameters},
          {"requirements", g.requirements_size(), kMaxGraphRequirements},
          {"definitions", g.definitions_size(), kMaxGraphDefinitions},
          {"launch.partitions", g.launch().partitions_size(), kMaxLaunchPartitions}}) {
      if (count > limit) return Bad(field, GraphLimitMessage(count, limit));
    }
    for (const Buffer& buffer : g.buffers()) {
      if (buffer.shape_size() > kMaxBufferRank || buffer.array_shape_size() > kMaxBufferRank) {
        return Bad(absl::StrCat("buffer '", buffer.name(), "' shape"),
                   absl::StrCat("has more than the supported ", kMaxBufferRank, " dimensions"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status CompileParameters() {
    for (const Parameter& parameter : out_.graph.parameters()) {
      std::string where = absl::StrCat("parameter '", parameter.name(), "'");
      if (!IsIdentifier(parameter.name())) return Bad(where, "name must be an identifier");
      if (out_.symbols.Find(parameter.name()) >= 0) return Bad(where, "is defined twice");
      // The device's values are the device's: a parameter of the same name would shadow them,
      // as --set NAME=V would (which IsDeviceSymbol refuses).
      if (IsDeviceSymbolName(parameter.name())) {
        return Bad(where, "has the name of a value that comes from the device (--device); rename the parameter");
      }
      if (parameter.min() != 0 && parameter.max() != 0 && parameter.min() > parameter.max()) {
        return Bad(where, "min exceeds max");
      }
      out_.symbols.Add(parameter.name());
      out_.defaults.push_back(parameter.default_value());
    }
    for (const DeviceSymbol& symbol : kDeviceSymbols) {
      out_.device_symbol_slots.push_back(out_.symbols.Add(symbol.name));
      out_.defaults.push_back(symbol.unbound_value);
    }
    return absl::OkStatus();
  }

  // After the parameters and device values: a definition may use those and the definitions
  // before it, and every later expression may use them all.
  absl::Status CompileDefinitions() {
    if (out_.graph.definitions_from_size() > 0) {
      return Bad("definitions_from", absl::StrCat("'", out_.graph.definitions_from(0),
                                                  "' is not resolved: give the graph as a file, whose directory the "
                                                  "path is relative to"));
    }
    for (const Definition& definition : out_.graph.definitions()) {
      const std::string where =
          absl::StrCat("definition '", definition.name(), "'",
                       definition.from_file().empty() ? "" : absl::StrCat(" (from ", definition.from_file(), ")"));
      if (!IsIdentifier(definition.name())) return Bad(where, "name must be an identifier");
      if (Expr::IsFunction(definition.name())) return Bad(where, "has the name of a function");
      if (IsDeviceSymbolName(definition.name())) {
        return Bad(where, "has the name of a value that comes from the device (--device)");
      }
      if (out_.symbols.Find(definition.name()) >= 0) return Bad(where, "has the name of a parameter");
      if (out_.definitions.Find(definition.name()) != nullptr) return Bad(where, "is defined twice");
      ASSIGN_OR_RETURN(Expr expr, Compile(definition.expr(), [&where] { return absl::StrCat(where, " expr"); }));
      out_.definitions.Add(definition.name(), std::move(expr));
    }
    return absl::OkStatus();
  }

  // Takes the buffers out of the graph (or decodes them from the wire one at a time) and frees
  // each message once it is compiled: the compiled form replaces the message instead of adding
  // to it.
  absl::Status CompileBuffers() {
    if (!wire_.empty()) {
      ASSIGN_OR_RETURN(const int n, CountRecords(KernelGraph::kBuffersFieldNumber, "buffers", kMaxGraphBuffers));
      ReserveBuffers(n);
      Buffer buffer;
      return ForEachRecord(KernelGraph::kBuffersFieldNumber, &buffer, [&](int i) -> absl::Status {
        if (buffer.shape_size() > kMaxBufferRank || buffer.array_shape_size() > kMaxBufferRank) return RankError(buffer);
        return CompileBuffer(i, buffer);
      });
    }
    std::vector<std::unique_ptr<Buffer>> messages = TakeAll(out_.graph.mutable_buffers());
    const int n = static_cast<int>(messages.size());
    ReserveBuffers(n);
    for (int i = 0; i < n; ++i) {
      RETURN_IF_ERROR(CompileBuffer(i, *messages[i]));
      messages[i].reset();
    }
    return absl::OkStatus();
  }

  // Reserved once: the index keys are views of the compiled names, which must not move.
  void ReserveBuffers(int n) {
    out_.buffers.reserve(n);
    buffer_index_.reserve(n);
  }

  absl::Status RankError(const Buffer& buffer) const {
    return Bad(absl::StrCat("buffer '", buffer.name(), "' shape"),
               absl::StrCat("has more than the supported ", kMaxBufferRank, " dimensions"));
  }

  // Compiles buffers[i] and appends it to out_.buffers; its name is moved out of `buffer`.
  absl::Status CompileBuffer(int i, Buffer& buffer) {
    auto where = [&buffer](absl::string_view field = "") {
      return absl::StrCat("buffer '", buffer.name(), "'", field.empty() ? "" : " ", field);
    };
    if (buffer.name().empty()) return Bad(absl::StrCat("buffers[", i, "]"), "has no name");
    if (buffer_index_.contains(buffer.name())) return Bad(where(), "is defined twice");
    CompiledBuffer compiled;
    RareBufferFields rare;
    compiled.dtype = buffer.dtype();
    if (buffer.memory_space().empty()) return Bad(where(), "memory_space is missing");
    compiled.space = buffer.memory_space();
    compiled.scope = buffer.scope() == INSTRUCTION ? INSTRUCTION : PROGRAM;
    compiled.role = buffer.role();
    compiled.static_allocation = buffer.static_allocation();
    compiled.only_where_space_exists = buffer.only_where_space_exists();
    if (!buffer.size_bytes().empty()) {
      if (buffer.shape_size() > 0) return Bad(where(), "gives both shape and size_bytes");
      ASSIGN_OR_RETURN(compiled.size_bytes, CompileOptional(buffer.size_bytes(), [&] { return where("size_bytes"); }));
    } else {
      if (buffer.shape_size() == 0) return Bad(where(), "needs a shape (with dtype) or size_bytes");
      if (buffer.dtype().empty()) return Bad(where(), "dtype is missing");
      auto canonical = CanonicalDtype(buffer.dtype());
      if (!canonical.ok()) return Bad(where("dtype"), canonical.status().message());
      compiled.dtype = *canonical;
      auto bits = DtypeBits(*canonical);
      if (!bits.ok()) return Bad(where("dtype"), bits.status().message());
      compiled.element_bits = *bits;
      compiled.shape.reserve(buffer.shape_size());
      for (int d = 0; d < buffer.shape_size(); ++d) {
        ASSIGN_OR_RETURN(Expr dim, Compile(buffer.shape(d), [&] { return where(absl::StrCat("shape[", d, "]")); }));
        compiled.shape.push_back(std::move(dim));
      }
    }
    for (int d = 0; d < buffer.array_shape_size(); ++d) {
      ASSIGN_OR_RETURN(Expr extent, Compile(buffer.array_shape(d), [&] { return where(absl::StrCat("array_shape[", d, "]")); }));
      rare.array_shape.push_back(std::move(extent));
    }
    if (buffer.round_up_size() > buffer.shape_size()) return Bad(where(), "round_up has more entries than shape");
    for (int d = 0; d < buffer.round_up_size(); ++d) {
      ASSIGN_OR_RETURN(Expr multiple, Compile(buffer.round_up(d), [&] { return where(absl::StrCat("round_up[", d, "]")); }));
      rare.round_up.push_back(std::move(multiple));
    }
    if (buffer.has_padding()) {
      ASSIGN_OR_RETURN(rare.pad_every, CompileOptional(buffer.padding().every(), [&] { return where("padding.every"); }));
      ASSIGN_OR_RETURN(rare.pad_add, CompileOptional(buffer.padding().add(), [&] { return where("padding.add"); }));
      if (!rare.pad_every || !rare.pad_add) return Bad(where("padding"), "needs both every and add");
    }
    ASSIGN_OR_RETURN(compiled.copies, CompileOptional(buffer.copies(), [&] { return where("copies"); }));
    ASSIGN_OR_RETURN(compiled.alignment, CompileOptional(buffer.alignment(), [&] { return where("alignment"); }));
    if (buffer.has_estimate()) {
      ASSIGN_OR_RETURN(rare.estimate_low,
                       CompileOptional(buffer.estimate().low_bytes(), [&] { return where("estimate.low_bytes"); }));
      ASSIGN_OR_RETURN(rare.estimate_high,
                       CompileOptional(buffer.estimate().high_bytes(), [&] { return where("estimate.high_bytes"); }));
      if (!rare.estimate_low || !rare.estimate_high) {
        return Bad(where("estimate"), "needs both low_bytes and high_bytes");
      }
      rare.estimate_basis = buffer.estimate().basis();
      out_.has_estimates = true;
    }
    rare.source = buffer.source();
    if (!rare.round_up.empty() || !rare.array_shape.empty() || rare.pad_every || rare.estimate_low ||
        !rare.source.empty()) {
      compiled.rare = std::make_shared<const RareBufferFields>(std::move(rare));
    }
    compiled.name = std::move(*buffer.mutable_name());
    out_.buffers.push_back(std::move(compiled));
    buffer_index_.emplace(out_.buffers.back().name, i);
    return absl::OkStatus();
  }

  // The entries of field `number` in the binary graph wire_, counted and held to `limit`.
  absl::StatusOr<int> CountRecords(int number, absl::string_view field, int limit) const {
    int64_t count = 0;
    RETURN_IF_ERROR(ScanRecords(number, [&](absl::string_view) {
      ++count;
      return absl::OkStatus();
    }));
    if (count > limit) return Bad(field, GraphLimitMessage(count, limit));
    return static_cast<int>(count);
  }

  // Calls visit(bytes) for each entry of field `number` of the binary graph wire_, in order.
  template <typename Visit>
  absl::Status ScanRecords(int number, const Visit& visit) const {
    using google::protobuf::internal::WireFormatLite;
    google::protobuf::io::CodedInputStream input(reinterpret_cast<const uint8_t*>(wire_.data()),
                                                 static_cast<int>(std::min<size_t>(wire_.size(), INT32_MAX)));
    input.SetTotalBytesLimit(INT32_MAX);
    while (true) {
      const uint32_t tag = input.ReadTag();
      if (tag == 0) break;
      if (WireFormatLite::GetTagFieldNumber(tag) == number &&
          WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
        uint32_t length = 0;
        if (!input.ReadVarint32(&length)) return WireError();
        const int at = input.CurrentPosition();
        if (length > wire_.size() - at || !input.Skip(static_cast<int>(length))) return WireError();
        RETURN_IF_ERROR(visit(absl::string_view(wire_).substr(at, length)));
      } else if (!WireFormatLite::SkipField(&input, tag)) {
        return WireError();
      }
    }
    if (!input.ConsumedEntireMessage() || input.CurrentPosition() != static_cast<int>(wire_.size())) return WireError();
    return absl::OkStatus();
  }

  // Decodes each entry of field `number` into `message` (reused) and calls compile(index).
  template <typename Message, typename Compile>
  absl::Status ForEachRecord(int number, Message* message, const Compile& compile) const {
    int i = 0;
    return ScanRecords(number, [&](absl::string_view bytes) -> absl::Status {
      if (bytes.empty()) {
        message->Clear();
      } else if (!ParseProto(bytes, ProtoFormat::kBinary, out_.origin, message).ok()) {
        return WireError();
      }
      return compile(i++);
    });
  }

  // Malformed wire: the error that parsing the whole graph gives (built only then).
  absl::Status WireError() const {
    KernelGraph whole;
    absl::Status status = ParseProto(wire_, ProtoFormat::kBinary, out_.origin, &whole);
    if (!status.ok()) return status;
    return absl::InvalidArgumentError(absl::StrCat(out_.origin, ": not a valid binary KernelGraph (protobuf wire format)"));
  }

  absl::Status CompileLoops() {
    const KernelGraph& graph = out_.graph;
    for (int i = 0; i < graph.loops_size(); ++i) {
      const Loop& loop = graph.loops(i);
      std::string where = absl::StrCat("loop '", loop.name(), "'");
      if (loop.name().empty()) return Bad(absl::StrCat("loops[", i, "]"), "has no name");
      if (loop_index_.contains(loop.name())) return Bad(where, "is defined twice");
      loop_index_[loop.name()] = i;
      ASSIGN_OR_RETURN(std::optional<Expr> stages, CompileOptional(loop.num_stages(), where + " num_stages"));
      out_.loop_stages.push_back(std::move(stages));
      ASSIGN_OR_RETURN(std::optional<Expr> trips, CompileOptional(loop.trip_count(), where + " trip_count"));
      out_.loop_trips.push_back(std::move(trips));
    }
    loop_parent_.assign(graph.loops_size(), -1);
    for (int i = 0; i < graph.loops_size(); ++i) {
      const Loop& loop = graph.loops(i);
      if (loop.parent().empty()) continue;
      auto it = loop_index_.find(loop.parent());
      if (it == loop_index_.end()) {
        return Bad(absl::StrCat("loop '", loop.name(), "' parent"), absl::StrCat("unknown loop '", loop.parent(), "'"));
      }
      loop_parent_[i] = it->second;
    }
    // Nesting must be a forest.
    for (int i = 0; i < graph.loops_size(); ++i) {
      int steps = 0;
      for (int l = i; l >= 0; l = loop_parent_[l]) {
        if (++steps > graph.loops_size()) {
          return Bad(absl::StrCat("loop '", graph.loops(i).name(), "'"), "loop nesting forms a cycle");
        }
      }
    }
    return absl::OkStatus();
  }

  template <typename Where>
  absl::Status ResolveBuffers(const google::protobuf::RepeatedPtrField<std::string>& names, const Where& where,
                              std::vector<int>* out) const {
    for (const std::string& name : names) {
      auto it = buffer_index_.find(name);
      if (it == buffer_index_.end()) return Bad(Location(where), absl::StrCat("unknown buffer '", name, "'"));
      out->push_back(it->second);
    }
    return absl::OkStatus();
  }

  // Like CompileBuffers, takes the ops out of the graph (or decodes them one at a time) and frees
  // each once compiled; what the order needs later (`after`) is kept aside.
  absl::Status CompileOps() {
    if (!wire_.empty()) {
      ASSIGN_OR_RETURN(const int n, CountRecords(KernelGraph::kOpsFieldNumber, "ops", kMaxGraphOps));
      SizeOps(n);
      Op op;
      return ForEachRecord(KernelGraph::kOpsFieldNumber, &op, [&](int i) { return CompileOp(i, op); });
    }
    std::vector<std::unique_ptr<Op>> messages = TakeAll(out_.graph.mutable_ops());
    const int n = static_cast<int>(messages.size());
    SizeOps(n);
    for (int i = 0; i < n; ++i) {
      RETURN_IF_ERROR(CompileOp(i, *messages[i]));
      messages[i].reset();
    }
    return absl::OkStatus();
  }

  // Sized once: the index keys are views of the op names, which must not move.
  void SizeOps(int n) {
    op_index_.reserve(n);
    out_.op_names.resize(n);
    out_.op_kinds.resize(n);
    out_.op_buffers.resize(n);
    out_.op_scratch.resize(n);
    out_.op_reads.resize(n);
    out_.op_writes.resize(n);
    out_.op_loops.resize(n);
  }

  // Compiles ops[i] into the op tables; its name, kind and `after` are moved out of `op`.
  absl::Status CompileOp(int i, Op& op) {
    auto where = [&op](absl::string_view field) { return absl::StrCat("op '", op.name(), "'", field); };
    if (op.name().empty()) return Bad(absl::StrCat("ops[", i, "]"), "has no name");
    if (op_index_.contains(op.name())) return Bad(where(""), "is defined twice");
    out_.op_names[i] = std::move(*op.mutable_name());
    out_.op_kinds[i] = std::move(*op.mutable_kind());
    op_index_.emplace(out_.op_names[i], i);
    auto where_named = [this, i](absl::string_view field) {
      return absl::StrCat("op '", out_.op_names[i], "'", field);
    };
    RETURN_IF_ERROR(ResolveBuffers(op.reads(), [&] { return where_named(" reads"); }, &out_.op_reads[i]));
    RETURN_IF_ERROR(ResolveBuffers(op.writes(), [&] { return where_named(" writes"); }, &out_.op_writes[i]));
    RETURN_IF_ERROR(ResolveBuffers(op.scratch(), [&] { return where_named(" scratch"); }, &out_.op_scratch[i]));
    std::vector<int>& touched = out_.op_buffers[i];
    touched = out_.op_reads[i];
    touched.insert(touched.end(), out_.op_writes[i].begin(), out_.op_writes[i].end());
    touched.insert(touched.end(), out_.op_scratch[i].begin(), out_.op_scratch[i].end());
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    if (!op.loop().empty()) {
      auto it = loop_index_.find(op.loop());
      if (it == loop_index_.end()) return Bad(where_named(" loop"), absl::StrCat("unknown loop '", op.loop(), "'"));
      for (int l = it->second; l >= 0; l = loop_parent_[l]) out_.op_loops[i].push_back(l);
    }
    if (!op.after().empty()) after_.emplace_back(i, std::move(*op.mutable_after()));
    return absl::OkStatus();
  }

  // Program order is the declared order; data edges (a writer before later readers and
  // writers, a reader before later writers) follow it, and `after` adds explicit edges,
  // which are the only way to form a cycle.
  absl::Status OrderOps() {
    const int n = static_cast<int>(out_.op_names.size());
    OpGraph dag(n);
    size_t next_after = 0;  // after_ is in op order
    std::vector<int> last_writer(out_.buffers.size(), -1);
    std::vector<std::vector<int>> readers_since_write(out_.buffers.size());
    for (int i = 0; i < n; ++i) {
      for (int b : out_.op_reads[i]) {
        if (last_writer[b] >= 0 && last_writer[b] != i) boost::add_edge(last_writer[b], i, dag);
      }
      for (int b : out_.op_writes[i]) {
        if (last_writer[b] >= 0 && last_writer[b] != i) boost::add_edge(last_writer[b], i, dag);
        for (int r : readers_since_write[b]) {
          if (r != i) boost::add_edge(r, i, dag);
        }
      }
      for (int b : out_.op_reads[i]) readers_since_write[b].push_back(i);
      for (int b : out_.op_writes[i]) {
        last_writer[b] = i;
        readers_since_write[b].clear();
      }
      if (next_after < after_.size() && after_[next_after].first == i) {
        for (const std::string& before : after_[next_after].second) {
          auto it = op_index_.find(before);
          if (it == op_index_.end()) {
            return Bad(absl::StrCat("op '", out_.op_names[i], "' after"), absl::StrCat("unknown op '", before, "'"));
          }
          if (it->second == i) return Bad(absl::StrCat("op '", out_.op_names[i], "' after"), "an op cannot follow itself");
          boost::add_edge(it->second, i, dag);
        }
        ++next_after;
      }
    }

    std::vector<int> parent(n, -1);
    std::vector<int> cycle;
    std::vector<boost::default_color_type> colors(n);
    boost::depth_first_search(
        dag, CycleRecorder(&parent, &cycle),
        boost::make_iterator_property_map(colors.begin(), boost::get(boost::vertex_index, dag)));
    if (!cycle.empty()) {
      std::vector<std::string> names;
      for (int v : cycle) names.push_back(out_.op_names[v]);
      return Bad("ops", absl::StrCat("dependency cycle: ", absl::StrJoin(names, " -> ")));
    }

    // Kahn's algorithm, smallest declared index first, so the order is deterministic and
    // equals the declared order when no `after` points forward.
    std::vector<int> in_degree(n, 0);
    for (auto [e, end] = boost::edges(dag); e != end; ++e) ++in_degree[boost::target(*e, dag)];
    std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
    for (int i = 0; i < n; ++i) {
      if (in_degree[i] == 0) ready.push(i);
    }
    while (!ready.empty()) {
      int v = ready.top();
      ready.pop();
      out_.op_order.push_back(v);
      for (auto [e, end] = boost::out_edges(v, dag); e != end; ++e) {
        int w = static_cast<int>(boost::target(*e, dag));
        if (--in_degree[w] == 0) ready.push(w);
      }
    }
    return absl::OkStatus();
  }

  absl::Status CompileCacheConfig(const std::string& text, std::optional<CachePreference>* out) const {
    if (text.empty() || text == "triton") return absl::OkStatus();
    absl::StatusOr<CachePreference> preference = ParseCachePreference(text);
    if (!preference.ok()) return Bad("launch.cache_config", absl::StrCat(preference.status().message(), " or triton"));
    *out = *preference;
    return absl::OkStatus();
  }

  absl::Status CompileLaunch() {
    const Launch& launch = out_.graph.launch();
    CompiledLaunch& out = out_.launch;
    ASSIGN_OR_RETURN(out.num_warps, CompileOptional(launch.num_warps(), "launch.num_warps"));
    ASSIGN_OR_RETURN(out.max_threads_per_block,
                     CompileOptional(launch.max_threads_per_block(), "launch.max_threads_per_block"));
    ASSIGN_OR_RETURN(out.registers_per_thread,
                     CompileOptional(launch.registers_per_thread(), "launch.registers_per_thread"));
    ASSIGN_OR_RETURN(out.max_registers_per_thread,
                     CompileOptional(launch.max_registers_per_thread(), "launch.max_registers_per_thread"));
    ASSIGN_OR_RETURN(out.min_blocks_per_core,
                     CompileOptional(launch.min_blocks_per_core(), "launch.min_blocks_per_core"));
    for (int i = 0; i < launch.grid_size(); ++i) {
      ASSIGN_OR_RETURN(Expr g, Compile(launch.grid(i), absl::StrCat("launch.grid[", i, "]")));
      out.grid.push_back(std::move(g));
    }
    for (const Partition& partition : launch.partitions()) {
      std::string where = absl::StrCat("launch.partitions '", partition.name(), "'");
      if (partition.name().empty()) return Bad("launch.partitions", "a partition has no name");
      ASSIGN_OR_RETURN(Expr warps, Compile(partition.warps(), where + " warps"));
      ASSIGN_OR_RETURN(std::optional<Expr> regs,
                       CompileOptional(partition.registers_per_thread(), where + " registers_per_thread"));
      out.partitions.push_back({partition.name(), std::move(warps), std::move(regs)});
    }
    out.shared_memory_opt_in = !launch.has_shared_memory_opt_in() || launch.shared_memory_opt_in();
    RETURN_IF_ERROR(CompileCacheConfig(launch.cache_config(), &out.cache_preference));
    const TpuSettings& tpu = out_.graph.tpu();
    ASSIGN_OR_RETURN(out_.vmem_limit_bytes, CompileOptional(tpu.vmem_limit_bytes(), "tpu.vmem_limit_bytes"));
    ASSIGN_OR_RETURN(out_.scoped_vmem_limit_kib,
                     CompileOptional(tpu.scoped_vmem_limit_kib(), "tpu.scoped_vmem_limit_kib"));
    ASSIGN_OR_RETURN(out_.flops, CompileOptional(out_.graph.flops(), "flops"));
    ASSIGN_OR_RETURN(out_.global_bytes, CompileOptional(out_.graph.global_bytes(), "global_bytes"));
    const KernelGraph& g = out_.graph;
    for (const auto& [field, text, expr] :
         {std::tuple{"smem_bytes", &g.smem_bytes(), &out_.smem_bytes},
          std::tuple{"grid_row_bytes", &g.grid_row_bytes(), &out_.grid_row_bytes},
          std::tuple{"grid_col_bytes", &g.grid_col_bytes(), &out_.grid_col_bytes},
          std::tuple{"tile_group_rows", &g.tile_group_rows(), &out_.tile_group_rows},
          std::tuple{"peak_percent", &g.peak_percent(), &out_.peak_percent},
          std::tuple{"sync_cycles", &g.sync_cycles(), &out_.sync_cycles},
          std::tuple{"smem_round_trips", &g.smem_round_trips(), &out_.smem_round_trips},
          std::tuple{"wait_cycles", &g.wait_cycles(), &out_.wait_cycles},
          std::tuple{"issue_slots", &g.issue_slots(), &out_.issue_slots},
          std::tuple{"warp_stall_percent", &g.warp_stall_percent(), &out_.warp_stall_percent},
          std::tuple{"chains_per_block", &g.chains_per_block(), &out_.chains_per_block},
          std::tuple{"chain_latency_cycles", &g.chain_latency_cycles(), &out_.chain_latency_cycles},
          std::tuple{"l1_window_bytes", &g.l1_window_bytes(), &out_.l1_window_bytes},
          std::tuple{"l1_refetch_bytes", &g.l1_refetch_bytes(), &out_.l1_refetch_bytes},
          std::tuple{"synchronous_load_steps", &g.synchronous_load_steps(), &out_.synchronous_load_steps}}) {
      ASSIGN_OR_RETURN(*expr, CompileOptional(*text, field));
    }
    if (out_.l1_window_bytes.has_value() != out_.l1_refetch_bytes.has_value()) {
      return Bad(out_.l1_window_bytes ? "l1_refetch_bytes" : "l1_window_bytes",
                 "missing: l1_window_bytes and l1_refetch_bytes go together (the L1's reuse window)");
    }
    for (int i = 0; i < out_.graph.requirements_size(); ++i) {
      const Requirement& requirement = out_.graph.requirements(i);
      ASSIGN_OR_RETURN(Expr expr, Compile(requirement.expr(), absl::StrCat("requirements[", i, "] expr")));
      out_.requirements.push_back({std::move(expr), requirement.doc()});
    }
    return CompileRankingAssumptions();
  }

  // A ranking assumption is about the problem, not a configuration: it may name problem sizes
  // and device symbols only, so that one evaluation at the problem's sizes settles it.
  absl::Status CompileRankingAssumptions() {
    for (int i = 0; i < out_.graph.ranking_assumptions_size(); ++i) {
      const Requirement& assumption = out_.graph.ranking_assumptions(i);
      const std::string field = absl::StrCat("ranking_assumptions[", i, "] expr");
      ASSIGN_OR_RETURN(Expr expr, Compile(assumption.expr(), field));
      RETURN_IF_ERROR(ProblemSizesOnly(expr, field,
                                       "an assumption is about the problem's sizes, not a configuration (a "
                                       "condition on a configuration is a requirement)"));
      out_.ranking_assumptions.push_back({std::move(expr), assumption.doc()});
    }
    ASSIGN_OR_RETURN(out_.ranking_error_permille,
                     CompileOptional(out_.graph.ranking_error_permille(), "ranking_error_permille"));
    if (out_.ranking_error_permille) {
      RETURN_IF_ERROR(ProblemSizesOnly(*out_.ranking_error_permille, "ranking_error_permille",
                                       "the ranking error is a figure of the problem, not of a configuration"));
    }
    return absl::OkStatus();
  }

  // Settled by one evaluation at the problem's sizes: `expr` may name problem sizes and device
  // symbols only.
  absl::Status ProblemSizesOnly(const Expr& expr, const std::string& field, absl::string_view why) {
    for (int slot : expr.Parameters()) {
      if (IsDeviceSymbol(out_, slot) || IsProblemSize(out_, slot)) continue;
      return Bad(field, absl::StrCat("names '", out_.symbols.names()[slot], "', which is not a problem_size parameter: ",
                                     why));
    }
    return absl::OkStatus();
  }

  CompiledGraph out_;
  // A binary graph whose buffers and ops are compiled from here (see GraphFile), freed once they
  // are; empty: they are in out_.graph.
  std::string wire_;
  // Keys view out_.buffers[i].name and out_.op_names[i].
  absl::flat_hash_map<absl::string_view, int> buffer_index_;
  absl::flat_hash_map<std::string, int> loop_index_;
  absl::flat_hash_map<absl::string_view, int> op_index_;
  std::vector<std::pair<int, google::protobuf::RepeatedPtrField<std::string>>> after_;  // op, Op.after
  absl::flat_hash_map<absl::string_view, Expr> expressions_;  // keys view the Expr's text
  std::vector<int> loop_parent_;
};

// The entries of KernelGraph's repeated fields in binary `contents`, counted on the wire.
absl::Status CheckBinaryGraphSizes(absl::string_view contents, absl::string_view origin) {
  using google::protobuf::internal::WireFormatLite;
  std::map<int, std::pair<const char*, int64_t>> limits = {
      {KernelGraph::kBuffersFieldNumber, {"buffers", kMaxGraphBuffers}},
      {KernelGraph::kOpsFieldNumber, {"ops", kMaxGraphOps}},
      {KernelGraph::kLoopsFieldNumber, {"loops", kMaxGraphLoops}},
      {KernelGraph::kParametersFieldNumber, {"parameters", kMaxGraphParameters}},
      {KernelGraph::kRequirementsFieldNumber, {"requirements", kMaxGraphRequirements}}};
  std::map<int, int64_t> counts;
  google::protobuf::io::CodedInputStream input(reinterpret_cast<const uint8_t*>(contents.data()),
                                               static_cast<int>(std::min<size_t>(contents.size(), INT32_MAX)));
  input.SetTotalBytesLimit(INT32_MAX);
  while (true) {
    const uint32_t tag = input.ReadTag();
    if (tag == 0) break;
    const int number = WireFormatLite::GetTagFieldNumber(tag);
    if (auto it = limits.find(number); it != limits.end() && ++counts[number] > it->second.second) {
      return absl::InvalidArgumentError(absl::StrCat(origin, ": field '", it->second.first, "' ",
                                                     GraphLimitMessage(counts[number], it->second.second)));
    }
    // Malformed input stops the count; ParseProto then names it.
    if (!WireFormatLite::SkipField(&input, tag)) break;
  }
  return absl::OkStatus();
}

// Text and JSON graphs are parsed this many bytes at a time (ParseProtoInPieces).
constexpr size_t kGraphPieceBytes = size_t{8} << 20;

// Millions of small freed messages stay in the heap's free lists, counted as resident, while the
// compiled graph's tables come from fresh pages; glibc gives them back on request.
void ReturnFreedHeapToTheSystem() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

// A file that sets no field at all (only whitespace or comments, an empty binary file, JSON's
// `{}`) is no kernel: without this it simulated as an empty graph that FITS.
absl::Status RefuseEmptyGraph(const KernelGraph& graph, absl::string_view wire, absl::string_view path) {
  if (!wire.empty() || graph.ByteSizeLong() > 0) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": graph is empty (the file sets no field: only whitespace or comments?)"));
}

// A graph file's message as written (its definitions_from not resolved): the format from the
// extension, the file read and parsed.
absl::StatusOr<KernelGraph> ParseGraphFile(absl::string_view path) {
  ASSIGN_OR_RETURN(ProtoFormat format, FormatFromPath(path));
  ASSIGN_OR_RETURN(std::string contents, ReadFileToString(path));
  return ParseGraph(contents, format, path);
}

// The files a graph's definitions come from, while ImportDefinitions resolves them: `chain` the
// files from the graph to the one being read (a cycle), `taken` every file already taken (a file
// two others import gives its definitions once).
struct DefinitionImports {
  std::vector<std::string> chain;
  std::vector<std::string> taken;
};

absl::Status ImportDefinitionsFrom(KernelGraph* graph, absl::string_view path, DefinitionImports* imports) {
  if (graph->definitions_from_size() == 0) return absl::OkStatus();
  const std::filesystem::path directory = std::filesystem::path(std::string(path)).parent_path();
  google::protobuf::RepeatedPtrField<Definition> definitions;
  for (int i = 0; i < graph->definitions_from_size(); ++i) {
    const std::string& name = graph->definitions_from(i);
    const std::string where = absl::StrCat(path, ": definitions_from[", i, "] '", name, "'");
    if (name.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": definitions_from[", i, "]: is empty"));
    const std::string file = (directory / name).lexically_normal().string();
    if (absl::c_linear_search(imports->chain, file)) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": imports itself through ",
                                                     absl::StrJoin(imports->chain, " -> "), " -> ", file));
    }
    if (absl::c_linear_search(imports->taken, file)) continue;
    if (static_cast<int>(imports->chain.size()) > kMaxDefinitionImportDepth) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": definitions nested more than ", kMaxDefinitionImportDepth, " files deep"));
    }
    auto wrap = [&where](const absl::Status& status) {
      return absl::Status(status.code(), absl::StrCat(where, ": ", status.message()));
    };
    absl::StatusOr<KernelGraph> library = ParseGraphFile(file);
    if (!library.ok()) return wrap(library.status());
    if (library->buffers_size() > 0 || library->ops_size() > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": gives buffers or ops; a file named here gives definitions only"));
    }
    imports->chain.push_back(file);
    RETURN_IF_ERROR(ImportDefinitionsFrom(&*library, file, imports));
    imports->chain.pop_back();
    imports->taken.push_back(file);
    for (Definition& definition : *library->mutable_definitions()) {
      if (definition.from_file().empty()) definition.set_from_file(file);
      *definitions.Add() = std::move(definition);
    }
  }
  for (Definition& definition : *graph->mutable_definitions()) *definitions.Add() = std::move(definition);
  graph->mutable_definitions()->Swap(&definitions);
  graph->clear_definitions_from();
  return absl::OkStatus();
}

}  // namespace

absl::Status ImportDefinitions(KernelGraph* graph, absl::string_view path) {
  DefinitionImports imports;
  imports.chain.push_back(std::filesystem::path(std::string(path)).lexically_normal().string());
  return ImportDefinitionsFrom(graph, path, &imports);
}

absl::StatusOr<KernelGraph> LoadGraph(absl::string_view path) {
  ASSIGN_OR_RETURN(KernelGraph graph, ParseGraphFile(path));
  RETURN_IF_ERROR(RefuseEmptyGraph(graph, "", path));
  RETURN_IF_ERROR(ImportDefinitions(&graph, path));
  return graph;
}

absl::StatusOr<KernelGraph> ParseGraph(absl::string_view contents, ProtoFormat format, absl::string_view origin) {
  if (format == ProtoFormat::kBinary) {
    // Count the repeated top-level fields on the wire first: a graph past the limits is refused
    // without building millions of messages.
    RETURN_IF_ERROR(CheckBinaryGraphSizes(contents, origin));
  }
  KernelGraph graph;
  RETURN_IF_ERROR(ParseProto(contents, format, origin, &graph));
  return graph;
}

absl::StatusOr<GraphFile> ParseGraphToWire(absl::string_view contents, ProtoFormat format, absl::string_view origin,
                                           size_t piece_bytes) {
  // Each piece's buffers and ops go to the wire as a binary graph's lie, so that a million of them
  // never exist as messages at once and CompileGraph compiles them the same way
  // (docs/performance.md, "Memory of large graphs").
  GraphFile file;
  auto take = [&file](google::protobuf::Message* piece) {
    if (piece == nullptr) {
      std::string().swap(file.wire);
      return;
    }
    auto* graph = static_cast<KernelGraph*>(piece);
    if (graph->buffers_size() == 0 && graph->ops_size() == 0) return;
    KernelGraph lists;
    lists.mutable_buffers()->Swap(graph->mutable_buffers());
    lists.mutable_ops()->Swap(graph->mutable_ops());
    lists.AppendToString(&file.wire);
  };
  RETURN_IF_ERROR(ParseProtoInPieces(contents, format, origin, piece_bytes, &file.graph, take));
  return file;
}

namespace {

// ReadGraphFile's reading, the graph's definitions_from not yet resolved.
absl::StatusOr<GraphFile> ReadGraphFileAsWritten(absl::string_view path) {
  ASSIGN_OR_RETURN(ProtoFormat format, FormatFromPath(path));
  ASSIGN_OR_RETURN(std::string contents, ReadFileToString(path));
  GraphFile file;
  if (format != ProtoFormat::kBinary) {
    ASSIGN_OR_RETURN(file, ParseGraphToWire(contents, format, path, kGraphPieceBytes));
    std::string().swap(contents);
    ReturnFreedHeapToTheSystem();
    RETURN_IF_ERROR(RefuseEmptyGraph(file.graph, file.wire, path));
    return file;
  }
  if (contents.empty()) {
    ASSIGN_OR_RETURN(file.graph, ParseGraph(contents, format, path));
    RETURN_IF_ERROR(RefuseEmptyGraph(file.graph, "", path));
    return file;
  }
  RETURN_IF_ERROR(CheckBinaryGraphSizes(contents, path));
  // Every top-level field but the buffers and ops, copied as it lies on the wire.
  using google::protobuf::internal::WireFormatLite;
  std::string rest;
  bool deferred = false;
  google::protobuf::io::CodedInputStream input(reinterpret_cast<const uint8_t*>(contents.data()),
                                               static_cast<int>(std::min<size_t>(contents.size(), INT32_MAX)));
  input.SetTotalBytesLimit(INT32_MAX);
  bool well_formed = true;
  while (true) {
    const int from = input.CurrentPosition();
    const uint32_t tag = input.ReadTag();
    if (tag == 0) {
      well_formed = input.ConsumedEntireMessage() && from == static_cast<int>(contents.size());
      break;
    }
    if (!WireFormatLite::SkipField(&input, tag)) {
      well_formed = false;
      break;
    }
    const int number = WireFormatLite::GetTagFieldNumber(tag);
    if (number == KernelGraph::kBuffersFieldNumber || number == KernelGraph::kOpsFieldNumber) {
      deferred = true;
    } else {
      rest.append(contents, from, input.CurrentPosition() - from);
    }
  }
  // Malformed, without buffers and ops, or the rest does not parse: parsed whole, with
  // ParseProto's messages.
  if (!well_formed || !deferred || (!rest.empty() && !ParseProto(rest, format, path, &file.graph).ok())) {
    ASSIGN_OR_RETURN(file.graph, ParseGraph(contents, format, path));
    return file;
  }
  file.wire = std::move(contents);
  return file;
}

}  // namespace

absl::StatusOr<GraphFile> ReadGraphFile(absl::string_view path) {
  ASSIGN_OR_RETURN(GraphFile file, ReadGraphFileAsWritten(path));
  RETURN_IF_ERROR(ImportDefinitions(&file.graph, path));
  return file;
}

absl::Status DecodeGraphWire(GraphFile* file, absl::string_view origin) {
  if (file->wire.empty()) return absl::OkStatus();
  KernelGraph whole;
  RETURN_IF_ERROR(ParseProto(file->wire, ProtoFormat::kBinary, origin, &whole));
  file->graph.mutable_buffers()->Swap(whole.mutable_buffers());
  file->graph.mutable_ops()->Swap(whole.mutable_ops());
  std::string().swap(file->wire);
  return absl::OkStatus();
}

absl::StatusOr<CompiledGraph> CompileGraph(KernelGraph graph, std::string origin, std::string wire) {
  if (!wire.empty() && (graph.buffers_size() > 0 || graph.ops_size() > 0)) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": buffers and ops given both decoded and on the wire"));
  }
  return GraphCompiler(std::move(graph), std::move(origin), std::move(wire)).Run();
}

absl::StatusOr<std::vector<int64_t>> BindParameters(const CompiledGraph& graph,
                                                    absl::Span<const std::string> overrides,
                                                    const Spelling& spelling) {
  std::vector<int64_t> values = graph.defaults;
  for (const std::string& assignment : overrides) {
    std::pair<std::string, std::string> parts = absl::StrSplit(assignment, absl::MaxSplits('=', 1));
    const std::string given = spelling.Set(assignment);
    int slot = graph.symbols.Find(parts.first);
    if (IsDeviceSymbol(graph, slot)) {
      return absl::InvalidArgumentError(absl::StrCat(given, ": '", parts.first, "' comes from the device (",
                                                     spelling.Device(), ") and cannot be set"));
    }
    if (slot < 0) {
      std::vector<std::string> names;
      for (const Parameter& p : graph.graph.parameters()) names.push_back(p.name());
      return absl::InvalidArgumentError(absl::StrCat(given, ": '", parts.first, "' is not a parameter of ",
                                                     graph.origin, " (parameters: ", absl::StrJoin(names, ", "), ")"));
    }
    if (parts.second.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(given, ": the value of parameter '", parts.first,
                                                     "' is empty (give it as ", spelling.SetHint(parts.first), ")"));
    }
    int64_t value;
    if (!absl::SimpleAtoi(parts.second, &value)) {
      return absl::InvalidArgumentError(absl::StrCat(given, ": the value of parameter '", parts.first, "', '",
                                                     parts.second, "', is not a 64-bit integer"));
    }
    values[slot] = value;
  }
  return values;
}

absl::StatusOr<int64_t> BufferBytes(const CompiledGraph& graph, int buffer, absl::Span<const int64_t> values) {
  const CompiledBuffer& b = graph.buffers[buffer];
  auto bad = [&](absl::string_view field, absl::string_view problem) {
    return absl::InvalidArgumentError(
        absl::StrCat(graph.origin, ": buffer '", b.name, "' ", field, ": ", problem));
  };
  auto overflow = [&]() { return bad("size", "byte size overflows 64 bits"); };
  // An expression's own error (overflow, division by zero) with the file, buffer and field.
  auto eval = [&](const Expr& expr, absl::string_view field) -> absl::StatusOr<int64_t> {
    absl::StatusOr<int64_t> value = expr.Evaluate(values);
    if (!value.ok()) {
      return absl::Status(value.status().code(),
                          absl::StrCat(graph.origin, ": buffer '", b.name, "' ", field, ": ", value.status().message()));
    }
    return value;
  };
  if (b.size_bytes) {
    ASSIGN_OR_RETURN(int64_t bytes, eval(*b.size_bytes, "size_bytes"));
    if (bytes < 0) return bad("size_bytes", absl::StrCat("is negative (", bytes, ")"));
    return bytes;
  }
  int64_t elements = 1;
  size_t first_rounded = b.shape.size() - b.round_up().size();
  for (size_t d = 0; d < b.shape.size(); ++d) {
    auto extent = b.shape[d].Evaluate(values);
    if (!extent.ok()) return bad(absl::StrCat("shape[", d, "]"), extent.status().message());
    if (*extent <= 0) {
      return bad(absl::StrCat("shape[", d, "]"),
                 absl::StrCat("extent must be positive, got ", *extent, " (\"", b.shape[d].text(), "\")"));
    }
    int64_t padded = *extent;
    if (d >= first_rounded) {
      ASSIGN_OR_RETURN(int64_t multiple, eval(b.round_up()[d - first_rounded], absl::StrCat("round_up[", d - first_rounded, "]")));
      if (multiple <= 0) return bad(absl::StrCat("round_up[", d - first_rounded, "]"), "must be positive");
      auto rounded = CheckedRoundUp(padded, multiple);
      if (!rounded) return overflow();
      padded = *rounded;
    }
    auto product = CheckedMul(elements, padded);
    if (!product) return overflow();
    elements = *product;
  }
  if (b.pad_every()) {
    ASSIGN_OR_RETURN(int64_t every, eval(*b.pad_every(), "padding.every"));
    ASSIGN_OR_RETURN(int64_t add, eval(*b.pad_add(), "padding.add"));
    if (every <= 0 || add < 0) return bad("padding", "every must be positive and add non-negative");
    auto extra = CheckedMul((elements - 1) / every, add);
    if (!extra) return overflow();
    auto total = CheckedAdd(elements, *extra);
    if (!total) return overflow();
    elements = *total;
  }
  auto bits = CheckedMul(elements, b.element_bits);
  if (!bits) return overflow();
  return CeilDiv(*bits, 8);
}

absl::StatusOr<int64_t> BufferBytesAt(const CompiledGraph& graph, int buffer, absl::Span<const int64_t> values,
                                      EstimateBound bound) {
  ASSIGN_OR_RETURN(const int64_t central, BufferBytes(graph, buffer, values));
  const CompiledBuffer& b = graph.buffers[buffer];
  if (bound == EstimateBound::kCentral || !b.estimate_low()) return central;
  const bool low = bound == EstimateBound::kLow;
  const char* field = low ? "estimate.low_bytes" : "estimate.high_bytes";
  auto bytes = (low ? b.estimate_low() : b.estimate_high())->Evaluate(values);
  if (!bytes.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(graph.origin, ": buffer '", b.name, "' ", field, ": ", bytes.status().message()));
  }
  if (*bytes < 0 || (low ? *bytes > central : *bytes < central)) {
    return absl::InvalidArgumentError(absl::StrCat(graph.origin, ": buffer '", b.name, "' ", field, ": ", *bytes,
                                                   " B is ", *bytes < 0 ? "negative" : low ? "above" : "below",
                                                   " the central size of ", central, " B"));
  }
  return *bytes;
}

absl::StatusOr<int64_t> BufferCopies(const CompiledGraph& graph, int buffer, absl::Span<const int64_t> values) {
  const CompiledBuffer& b = graph.buffers[buffer];
  if (!b.copies) return 1;
  auto copies = b.copies->Evaluate(values);
  if (!copies.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(graph.origin, ": buffer '", b.name, "' copies: ", copies.status().message()));
  }
  constexpr int64_t kMaxCopies = 1 << 16;
  if (*copies > kMaxCopies) {
    return absl::InvalidArgumentError(absl::StrCat(graph.origin, ": buffer '", b.name, "' copies: ", *copies,
                                                   " exceeds the supported maximum of ", kMaxCopies));
  }
  if (*copies < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        graph.origin, ": buffer '", b.name, "' copies: must be at least 1, got ", *copies, " (\"",
        b.copies->text(), "\"; is num_stages 0?)"));
  }
  return *copies;
}

int DeviceSymbolSlot(const CompiledGraph& graph, absl::string_view name) {
  for (size_t i = 0; i < graph.device_symbol_slots.size() && i < std::size(kDeviceSymbols); ++i) {
    if (name == kDeviceSymbols[i].name) return graph.device_symbol_slots[i];
  }
  return -1;
}

void BindDeviceSymbols(const CompiledGraph& graph, const DeviceModel& device, absl::Span<int64_t> values) {
  const int64_t size = static_cast<int64_t>(values.size());
  for (size_t i = 0; i < graph.device_symbol_slots.size() && i < std::size(kDeviceSymbols); ++i) {
    const int slot = graph.device_symbol_slots[i];
    if (slot >= 0 && slot < size) values[slot] = kDeviceSymbols[i].value(device);
  }
}

int FirstBrokenRequirement(const CompiledGraph& graph, absl::Span<const int64_t> values) {
  for (size_t i = 0; i < graph.requirements.size(); ++i) {
    absl::StatusOr<int64_t> holds = graph.requirements[i].expr.Evaluate(values);
    if (!holds.ok() || *holds == 0) return static_cast<int>(i);
  }
  return -1;
}

std::string BrokenRequirementMessage(const CompiledGraph& graph, int index) {
  const CompiledGraph::Requirement& requirement = graph.requirements[index];
  return absl::StrCat(graph.origin, ": requirements[", index, "] \"", requirement.expr.text(), "\" does not hold",
                      requirement.doc.empty() ? "" : absl::StrCat(" (", requirement.doc, ")"));
}

std::vector<std::string> BrokenRankingAssumptions(const CompiledGraph& graph, absl::Span<const int64_t> values) {
  std::vector<std::string> warnings;
  for (const CompiledGraph::Requirement& assumption : graph.ranking_assumptions) {
    absl::StatusOr<int64_t> holds = assumption.expr.Evaluate(values);
    if (holds.ok() && *holds != 0) continue;
    std::vector<std::string> sizes;
    for (int slot : assumption.expr.Parameters()) {
      if (IsDeviceSymbol(graph, slot)) continue;
      sizes.push_back(absl::StrCat(graph.symbols.names()[slot], " = ", values[slot]));
    }
    warnings.push_back(absl::StrCat(
        graph.origin, ": the ranking assumes \"", assumption.expr.text(), "\"",
        assumption.doc.empty() ? "" : absl::StrCat(" (", assumption.doc, ")"), ", which ", absl::StrJoin(sizes, ", "),
        " breaks: the ranking is an estimate outside what the model was validated on; time the top configurations"));
  }
  return warnings;
}

absl::Status CheckProblemRequirements(const CompiledGraph& graph, absl::Span<const int64_t> values) {
  for (size_t i = 0; i < graph.requirements.size(); ++i) {
    const Expr& expr = graph.requirements[i].expr;
    std::vector<std::string> sizes;
    bool problem_only = true;
    std::vector<int> slots = expr.Parameters();
    absl::c_sort(slots);
    slots.erase(std::unique(slots.begin(), slots.end()), slots.end());
    for (int slot : slots) {
      if (IsDeviceSymbol(graph, slot)) continue;
      if (!IsProblemSize(graph, slot)) {
        problem_only = false;
        break;
      }
      sizes.push_back(absl::StrCat("--set ", graph.symbols.names()[slot], "=", values[slot]));
    }
    if (!problem_only || sizes.empty()) continue;
    absl::StatusOr<int64_t> holds = expr.Evaluate(values);
    if (holds.ok() && *holds != 0) continue;
    return absl::InvalidArgumentError(absl::StrCat(BrokenRequirementMessage(graph, static_cast<int>(i)), " at ",
                                                   absl::StrJoin(sizes, " "), ": no tiling makes this problem a kernel",
                                                   holds.ok() ? "" : absl::StrCat(": ", holds.status().message())));
  }
  return absl::OkStatus();
}

absl::Status CheckRequirements(const CompiledGraph& graph, absl::Span<const int64_t> values) {
  const int broken = FirstBrokenRequirement(graph, values);
  if (broken < 0) return absl::OkStatus();
  absl::StatusOr<int64_t> holds = graph.requirements[broken].expr.Evaluate(values);
  return absl::InvalidArgumentError(absl::StrCat(BrokenRequirementMessage(graph, broken),
                                                 holds.ok() ? "" : absl::StrCat(": ", holds.status().message())));
}

bool IsProblemSize(const CompiledGraph& graph, int slot) {
  // Parameters take the first slots, in order (CompileParameters).
  return slot >= 0 && slot < graph.graph.parameters_size() && graph.graph.parameters(slot).problem_size();
}

bool IsDeviceSymbol(const CompiledGraph& graph, int slot) {
  return slot >= 0 && absl::c_linear_search(graph.device_symbol_slots, slot);
}

absl::StatusOr<BufferDims> EvaluateBufferDims(const CompiledGraph& graph, int buffer, absl::Span<const int64_t> values) {
  const CompiledBuffer& b = graph.buffers[buffer];
  BufferDims out;
  if (b.size_bytes) return out;
  const size_t first_rounded = b.shape.size() - b.round_up().size();
  for (size_t d = 0; d < b.shape.size(); ++d) {
    ASSIGN_OR_RETURN(int64_t extent, b.shape[d].Evaluate(values));
    out.dims.push_back(extent);
    int64_t padded = extent;
    if (d >= first_rounded) {
      ASSIGN_OR_RETURN(int64_t multiple, b.round_up()[d - first_rounded].Evaluate(values));
      padded = CheckedRoundUp(extent, multiple).value_or(extent);
    }
    out.padded.push_back(padded);
  }
  for (const Expr& e : b.array_shape()) {
    ASSIGN_OR_RETURN(int64_t extent, e.Evaluate(values));
    out.array.push_back(extent);
  }
  return out;
}

std::string ShapeString(const CompiledGraph& graph, int buffer, absl::Span<const int64_t> values) {
  const CompiledBuffer& b = graph.buffers[buffer];
  if (b.size_bytes) {
    auto bytes = b.size_bytes->Evaluate(values);
    return absl::StrCat(bytes.ok() ? *bytes : -1, " B");
  }
  std::vector<std::string> dims;
  for (const Expr& d : b.shape) {
    auto v = d.Evaluate(values);
    dims.push_back(v.ok() ? absl::StrCat(*v) : "?");
  }
  return absl::StrCat(absl::StrJoin(dims, "x"), "x", b.dtype);
}

}  // namespace scratchsim
