// Parses TritonGPU IR text (the .ttgir Triton writes to its cache) into a TtgirModule: the ops
// tree with interned values, which the allocation analysis and the import read.
#ifndef SCRATCHSIM_BACKENDS_TRITON_TTGIR_PARSER_H_
#define SCRATCHSIM_BACKENDS_TRITON_TTGIR_PARSER_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace scratchsim::triton {

// One operation of the IR. Regions hold op indices into TtgirModule::ops; values are ids into
// TtgirModule::values (names are interned once at parse time so the planner never hashes text).
// The ops the planner and the scratch rules look at, classified once at parse time.
enum class TtgirOpKind : uint8_t {
  kOther,
  kLocalAlloc,
  kConvertLayout,
  kReduce,
  kScan,
  kHistogram,
  kGather,
  kAtomicRmw,
  kAtomicCas,
  kAtomicLoad,
  kAtomicPoll,
  kLocalAtomicScatterRmw,
  kBufferAtomicRmw,
  kBufferAtomicCas,
  kTensormapCreate,
  kWarpSpecialize,
  kFor,
  kWhile,
  kIf,
  kExecuteRegion,
  kIndexSwitch,
  kCall,
};
TtgirOpKind KindOfOp(std::string_view name);
// How the allocation rules know an op: listed (an op of Triton 3.6 or 3.9, or of MLIR's arith and
// math dialects), elementwise by its dialect only (an arith.*/math.* op not listed: accepted,
// and the module notes it), or unknown (ParseTtgir refuses it, naming it: a silent zero would be
// a guess).
enum class TtgirOpStanding : uint8_t { kListed, kElementwiseDialect, kUnknown };
TtgirOpStanding StandingOfTtgirOp(std::string_view name);
bool IsKnownTtgirOp(std::string_view name);  // listed or elementwise by its dialect

// Views and spans of TtgirOp point here; one allocation each instead of several per op.
struct TtgirStorage {
  std::string text;                // the IR, copied once; most op texts view it in place
  std::deque<std::string> pieces;  // texts made while parsing (joined lines, trailers)
  std::vector<int> refs;           // each op's results, defined values and uses, end to end
};

struct TtgirOp {
  int line = 0;                       // 1-based line of the op's first text line
  TtgirOpKind kind = TtgirOpKind::kOther;
  absl::string_view name;             // "ttg.local_alloc", "scf.for", "tt.reduce"
  absl::Span<const int> results;      // "%a" (and "%a#0".. expanded from "%a:2")
  absl::Span<const int> defined;      // block arguments its regions define (iter_args, ...)
  absl::Span<const int> uses;         // every %value the op's own text mentions
  absl::string_view text;             // the op's text without locations and regions
  int parent = -1;                    // enclosing op, -1 at function level
  int region = 0;                     // which region of the parent
  std::vector<std::vector<int>> regions;
  std::vector<std::vector<int>> region_args;  // block arguments per region
  int64_t partition_warps = 0;        // partitionN(...) num_warps(N)
  std::vector<int> captures;          // ttg.warp_specialize: the %values of its (...) operands
  int function = 0;                   // index into TtgirModule::functions
  absl::string_view callee;           // tt.call: the called function's symbol, unquoted
};

// One tt.func of the module: the kernel, or a device function Triton kept out of line
// (`@triton.jit(noinline=True)`) and calls with tt.call.
struct TtgirFunction {
  std::string name;                   // the symbol, unquoted
  int line = 0;
  bool is_public = false;             // `tt.func public`: the kernel; callees are private
  std::vector<int> body;              // its top-level ops
};

// Move-only: the ops' views point into `storage`, which moves with the module.
struct TtgirModule {
  std::string origin;
  int num_warps = 0;
  int num_ctas = 1;
  int threads_per_warp = 32;
  std::string target;                 // "cuda:90"
  // Whether the module attributes carry "ttng.two-ctas" (every NVIDIA module Triton 3.9 writes,
  // none of 3.6's): a cue to the release (DetectTritonRelease).
  bool two_ctas_attribute = false;
  // The kernel's location, `loc("file":line:column)` from `#loc = ...` (empty without one).
  std::string kernel_location;
  std::string function;
  std::map<std::string, std::string> aliases;  // "#blocked" -> "#ttg.blocked<{...}>"
  std::unique_ptr<TtgirStorage> storage = std::make_unique<TtgirStorage>();
  std::vector<TtgirOp> ops;
  std::vector<int> body;              // top-level ops of the kernel function
  std::vector<TtgirFunction> functions;  // every tt.func, in text order
  // What the module holds that the rules take on an assumption, once per construct: arith/math
  // ops not listed, module attributes no modelled release writes ("op arith.foo (line 7): ...").
  std::vector<std::string> unlisted;
  int kernel = 0;                     // index of the kernel (the public function) in functions
  // Value id -> name: "%a", "%a#0" for members of "%a:2", "3.1/%x" inside warp-specialize
  // partitions (names restart there; the prefix names the partition region). All names are
  // stored end to end in value_names; value i ends at value_name_end[i].
  std::string value_names;
  std::vector<uint32_t> value_name_end;
  std::vector<int> value_group;       // value id -> id of "%a" for "%a#k", else -1
  size_t num_values() const { return value_name_end.size(); }
  std::string_view ValueName(int id) const {
    const uint32_t begin = id == 0 ? 0 : value_name_end[id - 1];
    return std::string_view(value_names).substr(begin, value_name_end[id] - begin);
  }
};

// The deepest nesting ParseTtgir accepts: the module, the function and the regions inside it
// (scf.for, scf.if, warp-specialize partitions, ...). Triton's kernels nest a few levels
// (tests/data/triton/README.md); the bound keeps the analyses' walks up the region tree short
// and their recursion off the end of the stack, however deep the input nests.
inline constexpr size_t kMaxTtgirNesting = 1024;

// The largest count the module's attributes (ttg.num-warps, ttg.num-ctas,
// ttg.threads-per-warp) and warp-specialize partitions may give: no GPU runs a CTA of more than
// 32 warps of 32 or 16 of 64 threads.
inline constexpr int64_t kMaxTtgirWarps = 1024;

// `origin` names the text in errors ("origin:line: problem"); every error is InvalidArgument.
absl::StatusOr<TtgirModule> ParseTtgir(std::string_view text, std::string_view origin);

// The text of a .ttgir file, read in blocks that stop at the first line longer than
// kMaxTtgirLineBytes (InvalidArgument naming the path and the line): memory stays at the text
// before that line plus the limit, whatever the file holds (/dev/zero included). NotFound if the
// file cannot be opened.
absl::StatusOr<std::string> ReadTtgirFile(std::string_view path);

}  // namespace scratchsim::triton

#endif  // SCRATCHSIM_BACKENDS_TRITON_TTGIR_PARSER_H_
