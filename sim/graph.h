// Loads and validates KernelGraphs, compiles their expressions, and orders their ops.
// The op DAG (data and explicit dependencies) lives in Boost.Graph; a cycle is named op by op.
#ifndef SCRATCHSIM_SIM_GRAPH_H_
#define SCRATCHSIM_SIM_GRAPH_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "proto/device.pb.h"
#include "proto/graph.pb.h"
#include "sim/expr.h"
#include "sim/occupancy.h"
#include "sim/proto_io.h"
#include "sim/spelling.h"

namespace scratchsim {

// What a graph may hold (docs/reliability.md). LoadGraph and CompileGraph refuse more with an
// InvalidArgument error naming the file and the field; a binary graph is counted before it is
// parsed, so a huge one costs no memory.
inline constexpr int kMaxGraphBuffers = 1 << 20;
inline constexpr int kMaxGraphOps = 1 << 20;
inline constexpr int kMaxGraphLoops = 1 << 16;
inline constexpr int kMaxGraphParameters = 1 << 12;
inline constexpr int kMaxGraphRequirements = 1 << 12;
inline constexpr int kMaxGraphDefinitions = 1 << 12;
// At most this many files deep: a definitions file that imports another (definitions_from).
inline constexpr int kMaxDefinitionImportDepth = 8;
inline constexpr int kMaxBufferRank = 64;
inline constexpr int kMaxLaunchPartitions = 1 << 10;

// An optional expression of a buffer, held out of line: most buffers leave these fields empty,
// and a graph of a million buffers then pays 16 bytes a field rather than a whole Expr.
// Reads like std::optional<const Expr>.
class OptionalExpr {
 public:
  OptionalExpr() = default;
  OptionalExpr(std::optional<Expr> expr)  // NOLINT: assigned from CompileOptional's result
      : expr_(expr ? std::make_shared<const Expr>(*std::move(expr)) : nullptr) {}
  explicit operator bool() const { return expr_ != nullptr; }
  bool has_value() const { return expr_ != nullptr; }
  const Expr& operator*() const { return *expr_; }
  const Expr* operator->() const { return expr_.get(); }

 private:
  std::shared_ptr<const Expr> expr_;
};

// The fields of a buffer that most buffers leave empty, held out of line (CompiledBuffer::rare).
struct RareBufferFields {
  std::vector<Expr> round_up;           // applies to the trailing dims
  std::vector<Expr> array_shape;        // for reports only
  std::optional<Expr> pad_every;
  std::optional<Expr> pad_add;
  // Buffer.estimate: bounds of the bytes per copy (both set when the buffer is estimated), and
  // how it was estimated.
  std::optional<Expr> estimate_low;
  std::optional<Expr> estimate_high;
  std::string estimate_basis;
  std::string source;                   // Buffer.source, for reports only
};

// A compiled buffer: 208 bytes, so a million of them take 208 MB (docs/performance.md).
struct CompiledBuffer {
  std::string name;
  std::vector<Expr> shape;
  int64_t element_bits = 0;             // 0 when size_bytes is given instead
  OptionalExpr size_bytes;
  OptionalExpr copies;                  // set: multi-buffered (pipelined) buffer
  OptionalExpr alignment;
  std::string space;
  Scope scope = PROGRAM;
  BufferRole role = ROLE_UNSPECIFIED;
  bool static_allocation = false;
  bool only_where_space_exists = false;  // Buffer.only_where_space_exists
  std::string dtype;
  // Null when every field of RareBufferFields is empty; read them through the accessors below.
  std::shared_ptr<const RareBufferFields> rare;

  const std::vector<Expr>& round_up() const { return rare_fields().round_up; }
  const std::vector<Expr>& array_shape() const { return rare_fields().array_shape; }
  const std::optional<Expr>& pad_every() const { return rare_fields().pad_every; }
  const std::optional<Expr>& pad_add() const { return rare_fields().pad_add; }
  const std::optional<Expr>& estimate_low() const { return rare_fields().estimate_low; }
  const std::optional<Expr>& estimate_high() const { return rare_fields().estimate_high; }
  const std::string& estimate_basis() const { return rare_fields().estimate_basis; }
  const std::string& source() const { return rare_fields().source; }
  const RareBufferFields& rare_fields() const {
    static const RareBufferFields* const kNone = new RareBufferFields();
    return rare != nullptr ? *rare : *kNone;
  }
};

struct CompiledPartition {
  std::string name;
  Expr warps;
  std::optional<Expr> registers_per_thread;
};

struct CompiledLaunch {
  std::optional<Expr> num_warps;
  std::vector<CompiledPartition> partitions;
  std::optional<Expr> max_threads_per_block;
  std::optional<Expr> registers_per_thread;
  std::optional<Expr> max_registers_per_thread;
  std::optional<Expr> min_blocks_per_core;
  std::vector<Expr> grid;
  bool shared_memory_opt_in = true;
  // launch.cache_config; unset ("triton"): Triton's launcher's choice, which depends on the
  // shared memory (sim/engine.cc applies it).
  std::optional<CachePreference> cache_preference;
};

struct CompiledGraph {
  // The graph less its buffers and ops: those are compiled into `buffers` and the op tables
  // below, and each message is freed as soon as it is compiled, so a large graph is never held
  // twice (docs/reliability.md). Everything else (name, parameters, loops, launch, ...) is here.
  KernelGraph graph;
  std::string origin;                   // file name, for messages
  SymbolTable symbols;
  ExprDefinitions definitions;          // graph.definitions, compiled in order
  std::vector<int64_t> defaults;        // one per symbol
  // Slots of the names every expression may use whose values come from the device (bound by
  // BindDeviceSymbols; graph.cc's kDeviceSymbols says what each is), in that table's order.
  std::vector<int> device_symbol_slots;
  std::vector<CompiledBuffer> buffers;  // same order as graph.buffers
  // Execution order: indices into graph.ops, a topological order of the op DAG that keeps
  // the declared order wherever dependencies allow.
  std::vector<int> op_order;
  // Per op (by graph index): its name and kind (Op.name, Op.kind).
  std::vector<std::string> op_names;
  std::vector<std::string> op_kinds;
  // Per op (by graph index): buffers it touches (indices into buffers), and its loop chain
  // innermost first (indices into graph.loops).
  std::vector<std::vector<int>> op_buffers;
  std::vector<std::vector<int>> op_scratch;
  std::vector<std::vector<int>> op_reads;
  std::vector<std::vector<int>> op_writes;
  std::vector<std::vector<int>> op_loops;
  std::vector<std::optional<Expr>> loop_stages;
  CompiledLaunch launch;
  std::optional<Expr> vmem_limit_bytes;
  std::optional<Expr> scoped_vmem_limit_kib;
  std::optional<Expr> flops;
  std::optional<Expr> global_bytes;
  // The planner's other performance fields (graph.proto), parsed with the rest so that a
  // malformed one is an error of the graph whatever the command.
  std::optional<Expr> smem_bytes, grid_row_bytes, grid_col_bytes, tile_group_rows, peak_percent, sync_cycles,
      smem_round_trips, wait_cycles, issue_slots, warp_stall_percent, chains_per_block,
      chain_latency_cycles, l1_window_bytes, l1_refetch_bytes, synchronous_load_steps;
  std::vector<std::optional<Expr>> loop_trips;  // graph.loops trip_count, same order
  struct Requirement {
    Expr expr;
    std::string doc;
  };
  std::vector<Requirement> requirements;  // graph.requirements, same order
  std::vector<Requirement> ranking_assumptions;  // graph.ranking_assumptions: problem sizes only
  std::optional<Expr> ranking_error_permille;      // problem sizes only
  bool has_estimates = false;             // some buffer has an estimate
};

// Reads a graph from .pb, .pbtxt/.textproto or .json, its definitions_from resolved.
absl::StatusOr<KernelGraph> LoadGraph(absl::string_view path);

// Puts the definitions of the files `graph->definitions_from` names (relative to `path`, the
// graph's own file) before the graph's own, each marked with its file, and clears the list.
// Errors name the file and the field: a file that cannot be read, one that gives buffers or
// ops (a kernel, not definitions), a chain deeper than kMaxDefinitionImportDepth or a cycle.
absl::Status ImportDefinitions(KernelGraph* graph, absl::string_view path);

// A graph file read for CompileGraph. A binary graph's buffers and ops stay on the wire: `wire`
// holds the file, `graph` every other field, and CompileGraph decodes and compiles the buffers
// and ops one message at a time, so a million of them never exist as messages at once
// (docs/reliability.md). A text or JSON graph is parsed whole (`wire` empty).
struct GraphFile {
  KernelGraph graph;
  std::string wire;
};
absl::StatusOr<GraphFile> ReadGraphFile(absl::string_view path);
// A text or JSON graph's contents as ReadGraphFile reads them: parsed in pieces of about
// `piece_bytes` (ParseProtoInPieces), the buffers and ops on the wire, the rest in `graph`.
absl::StatusOr<GraphFile> ParseGraphToWire(absl::string_view contents, ProtoFormat format, absl::string_view origin,
                                           size_t piece_bytes);
// Moves the buffers and ops still on the wire into `file->graph` (for a front end that rewrites
// the whole graph); `wire` is then empty.
absl::Status DecodeGraphWire(GraphFile* file, absl::string_view origin);
// The same from the file's contents; `origin` names it in messages.
absl::StatusOr<KernelGraph> ParseGraph(absl::string_view contents, ProtoFormat format, absl::string_view origin);

// Validates names and references, parses every expression, and orders ops. `origin` names
// the source in messages ("mlp.pbtxt: buffer 'x_tile' shape[1]: ..."). The result's `graph`
// keeps all of `graph` but its buffers and ops (see CompiledGraph). With `wire` (GraphFile), the
// buffers and ops are those of that binary KernelGraph, and `graph` has none of its own; it is
// freed once they are compiled.
absl::StatusOr<CompiledGraph> CompileGraph(KernelGraph graph, std::string origin, std::string wire = {});

// Parameter values: the defaults with `overrides` ("BLOCK_M=64") applied. Unknown names, empty
// values and non-integers are errors, each naming the override as `spelling` writes it.
absl::StatusOr<std::vector<int64_t>> BindParameters(const CompiledGraph& graph,
                                                    absl::Span<const std::string> overrides,
                                                    const Spelling& spelling = {});

// Bytes of one copy of `buffer` (padding and rounding applied). Non-positive extents and
// overflow are errors naming the buffer and dimension.
absl::StatusOr<int64_t> BufferBytes(const CompiledGraph& graph, int buffer,
                                    absl::Span<const int64_t> values);

// Where an estimated buffer's bytes per copy lie: its central size (BufferBytes), or a bound.
enum class EstimateBound : uint8_t { kCentral = 0, kLow, kHigh };

// BufferBytes with an estimated buffer at `bound` (other buffers: their size). A bound that
// lies on the wrong side of the central size is an error naming the buffer.
absl::StatusOr<int64_t> BufferBytesAt(const CompiledGraph& graph, int buffer, absl::Span<const int64_t> values,
                                      EstimateBound bound);

// Copies (pipeline depth) of `buffer`: at least 1.
absl::StatusOr<int64_t> BufferCopies(const CompiledGraph& graph, int buffer,
                                     absl::Span<const int64_t> values);

// The slot of device symbol `name` in `graph`, or -1. The device symbols, names every
// expression may use whose values come from the device and never from --set: WARP_SIZE, SM_ARCH,
// DRAM_LATENCY_CYCLES, L2_BYTES_PER_CORE_CYCLE (docs/graph-format.md, "Expressions").
int DeviceSymbolSlot(const CompiledGraph& graph, absl::string_view name);

// Writes the device symbols into `values`, which has one slot per symbol.
void BindDeviceSymbols(const CompiledGraph& graph, const DeviceModel& device, absl::Span<int64_t> values);

// The index of the first graph requirement that `values` (device symbols bound) break or on
// which its expression fails (division by zero, overflow); -1 when every one holds.
int FirstBrokenRequirement(const CompiledGraph& graph, absl::Span<const int64_t> values);
// "gemm.pbtxt: requirements[1] \"BLOCK_M % ... == 0\" does not hold (thread rows must tile BLOCK_M)".
std::string BrokenRequirementMessage(const CompiledGraph& graph, int index);
// OK when every requirement holds, else InvalidArgument with BrokenRequirementMessage and, where
// the expression failed, its error.
absl::Status CheckRequirements(const CompiledGraph& graph, absl::Span<const int64_t> values);

// The requirements that name no tuning parameter (only problem_size parameters and device
// symbols) checked at `values`: a problem one of them rules out is no kernel for any tiling, so
// the planner refuses it before sweeping. The error names the graph, the requirement and the
// sizes that break it ("--set N=0"), not one configuration of the space.
absl::Status CheckProblemRequirements(const CompiledGraph& graph, absl::Span<const int64_t> values);

// One warning per ranking assumption (graph.ranking_assumptions) that `values`, the problem's
// sizes bound, break: "gemm.pbtxt: the ranking assumes \"N % 16 == 0\" (why), which N = 49155
// breaks; ...". Empty when every one holds.
std::vector<std::string> BrokenRankingAssumptions(const CompiledGraph& graph, absl::Span<const int64_t> values);

// True for a slot BindDeviceSymbols fills: not a parameter the user sets or sweeps.
bool IsDeviceSymbol(const CompiledGraph& graph, int slot);

// True for a slot that holds a problem_size parameter (parameters take the first slots, in order).
bool IsProblemSize(const CompiledGraph& graph, int slot);

// A buffer's extents for reports: the shape, the shape after round_up, the array it is a block
// of (empty when the graph gives none). Empty for raw byte sizes.
struct BufferDims {
  std::vector<int64_t> dims, padded, array;
};
absl::StatusOr<BufferDims> EvaluateBufferDims(const CompiledGraph& graph, int buffer, absl::Span<const int64_t> values);

// "16x2048xf32" for reports.
std::string ShapeString(const CompiledGraph& graph, int buffer, absl::Span<const int64_t> values);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_GRAPH_H_
