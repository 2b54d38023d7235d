// TTGIR text -> TtgirModule: the ops tree with interned values, what the allocation analysis
// and the import read. The IR's grammar is MLIR's generic form as Triton prints it to its cache.
#include "backends/triton/ttgir_parser.h"

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "backends/triton/ttgir_lexer.h"
#include "sim/proto_io.h"
#include "sim/status_macros.h"

namespace scratchsim::triton {
namespace {

absl::Status ParseError(absl::string_view origin, int line, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(origin, ":", line, ": ", what));
}

absl::Status TooDeep(absl::string_view origin, int line) {
  return ParseError(origin, line,
                    absl::StrCat("regions nested deeper than ", kMaxTtgirNesting,
                                 " levels (the most a TTGIR module may nest here)"));
}

// The lexer speaks std::string_view (whose members inline; the Debian Abseil's string_view is
// its own type, with library calls).
std::string_view View(absl::string_view s) { return std::string_view(s.data(), s.size()); }

// The module attributes Triton 3.6 and 3.9 write into the TTGIR of its cache (every fixture of
// tests/data/triton and both catalogue releases holds these and no other).
constexpr absl::string_view kKnownModuleAttributes[] = {"ttg.num-ctas", "ttg.num-warps", "ttg.target",
                                                        "ttg.threads-per-warp", "ttng.two-ctas"};

// The keys of "module attributes {k = v, "k2" = v2, ...} {" (unquoted), at the dictionary's top
// level: values with nested brackets or strings are skipped whole.
std::vector<absl::string_view> ModuleAttributeKeys(absl::string_view header) {
  std::vector<absl::string_view> keys;
  const size_t open = header.find('{');
  if (open == absl::string_view::npos) return keys;
  int depth = 0;
  bool in_string = false, expect_key = true;
  for (size_t i = open + 1; i < header.size(); ++i) {
    const char c = header[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (depth == 0 && expect_key && c != ' ') {
      if (c == '}') break;
      size_t end = i;
      if (c == '"') {
        end = header.find('"', i + 1);
        if (end == absl::string_view::npos) break;
        keys.push_back(header.substr(i + 1, end - i - 1));
        ++end;
      } else {
        while (end < header.size() && header[end] != ' ' && header[end] != '=' && header[end] != ',' &&
               header[end] != '}')
          ++end;
        keys.push_back(header.substr(i, end - i));
      }
      expect_key = false;
      i = end - 1;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '{' || c == '[' || c == '<' || c == '(') ++depth;
    else if (c == '}' || c == ']' || c == '>' || c == ')') {
      if (depth == 0) break;  // the dictionary's close
      --depth;
    } else if (c == ',' && depth == 0) {
      expect_key = true;
    }
  }
  return keys;
}

// The symbol "@name" or "@\"quoted name\"" at the start of `s`, without '@' and quotes (Triton
// quotes the mangled names of its device functions, which hold parentheses and commas).
absl::string_view SymbolAt(absl::string_view s) {
  s.remove_prefix(1);
  if (!s.empty() && s[0] == '"') {
    const size_t close = s.find('"', 1);
    return close == absl::string_view::npos ? s.substr(1) : s.substr(1, close - 1);
  }
  size_t end = 0;
  while (end < s.size() && (std::isalnum(static_cast<unsigned char>(s[end])) || s[end] == '_' || s[end] == '.' ||
                            s[end] == '$' || s[end] == '-')) {
    ++end;
  }
  return s.substr(0, end);
}

// A count among the module's attributes (`"ttg.num-warps" = 4 : i32`): `absent` when the key is
// not there; otherwise an integer from 1 to kMaxTtgirWarps, a power of two if `power_of_two`.
// Layouts and scratch sizes divide by these and take their logarithms: zero or a negative count
// must not reach them.
absl::StatusOr<int> ModuleCount(absl::string_view module_line, absl::string_view key, int absent,
                                bool power_of_two, absl::string_view origin, int line) {
  if (module_line.find(key) == absl::string_view::npos) return absent;
  const std::optional<int64_t> v = IntAttr(View(module_line), View(key));
  if (!v || *v <= 0 || *v > kMaxTtgirWarps || (power_of_two && (*v & (*v - 1)) != 0)) {
    return ParseError(origin, line,
                      absl::StrCat(key, " = ", v ? absl::StrCat(*v) : std::string("?"), ": expected ",
                                   power_of_two ? "a power of two " : "an integer ", "from 1 to ",
                                   kMaxTtgirWarps));
  }
  return static_cast<int>(*v);
}

// A short-string hash for value names (the library's std::string_view hash is a generic byte
// hash, too slow for names of a few bytes read once each). Whole words by fixed-size
// copies (single loads), the tail byte by byte: no library call per name.
inline size_t NameHash(std::string_view s) {
  const char* p = s.data();
  const size_t n = s.size();
  uint64_t h = 0xcbf29ce484222325ull ^ n;
  uint64_t lo = 0, hi = 0;
  if (n >= 8) {
    // Whole words, the last one overlapping the one before (the length is hashed too).
    size_t i = 0;
    for (; i + 8 < n; i += 8) {
      uint64_t w;
      std::memcpy(&w, p + i, 8);
      h = (h ^ w) * 0x9e3779b97f4a7c15ull;
      h ^= h >> 29;
    }
    std::memcpy(&lo, p + n - 8, 8);
  } else if (n >= 4) {
    uint32_t a, b;
    std::memcpy(&a, p, 4);
    std::memcpy(&b, p + n - 4, 4);
    lo = a;
    hi = b;
  } else {
    for (size_t i = 0; i < n; ++i) lo = (lo << 8) | static_cast<unsigned char>(p[i]);
  }
  h = (h ^ lo) * 0x9e3779b97f4a7c15ull;
  h = (h ^ hi ^ (h >> 32)) * 0xd6e8feb86659fd93ull;
  return static_cast<size_t>(h ^ (h >> 29));
}

// Equality of two names of the same length `n`, inline (names are a few bytes).
inline bool SameBytes(const char* a, const char* b, size_t n) {
  if (n >= 8) {
    uint64_t x, y;
    for (size_t i = 0; i + 8 < n; i += 8) {
      std::memcpy(&x, a + i, 8);
      std::memcpy(&y, b + i, 8);
      if (x != y) return false;
    }
    std::memcpy(&x, a + n - 8, 8);
    std::memcpy(&y, b + n - 8, 8);
    return x == y;
  }
  if (n >= 4) {
    uint32_t x0, y0, x1, y1;
    std::memcpy(&x0, a, 4);
    std::memcpy(&y0, b, 4);
    std::memcpy(&x1, a + n - 4, 4);
    std::memcpy(&y1, b + n - 4, 4);
    return x0 == y0 && x1 == y1;
  }
  for (size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

// Value names -> dense ids. Inside warp-specialize partitions names carry the partition's
// scope prefix; "%a#k" (members of "%a:N") also get the id of "%a" as their group. An
// open-addressing table of ids (sized from the IR's length, so it rarely grows) whose keys are
// the module's own value_names: nothing is copied but the name itself, once.
class ValueInterner {
 public:
  ValueInterner(TtgirModule& m, size_t expected) : m_(m) {
    size_t capacity = 256;
    while (capacity < expected * 2) capacity <<= 1;
    slots_.assign(capacity, 0);
  }

  // `v` needs to live only for the call.
  int Get(std::string_view scope, std::string_view v) {
    if (scope.empty()) return Find(v);
    key_.assign(scope.data(), scope.size());
    key_.append(v.data(), v.size());
    return Find(key_);
  }

 private:
  // A slot holds the hash's high 32 bits (to skip most name compares) and id + 1; 0 is empty.
  static uint64_t Slot(size_t hash, int id) {
    return (static_cast<uint64_t>(hash >> 32) << 32) | (static_cast<uint64_t>(id) + 1);
  }

  int Find(std::string_view name) {
    const size_t h = NameHash(name);
    const uint64_t tag = static_cast<uint64_t>(h >> 32) << 32;
    const size_t mask = slots_.size() - 1;
    size_t i = h & mask;
    for (uint64_t slot; (slot = slots_[i]) != 0; i = (i + 1) & mask) {
      if ((slot & 0xffffffff00000000ull) != tag) continue;
      const int id = static_cast<int>((slot & 0xffffffffu) - 1);
      const uint32_t end = m_.value_name_end[id];
      const uint32_t begin = id == 0 ? 0 : m_.value_name_end[id - 1];
      if (end - begin == name.size() &&
          SameBytes(m_.value_names.data() + begin, name.data(), name.size())) {
        return id;
      }
    }
    const int id = static_cast<int>(m_.value_name_end.size());
    slots_[i] = Slot(h, id);
    m_.value_names.append(name);
    m_.value_name_end.push_back(static_cast<uint32_t>(m_.value_names.size()));
    m_.value_group.push_back(-1);
    if (2 * m_.value_name_end.size() > slots_.size()) Grow();
    size_t hash = 0;
    while (hash < name.size() && name[hash] != '#') ++hash;
    if (hash < name.size()) {
      // `name` still views the IR text or key_, neither of which changed.
      const int group = Find(name.substr(0, hash));
      m_.value_group[id] = group;
    }
    return id;
  }

  void Grow() {
    slots_.assign(slots_.size() * 2, 0);
    const size_t mask = slots_.size() - 1;
    for (size_t id = 0; id < m_.value_name_end.size(); ++id) {
      const size_t h = NameHash(m_.ValueName(static_cast<int>(id)));
      size_t i = h & mask;
      while (slots_[i] != 0) i = (i + 1) & mask;
      slots_[i] = Slot(h, static_cast<int>(id));
    }
  }

  TtgirModule& m_;
  std::string key_;
  std::vector<uint64_t> slots_;
};

struct Frame {
  int op = -1;  // -1: module or function scope
  bool function = false;
  // Value names restart inside isolated regions (warp_specialize partitions): the prefix
  // keeps "%41" of one partition apart from "%41" of another.
  std::string scope;
};

}  // namespace

namespace {

// The ops Triton 3.6 and 3.9 write into TTGIR that hold no shared memory of their own beyond the
// rules the planner applies (explicit ttg.local_alloc, the scratch of the ops ScratchFor sizes):
// every op of the GPU fixtures and of both catalogue releases (tests/data/triton), every op of
// the registered-op fixture set (tests/data/triton/ops_registered), ops of the
// same dialects known to the releases without a scratch rule (upstream's
// defaultAllocationAnalysisScratchSizeFn and the AMD one), and every op of MLIR's arith and math
// dialects (elementwise: Triton lowers them in registers), and `llvm.intr.assume` (what `tl.assume`
// becomes; Inductor's mm template writes it: no memory). Sorted (checked at compile time).
constexpr std::string_view kKnownOps[] = {
    "amdg.arrive_barrier", "amdg.async_copy_local_to_global", "amdg.async_copy_mbarrier_arrive",
    "amdg.async_tdm_copy_global_to_local", "amdg.async_tdm_copy_local_to_global",
    "amdg.async_tdm_fused_copy_global_to_local", "amdg.async_tdm_gather", "amdg.async_tdm_scatter",
    "amdg.async_tdm_wait", "amdg.buffer_atomic_cas", "amdg.buffer_atomic_rmw", "amdg.buffer_load",
    "amdg.buffer_load_to_local", "amdg.buffer_store", "amdg.cluster_barrier_arrive", "amdg.cluster_barrier_wait",
    "amdg.cond_barrier", "amdg.extract_slice", "amdg.in_thread_transpose", "amdg.init_barrier",
    "amdg.instruction_sched_hint", "amdg.local_load_packed_transposed", "amdg.memory_counter_wait",
    "amdg.scaled_downcast_fp4", "amdg.scaled_downcast_fp8", "amdg.scaled_upcast_fp4", "amdg.scaled_upcast_fp8",
    "amdg.tdm_prefetch", "amdg.upcast_mxfp", "amdg.update_tensor_descriptor", "amdg.wait_barrier", "arith.addf",
    "arith.addi", "arith.addui_extended", "arith.andi", "arith.bitcast", "arith.ceildivsi", "arith.ceildivui",
    "arith.cmpf", "arith.cmpi", "arith.constant", "arith.divf", "arith.divsi", "arith.divui", "arith.extf",
    "arith.extsi", "arith.extui", "arith.floordivsi", "arith.fptosi", "arith.fptoui", "arith.index_cast",
    "arith.index_castui", "arith.maximumf", "arith.maxnumf", "arith.maxsi", "arith.maxui", "arith.minimumf",
    "arith.minnumf", "arith.minsi", "arith.minui", "arith.mulf", "arith.muli", "arith.mulsi_extended",
    "arith.mului_extended", "arith.negf", "arith.ori", "arith.remf", "arith.remsi", "arith.remui", "arith.scaling_extf",
    "arith.scaling_truncf", "arith.select", "arith.shli", "arith.shrsi", "arith.shrui", "arith.sitofp", "arith.subf",
    "arith.subi", "arith.truncf", "arith.trunci", "arith.uitofp", "arith.xori", "cf.br", "cf.cond_br", "gpu.barrier",
    "llvm.fence", "llvm.intr.assume", "math.absf", "math.absi", "math.acos", "math.acosh", "math.asin", "math.asinh",
    "math.atan", "math.atan2", "math.atanh", "math.cbrt", "math.ceil", "math.clampf", "math.copysign", "math.cos",
    "math.cosh", "math.ctlz", "math.ctpop", "math.cttz", "math.erf", "math.erfc", "math.exp", "math.exp2", "math.expm1",
    "math.floor", "math.fma", "math.fpowi", "math.ipowi", "math.isfinite", "math.isinf", "math.isnan", "math.isnormal",
    "math.log", "math.log10", "math.log1p", "math.log2", "math.powf", "math.round", "math.roundeven", "math.rsqrt",
    "math.sin", "math.sincos", "math.sinh", "math.sqrt", "math.tan", "math.tanh", "math.trunc", "rocdl.s.barrier",
    "rocdl.s.setprio", "rocdl.s.waitcnt", "rocdl.sched.barrier", "rocdl.sched.group.barrier", "rocdl.workitem.id.x",
    "scf.condition", "scf.execute_region", "scf.for", "scf.if", "scf.index_switch", "scf.while", "scf.yield",
    "tt.addptr", "tt.advance", "tt.approx_divf", "tt.assert", "tt.atomic_cas", "tt.atomic_load", "tt.atomic_poll",
    "tt.atomic_rmw", "tt.atomic_store", "tt.bitcast", "tt.broadcast", "tt.call", "tt.cat", "tt.clampf",
    "tt.descriptor_gather", "tt.descriptor_load", "tt.descriptor_scatter", "tt.descriptor_store", "tt.dot",
    "tt.dot_scaled", "tt.elementwise_inline_asm", "tt.expand_dims", "tt.extern_elementwise", "tt.fp_to_fp", "tt.gather",
    "tt.get_num_programs", "tt.get_program_id", "tt.grid_dependency_launch_dependents", "tt.grid_dependency_wait",
    "tt.histogram", "tt.int_to_ptr", "tt.join", "tt.load", "tt.make_range", "tt.make_tensor_descriptor",
    "tt.make_tensor_ptr", "tt.map_elementwise", "tt.map_elementwise.return", "tt.mulhiui", "tt.precise_divf",
    "tt.precise_sqrt", "tt.print", "tt.ptr_to_int", "tt.reduce", "tt.reduce.return", "tt.reshape", "tt.return",
    "tt.scan", "tt.scan.return", "tt.splat", "tt.split", "tt.store", "tt.trans", "tt.unsplat", "ttg.async_commit_group",
    "ttg.async_copy_global_to_local", "ttg.async_wait", "ttg.barrier", "ttg.convert_layout", "ttg.fp4_to_fp",
    "ttg.global_scratch_alloc", "ttg.inline_asm", "ttg.local_alloc", "ttg.local_atomic_scatter_rmw",
    "ttg.local_dealloc", "ttg.local_gather", "ttg.local_load", "ttg.local_scatter", "ttg.local_store",
    "ttg.memdesc_index", "ttg.memdesc_reinterpret", "ttg.memdesc_reshape", "ttg.memdesc_subslice", "ttg.memdesc_trans",
    "ttg.warp_return", "ttg.warp_specialize", "ttg.warp_yield", "ttng.arrive_barrier",
    "ttng.async_copy_mbarrier_arrive", "ttng.async_shared_store", "ttng.async_tma_copy_global_to_local",
    "ttng.async_tma_copy_local_to_global", "ttng.async_tma_gather", "ttng.async_tma_reduce", "ttng.async_tma_scatter",
    "ttng.async_tma_store_wait", "ttng.barrier_expect", "ttng.clc_get_program_id", "ttng.clc_is_canceled",
    "ttng.clc_load_result", "ttng.clc_try_cancel", "ttng.cluster_barrier", "ttng.fence_async_shared",
    "ttng.init_barrier", "ttng.inval_barrier", "ttng.packed_arith", "ttng.reinterpret_tensor_descriptor",
    "ttng.tc_gen5_commit", "ttng.tc_gen5_mma", "ttng.tc_gen5_mma_scaled", "ttng.tensormap_create",
    "ttng.tensormap_fenceproxy_acquire", "ttng.tmem_alloc", "ttng.tmem_copy", "ttng.tmem_load", "ttng.tmem_store",
    "ttng.tmem_subslice", "ttng.wait_barrier", "ttng.warp_group_dot", "ttng.warp_group_dot_wait", "ub.poison",
};

constexpr bool SortedOps() {
  for (size_t i = 1; i < std::size(kKnownOps); ++i)
    if (!(kKnownOps[i - 1] < kKnownOps[i])) return false;
  return true;
}
static_assert(SortedOps(), "kKnownOps must be sorted");

}  // namespace

namespace {

// kKnownOps as an open-addressing table of indices (NameHash, linear probing), built once: the
// parser asks for every op, and a binary search of string compares would outweigh the rest of
// the op's parse.
struct KnownOpTable {
  static constexpr size_t kSlots = 2048;  // a power of two, over 4x the names
  std::array<int16_t, kSlots> slot;
  // Op names are at least 5 bytes ("cf.br"): the length and the last four bytes pick the slot.
  static size_t Hash(std::string_view name) {
    uint32_t tail = 0;
    if (name.size() >= 4) std::memcpy(&tail, name.data() + name.size() - 4, 4);
    const uint64_t h = (static_cast<uint64_t>(tail) ^ (name.size() << 27)) * 0x9e3779b97f4a7c15ull;
    return static_cast<size_t>(h >> 40);
  }
  KnownOpTable() {
    slot.fill(-1);
    for (size_t k = 0; k < std::size(kKnownOps); ++k) {
      size_t i = Hash(kKnownOps[k]) & (kSlots - 1);
      while (slot[i] >= 0) i = (i + 1) & (kSlots - 1);
      slot[i] = static_cast<int16_t>(k);
    }
  }
  bool Contains(std::string_view name) const {
    for (size_t i = Hash(name) & (kSlots - 1);; i = (i + 1) & (kSlots - 1)) {
      const int k = slot[i];
      if (k < 0) return false;
      const std::string_view known = kKnownOps[k];
      if (known.size() == name.size() && SameBytes(known.data(), name.data(), name.size())) return true;
    }
  }
};

}  // namespace

TtgirOpStanding StandingOfTtgirOp(std::string_view name) {
  static const KnownOpTable* const table = new KnownOpTable();
  if (table->Contains(name)) return TtgirOpStanding::kListed;
  // An op of the arith or math dialect not listed (a newer MLIR's): those dialects are
  // elementwise, which Triton lowers in registers with no scratch rule, so it is taken as such
  // and the report names it.
  if (name.size() > 6 && (std::memcmp(name.data(), "arith.", 6) == 0 || std::memcmp(name.data(), "math.", 5) == 0)) {
    return TtgirOpStanding::kElementwiseDialect;
  }
  return TtgirOpStanding::kUnknown;
}

bool IsKnownTtgirOp(std::string_view name) { return StandingOfTtgirOp(name) != TtgirOpStanding::kUnknown; }

TtgirOpKind KindOfOp(std::string_view name) {
  // Dispatch on the length first: most ops (arith, tt.load, ...) are rejected by one compare.
  switch (name.size()) {
    case 6:
      if (name == "scf.if") return TtgirOpKind::kIf;
      break;
    case 7:
      if (name == "scf.for") return TtgirOpKind::kFor;
      if (name == "tt.scan") return TtgirOpKind::kScan;
      if (name == "tt.call") return TtgirOpKind::kCall;
      break;
    case 9:
      if (name == "tt.reduce") return TtgirOpKind::kReduce;
      if (name == "tt.gather") return TtgirOpKind::kGather;
      if (name == "scf.while") return TtgirOpKind::kWhile;
      break;
    case 12:
      if (name == "tt.histogram") return TtgirOpKind::kHistogram;
      break;
    case 13:
      if (name == "tt.atomic_rmw") return TtgirOpKind::kAtomicRmw;
      if (name == "tt.atomic_cas") return TtgirOpKind::kAtomicCas;
      break;
    case 14:
      if (name == "tt.atomic_load") return TtgirOpKind::kAtomicLoad;
      if (name == "tt.atomic_poll") return TtgirOpKind::kAtomicPoll;
      break;
    case 15:
      if (name == "ttg.local_alloc") return TtgirOpKind::kLocalAlloc;
      break;
    case 16:
      if (name == "scf.index_switch") return TtgirOpKind::kIndexSwitch;
      break;
    case 18:
      if (name == "ttg.convert_layout") return TtgirOpKind::kConvertLayout;
      if (name == "scf.execute_region") return TtgirOpKind::kExecuteRegion;
      break;
    case 19:
      if (name == "ttg.warp_specialize") return TtgirOpKind::kWarpSpecialize;
      break;
    case 21:
      if (name == "ttng.tensormap_create") return TtgirOpKind::kTensormapCreate;
      break;
    case 22:
      if (name == "amdg.buffer_atomic_rmw") return TtgirOpKind::kBufferAtomicRmw;
      if (name == "amdg.buffer_atomic_cas") return TtgirOpKind::kBufferAtomicCas;
      break;
    case 28:
      if (name == "ttg.local_atomic_scatter_rmw") return TtgirOpKind::kLocalAtomicScatterRmw;
      break;
    default:
      break;
  }
  return TtgirOpKind::kOther;
}

namespace {

// TTGIR statements -> TtgirModule, one statement at a time, in the manner of MLIR's
// OperationParser: each statement is an attribute alias, the module or function header, the
// close of a region, a block label, a warp-specialize partition header or an operation. Every
// error is InvalidArgument naming the line, and abandons the whole module.
class TtgirParser {
 public:
  TtgirParser(std::string_view text, std::string_view origin)
      : text_(text.data(), text.size()),
        origin_(origin.data(), origin.size()),
        values_(module_, text.size() / 96 + 16) {
    module_.origin = std::string(origin_);
  }
  TtgirParser(const TtgirParser&) = delete;
  TtgirParser& operator=(const TtgirParser&) = delete;

  absl::StatusOr<TtgirModule> Parse() {
    TtgirStorage& store = *module_.storage;
    ASSIGN_OR_RETURN(TtgirStatements lexed,
                     SplitTtgirStatements(std::string_view(text_.data(), text_.size()),
                                          std::string_view(origin_.data(), origin_.size()), store.pieces));
    std::vector<TtgirStatement>& stmts = lexed.statements;
    AdoptStatementText(stmts);
    Reserve(stmts.size());
    for (const TtgirStatement& st : stmts) RETURN_IF_ERROR(ParseStatement(st));
    RETURN_IF_ERROR(CheckComplete(lexed.num_lines));
    module_.kernel_location = std::move(lexed.kernel_location);
    ResolveValueSpans();
    return std::move(module_);
  }

 private:
  // Where each op's results, defined values and uses sit in module.storage's refs while it still
  // grows; the spans are made once parsing is done.
  struct Placement {
    size_t refs = 0, num_results = 0, num_defined = 0, num_uses = 0;
  };

  // Statements view the caller's text until the lines are read; then the part that holds
  // statements (not the trailing #loc table) is copied once into the module and the views
  // move there.
  void AdoptStatementText(std::vector<TtgirStatement>& stmts) {
    TtgirStorage& store = *module_.storage;
    // Addresses compared as integers: the views point either into the caller's text or
    // into pieces made here.
    const uintptr_t in_begin = reinterpret_cast<uintptr_t>(text_.data());
    const uintptr_t in_end = in_begin + text_.size();
    auto offset_in_text = [&](std::string_view v) -> std::optional<size_t> {
      const uintptr_t at = reinterpret_cast<uintptr_t>(v.data());
      if (at < in_begin || at >= in_end) return std::nullopt;
      return static_cast<size_t>(at - in_begin);
    };
    size_t needed = 0;
    for (const TtgirStatement& st : stmts) {
      if (auto at = offset_in_text(st.text)) needed = std::max(needed, *at + st.text.size());
    }
    store.text.assign(text_.data(), needed);
    for (TtgirStatement& st : stmts) {
      if (auto at = offset_in_text(st.text)) {
        st.text = std::string_view(store.text.data() + *at, st.text.size());
      }
    }
  }

  void Reserve(size_t num_statements) {
    placed_.reserve(num_statements);
    module_.storage->refs.reserve(num_statements * 4 + 16);
    module_.value_names.reserve(text_.size() / 8);
    module_.value_name_end.reserve(num_statements + 16);
    module_.value_group.reserve(num_statements + 16);
    module_.ops.reserve(num_statements);
  }

  absl::Status ParseStatement(const TtgirStatement& st) {
    absl::string_view s(st.text.data(), st.text.size());
    if (s[0] == '#') return ParseAttributeAlias(s, st.line);
    if (absl::StartsWith(s, "module")) return ParseModuleHeader(s, st.line);
    if (absl::StartsWith(s, "tt.func")) return ParseFunctionHeader(s, st.line);
    if (stack_.empty()) {
      return ParseError(origin_, st.line, absl::StrCat("text outside the module: ", s.substr(0, 60)));
    }
    if (s[0] == '}') {
      CloseRegion(s);
      return absl::OkStatus();
    }
    if (s[0] == '^') return ParseBlockLabel(s, st.line);
    const bool is_region_header =
        absl::StartsWith(s, "default {") || (absl::StartsWith(s, "partition") &&
                                             absl::EndsWith(s, "{"));
    if (is_region_header) return ParsePartitionRegion(s, st.line);
    if (!stack_.back().function && stack_.back().op < 0) {
      return ParseError(origin_, st.line,
                        absl::StrCat("unsupported construct at module level: ", s.substr(0, 60)));
    }
    return ParseOperation(s, st.line);
  }

  absl::Status ParseAttributeAlias(absl::string_view s, int line) {
    size_t eq = s.find(" = ");
    if (eq == absl::string_view::npos) {
      return ParseError(origin_, line, absl::StrCat("attribute alias without '=': ", s));
    }
    module_.aliases[std::string(s.substr(0, eq))] = std::string(s.substr(eq + 3));
    return absl::OkStatus();
  }

  absl::Status ParseModuleHeader(absl::string_view s, int line) {
    if (saw_module_) return ParseError(origin_, line, "second 'module'");
    saw_module_ = true;
    module_line_ = line;
    ASSIGN_OR_RETURN(module_.num_warps,
                     ModuleCount(s, "\"ttg.num-warps\"", 0, /*power_of_two=*/false, origin_, line));
    ASSIGN_OR_RETURN(module_.num_ctas,
                     ModuleCount(s, "\"ttg.num-ctas\"", 1, /*power_of_two=*/false, origin_, line));
    ASSIGN_OR_RETURN(module_.threads_per_warp, ModuleCount(s, "\"ttg.threads-per-warp\"", 32,
                                                           /*power_of_two=*/true, origin_, line));
    module_.two_ctas_attribute = s.find("\"ttng.two-ctas\"") != absl::string_view::npos;
    for (absl::string_view key : ModuleAttributeKeys(s)) {
      if (std::find(std::begin(kKnownModuleAttributes), std::end(kKnownModuleAttributes), key) ==
          std::end(kKnownModuleAttributes)) {
        NoteUnlisted(absl::StrCat("module attribute \"", key, "\""), line,
                     "not among the attributes Triton 3.6 and 3.9 write; ignored by the allocation rules");
      }
    }
    size_t t = s.find("ttg.target = \"");
    if (t != absl::string_view::npos) {
      size_t e = s.find('"', t + 14);
      module_.target = std::string(s.substr(t + 14, e - t - 14));
    }
    if (!absl::EndsWith(s, "{")) return ParseError(origin_, line, "module without a body");
    stack_.push_back(Frame{});
    return absl::OkStatus();
  }

  // "tt.func public @kernel(...) ... {" or "tt.func private @callee(...)": a module holds the
  // kernel and the device functions it calls without inlining them (tt.call).
  absl::Status ParseFunctionHeader(absl::string_view s, int line) {
    if (!saw_module_) return ParseError(origin_, line, "tt.func outside a module");
    if (!stack_.empty() && (stack_.back().function || stack_.back().op >= 0)) {
      return ParseError(origin_, line, "tt.func inside another function");
    }
    saw_function_ = true;
    TtgirFunction& f = module_.functions.emplace_back();
    f.line = line;
    f.is_public = absl::StartsWith(s, "tt.func public ");
    const size_t at = s.find('@');
    if (at != absl::string_view::npos) f.name = std::string(SymbolAt(s.substr(at)));
    if (!absl::EndsWith(s, "{")) return ParseError(origin_, line, "tt.func without a body");
    current_function_ = static_cast<int>(module_.functions.size()) - 1;
    // Value names restart in every function: all but the first get a scope of their own.
    std::string scope = current_function_ == 0 ? std::string() : absl::StrCat("@", current_function_, "/");
    stack_.push_back(Frame{-1, true, std::move(scope)});
    return absl::OkStatus();
  }

  // Closes a region; what follows is either the op's trailer or the next region.
  void CloseRegion(absl::string_view s) {
    Frame closed = stack_.back();
    stack_.pop_back();
    absl::string_view rest = s.substr(1);
    while (!rest.empty() && (rest[0] == ')' || rest[0] == ' ' || rest[0] == ',')) {
      rest.remove_prefix(1);
    }
    if (closed.op < 0) return;
    TtgirOp& op = module_.ops[closed.op];
    if (absl::EndsWith(rest, "{")) {
      op.regions.emplace_back();
      op.region_args.emplace_back();
      stack_.push_back(Frame{closed.op, false, closed.scope});
    } else if (!rest.empty()) {
      // The name keeps viewing the op's first text, which stays alive.
      TtgirStorage& store = *module_.storage;
      store.pieces.push_back(absl::StrCat(op.text, " ", rest));
      op.text = store.pieces.back();
    }
    last_op_at_level_ = closed.op;
  }

  absl::Status ParseBlockLabel(absl::string_view s, int line) {
    if (stack_.back().op < 0) {
      // Blocks of the kernel function itself: Triton's cache holds them when the kernel
      // branches at the top level (an early `return` becomes cf.cond_br to a block that
      // returns). The allocation analysis numbers ops through the blocks in their order,
      // which is what the function body's list is.
      if (!stack_.back().function) {
        return ParseError(origin_, line, "block label outside the kernel function");
      }
      if (s.find('(') != absl::string_view::npos) {
        return ParseError(origin_, line,
                          "unsupported construct: arguments of a block of the kernel function "
                          "(the IR is already in CF form past Triton's cache; give the .ttgir "
                          "from Triton's cache)");
      }
      return absl::OkStatus();
    }
    TtgirOp& owner = module_.ops[stack_.back().op];
    for (std::string_view v : ValueTokens(View(s.substr(0, s.find(')'))))) {
      owner.region_args.back().push_back(DefineValue(stack_.back().scope, v));
    }
    return absl::OkStatus();
  }

  // A region of the ttg.warp_specialize just closed: "default {" or
  // "partitionN(%arg0: type, ...) num_warps(N) {", whose arguments are the captures and whose
  // value names restart in a scope of their own.
  absl::Status ParsePartitionRegion(absl::string_view s, int line) {
    if (stack_.size() >= kMaxTtgirNesting) return TooDeep(origin_, line);
    if (last_op_at_level_ < 0 || module_.ops[last_op_at_level_].kind != TtgirOpKind::kWarpSpecialize) {
      return ParseError(origin_, line, "partition region without a ttg.warp_specialize");
    }
    TtgirOp& ws = module_.ops[last_op_at_level_];
    ws.regions.emplace_back();
    ws.region_args.emplace_back();
    std::string scope = stack_.back().scope;
    if (absl::StartsWith(s, "partition")) {
      ASSIGN_OR_RETURN(const std::vector<std::string_view> args, ParsePartitionHeader(s, line, ws));
      scope = absl::StrCat(last_op_at_level_, ".", ws.regions.size() - 1, "/");
      for (std::string_view v : args) ws.region_args.back().push_back(DefineValue(scope, v));
    }
    stack_.push_back(Frame{last_op_at_level_, false, scope});
    return absl::OkStatus();
  }

  // "partitionN(%args) num_warps(N) {": the argument names; N is added to the op's warps.
  absl::StatusOr<std::vector<std::string_view>> ParsePartitionHeader(absl::string_view s, int line, TtgirOp& ws) {
    absl::string_view head = s.substr(0, s.rfind(')'));
    const size_t open = head.find('(');
    if (open == absl::string_view::npos) {
      return ParseError(origin_, line,
                        "partition header without its argument list: expected "
                        "'partitionN(%args) num_warps(N) {'");
    }
    std::vector<std::string_view> args = ValueTokens(View(head.substr(open, head.find(')') - open)));
    size_t nw = s.find("num_warps(");
    if (nw == absl::string_view::npos) {
      return ParseError(origin_, line, "partition without num_warps(N)");
    }
    int64_t warps = 0;
    absl::string_view num = s.substr(nw + 10);
    num = num.substr(0, num.find(')'));
    if (!absl::SimpleAtoi(num, &warps) || warps <= 0 || warps > kMaxTtgirWarps) {
      return ParseError(origin_, line,
                        absl::StrCat("bad num_warps(", num, "): expected 1 to ", kMaxTtgirWarps));
    }
    ws.partition_warps += warps;
    if (ws.partition_warps > kMaxTtgirWarps) {
      return ParseError(origin_, line,
                        absl::StrCat("ttg.warp_specialize partitions with more than ", kMaxTtgirWarps,
                                     " warps in all"));
    }
    return args;
  }

  // An operation: [results =] name operands... [{]
  absl::Status ParseOperation(absl::string_view s, int line) {
    const std::string& scope = stack_.back().scope;
    // Built in place (ops has room for every statement, so the reference stays valid); an
    // error below abandons the whole module.
    const int index = static_cast<int>(module_.ops.size());
    TtgirOp& op = module_.ops.emplace_back();
    op.line = line;
    results_.clear();
    defined_.clear();
    uses_.clear();
    absl::string_view body = s;
    if (s[0] == '%') {
      ASSIGN_OR_RETURN(body, ParseResults(s, scope, line));
    }
    size_t name_end = 0;
    ASSIGN_OR_RETURN(const absl::string_view name, ParseOpName(s, body, line, name_end));
    op.kind = KindOfOp(std::string_view(name.data(), name.size()));
    op.text = body;
    op.name = name;
    ParseOperands(std::string_view(body.data() + name_end, body.size() - name_end), scope);
    PlaceRefs();
    if (op.kind == TtgirOpKind::kCall) {
      const size_t at = body.find('@');
      if (at == absl::string_view::npos) return ParseError(origin_, line, "tt.call without a @callee");
      op.callee = SymbolAt(body.substr(at));
    }
    AttachToRegion(op, index);
    if (op.kind == TtgirOpKind::kWarpSpecialize) {
      // Partition arguments are the captures, in order: the values between the op's first '('
      // and ')'.
      const size_t open = body.find('('), close = body.find(')');
      if (open != absl::string_view::npos && close != absl::string_view::npos && open < close) {
        for (std::string_view v : ValueTokens(View(body.substr(open, close - open)))) {
          op.captures.push_back(UseValue(scope, v));
        }
      }
    }
    const bool opens = absl::EndsWith(s, "{") && !absl::EndsWith(s, "{}");
    if (opens) {
      op.regions.emplace_back();
      op.region_args.emplace_back();
      // scf.for's body sees the induction variable and iter_args as block arguments.
      op.region_args.back() = defined_;
    }
    last_op_at_level_ = index;
    if (opens) {
      if (stack_.size() >= kMaxTtgirNesting) return TooDeep(origin_, line);
      stack_.push_back(Frame{index, false, stack_.back().scope});
    }
    return absl::OkStatus();
  }

  // The result list "%a, %b:2 = ..." defined into results_; the text after " = ".
  absl::StatusOr<absl::string_view> ParseResults(absl::string_view s, const std::string& scope, int line) {
    size_t eq = absl::string_view::npos;
    // The first " = ": result lists are short, a plain scan beats a library search.
    for (size_t k = 1; k + 1 < s.size(); ++k) {
      if (s[k] == '=' && s[k - 1] == ' ' && s[k + 1] == ' ') {
        eq = k - 1;
        break;
      }
    }
    if (eq == absl::string_view::npos) {
      return ParseError(origin_, line, absl::StrCat("expected '=' after results: ", s.substr(0, 60)));
    }
    // std::string_view here: its members inline, absl's are library calls.
    const std::string_view list(s.data(), eq);
    for (size_t from = 0; from <= list.size();) {
      size_t sep = list.find(", ", from);
      if (sep == std::string_view::npos) sep = list.size();
      const std::string_view r = list.substr(from, sep - from);
      from = sep + 2;
      size_t colon = 0;
      while (colon < r.size() && r[colon] != ':') ++colon;
      if (colon == r.size()) {
        results_.push_back(DefineValue(scope, r));
        continue;
      }
      int count = 0;
      if (!absl::SimpleAtoi(absl::string_view(r.data() + colon + 1, r.size() - colon - 1), &count) ||
          count <= 0 || count > 4096) {
        return ParseError(origin_, line,
                          absl::StrCat("bad result group '", absl::string_view(r.data(), r.size()), "'"));
      }
      DefineResultGroup(scope, std::string_view(r.data(), colon), count);
    }
    return absl::string_view(s.data() + eq + 3, s.size() - eq - 3);
  }

  // "%a:3" defines %a#0..%a#2 and %a as the group; defined again, the whole group gets a
  // fresh base ("%a~1", "%a~1#0", ...) so that its members stay one group.
  void DefineResultGroup(const std::string& scope, std::string_view base, int count) {
    member_.assign(base);
    member_.append("#0");
    const int first = values_.Get(scope, member_);
    const bool again = static_cast<size_t>(first) < binding_.size() && binding_[first] >= 0;
    std::string fresh_base(base);
    if (again) absl::StrAppend(&fresh_base, "~", ++renamed_);
    for (int k = 0; k < count; ++k) {
      member_.assign(base);
      member_.push_back('#');
      absl::StrAppend(&member_, k);
      const int id = values_.Get(scope, member_);
      int target = id;
      if (again) {
        member_.assign(fresh_base);
        member_.push_back('#');
        absl::StrAppend(&member_, k);
        target = values_.Get(scope, member_);
        Bound(target) = target;
      }
      Bound(id) = target;
      results_.push_back(target);
    }
    if (again) Bound(values_.Get(scope, base)) = values_.Get(scope, fresh_base);
  }

  // The op's name at the start of `body` (bare, or quoted in the generic form), one of the ops
  // whose shared-memory use is modelled; `name_end` is set past it.
  absl::StatusOr<absl::string_view> ParseOpName(absl::string_view s, absl::string_view body, int line,
                                                size_t& name_end) {
    absl::string_view name;
    if (!body.empty() && body[0] == '"') {
      name_end = body.find('"', 1);
      if (name_end == absl::string_view::npos) return ParseError(origin_, line, "unterminated op name");
      name = body.substr(1, name_end - 1);
      ++name_end;
    } else {
      while (name_end < body.size() && HasClass(body[name_end], kOpNameChar)) ++name_end;
      name = absl::string_view(body.data(), name_end);
    }
    if (name.empty() || std::string_view(name.data(), name.size()).find('.') == std::string_view::npos) {
      return ParseError(origin_, line, absl::StrCat("expected an operation, got '", s.substr(0, 60), "'"));
    }
    switch (StandingOfTtgirOp(std::string_view(name.data(), name.size()))) {
      case TtgirOpStanding::kListed:
        break;
      case TtgirOpStanding::kElementwiseDialect:
        NoteUnlisted(absl::StrCat("op ", name), line,
                     "not among the arith/math ops of Triton 3.6 and 3.9; taken as elementwise (no shared memory)");
        break;
      case TtgirOpStanding::kUnknown:
        return ParseError(origin_, line,
                          absl::StrCat("unknown op '", name,
                                       "': not among the ops of Triton 3.6 and 3.9 whose shared-memory use is "
                                       "modelled, so its scratch cannot be judged"));
    }
    return name;
  }

  // The %values of the op's text after its name: block arguments it defines (`%iv = %lb to`,
  // `iter_args(%x = %init`) into defined_, the rest into uses_.
  void ParseOperands(std::string_view rest, const std::string& scope) {
    ForEachPercent(rest, [&](size_t p) {
      size_t q = p + 1;
      while (q < rest.size() && HasClass(rest[q], kValueChar)) ++q;
      // "%x#2": the third result of the group "%x:3", a value of its own.
      if (q + 1 < rest.size() && rest[q] == '#' && rest[q + 1] >= '0' && rest[q + 1] <= '9') {
        q += 2;
        while (q < rest.size() && rest[q] >= '0' && rest[q] <= '9') ++q;
      }
      const std::string_view v(rest.data() + p, q - p);
      if (q + 3 <= rest.size() && rest[q] == ' ' && rest[q + 1] == '=' && rest[q + 2] == ' ') {
        defined_.push_back(DefineValue(scope, v));
      } else {
        uses_.push_back(UseValue(scope, v));
      }
      return q;
    });
  }

  // The op's results, defined values and uses, end to end in the module's refs.
  void PlaceRefs() {
    std::vector<int>& refs = module_.storage->refs;
    Placement pl;
    pl.refs = refs.size();
    pl.num_results = results_.size();
    pl.num_defined = defined_.size();
    pl.num_uses = uses_.size();
    refs.insert(refs.end(), results_.begin(), results_.end());
    refs.insert(refs.end(), defined_.begin(), defined_.end());
    refs.insert(refs.end(), uses_.begin(), uses_.end());
    placed_.push_back(pl);
  }

  // The op joins the innermost open region, or the function body.
  void AttachToRegion(TtgirOp& op, int index) {
    op.function = current_function_;
    if (stack_.back().op >= 0) {
      op.parent = stack_.back().op;
      op.region = static_cast<int>(module_.ops[op.parent].regions.size()) - 1;
      module_.ops[op.parent].regions.back().push_back(index);
    } else {
      module_.functions[current_function_].body.push_back(index);
    }
  }

  absl::Status CheckComplete(int num_lines) {
    if (!stack_.empty()) {
      return ParseError(origin_, num_lines, absl::StrCat(stack_.size(), " region(s) never closed"));
    }
    if (!saw_function_) return ParseError(origin_, 1, "no tt.func in the module");
    if (module_.num_warps <= 0) return ParseError(origin_, module_line_, "module has no \"ttg.num-warps\"");
    // The kernel is the public function (callees are private); a module of one function is
    // that function whatever its visibility.
    module_.kernel = 0;
    for (size_t f = 0; f < module_.functions.size(); ++f) {
      if (module_.functions[f].is_public) {
        module_.kernel = static_cast<int>(f);
        break;
      }
    }
    module_.function = module_.functions[module_.kernel].name;
    module_.body = module_.functions[module_.kernel].body;
    for (const TtgirOp& op : module_.ops) {
      if (op.kind != TtgirOpKind::kCall) continue;
      const auto known = std::find_if(module_.functions.begin(), module_.functions.end(),
                                      [&](const TtgirFunction& f) { return f.name == op.callee; });
      if (known == module_.functions.end()) {
        return ParseError(origin_, op.line,
                          absl::StrCat("tt.call of @", op.callee, ", which the module does not define"));
      }
    }
    return absl::OkStatus();
  }

  // The ops' spans over refs, now that refs no longer grows.
  void ResolveValueSpans() {
    const std::vector<int>& refs = module_.storage->refs;
    for (size_t i = 0; i < module_.ops.size(); ++i) {
      TtgirOp& o = module_.ops[i];
      const Placement& pl = placed_[i];
      const int* at = refs.data() + pl.refs;
      o.results = absl::MakeConstSpan(at, pl.num_results);
      o.defined = absl::MakeConstSpan(at + pl.num_results, pl.num_defined);
      o.uses = absl::MakeConstSpan(at + pl.num_results + pl.num_defined, pl.num_uses);
    }
  }

  // MLIR's printer reuses value names in sibling regions (an i32 %32 in a loop body, a buffer
  // %32 in a later scf.if): a name means its latest definition. binding_ maps a name's id to
  // the value it currently denotes; a name defined again gets a fresh id ("%32~1") and the
  // name is bound to it. Uses before any definition (later blocks) keep the name's own id.
  int& Bound(int id) {
    if (static_cast<size_t>(id) >= binding_.size()) {
      binding_.resize(std::max<size_t>(id + 1, binding_.size() * 2), -1);
    }
    return binding_[id];
  }

  int UseValue(std::string_view scope, std::string_view v) {
    const int id = values_.Get(scope, v);
    const int b = static_cast<size_t>(id) < binding_.size() ? binding_[id] : -1;
    return b < 0 ? id : b;
  }

  int DefineValue(std::string_view scope, std::string_view v) {
    const int id = values_.Get(scope, v);
    if (Bound(id) < 0) {
      Bound(id) = id;
      return id;
    }
    fresh_.assign(v.data(), v.size());
    absl::StrAppend(&fresh_, "~", ++renamed_);
    const int f = values_.Get(scope, fresh_);
    Bound(id) = f;
    Bound(f) = f;
    return f;
  }

  const absl::string_view text_;
  const absl::string_view origin_;
  TtgirModule module_;  // before values_, which interns into it
  ValueInterner values_;
  std::vector<Frame> stack_;
  std::vector<int> binding_;
  int renamed_ = 0;
  std::string fresh_, member_;  // names built for DefineValue and DefineResultGroup
  std::vector<Placement> placed_;
  std::vector<int> results_, defined_, uses_;  // of the op being parsed
  bool saw_module_ = false, saw_function_ = false;
  int module_line_ = 1;
  int last_op_at_level_ = -1;
  int current_function_ = 0;

  // Records, once per construct, something taken on an assumption (TtgirModule::unlisted).
  void NoteUnlisted(std::string what, int line, absl::string_view why) {
    for (const std::string& n : module_.unlisted)
      if (absl::StartsWith(n, absl::StrCat(what, " ("))) return;
    module_.unlisted.push_back(absl::StrCat(what, " (line ", line, "): ", why));
  }
};

}  // namespace

absl::StatusOr<TtgirModule> ParseTtgir(std::string_view text, std::string_view origin) {
  return TtgirParser(text, origin).Parse();
}

absl::StatusOr<std::string> ReadTtgirFile(std::string_view path_in) {
  const std::string path(path_in);
  // Opening a FIFO blocks until a writer comes and a device never ends: regular files only, and
  // no larger than the driver's input limit (sim/proto_io), checked before anything is opened.
  struct stat before;
  if (::stat(path.c_str(), &before) != 0) return absl::NotFoundError(absl::StrCat(path, ": cannot open file"));
  if (S_ISDIR(before.st_mode)) return absl::InvalidArgumentError(absl::StrCat(path, ": is a directory, not a file"));
  if (!S_ISREG(before.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": is not a regular file (a device, FIFO or socket)"));
  }
  if (MaxInputBytes() >= 0 && before.st_size > MaxInputBytes()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", before.st_size, " bytes is larger than the input limit of ",
                                                   MaxInputBytes(), " bytes (raise it with --max-input-mib)"));
  }
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (file == nullptr) return absl::NotFoundError(absl::StrCat(path, ": cannot open file"));
  std::string text;
  // A regular file's size saves the string's regrowth, up to the line limit (a 1 GiB file of one
  // line must not reserve its size); a device or a pipe reports none and grows as it is read.
  struct stat st;
  if (fstat(fileno(file.get()), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    text.reserve(std::min(static_cast<size_t>(st.st_size), kMaxTtgirLineBytes));
  }
  std::vector<char> block(size_t{64} << 10);
  size_t line_bytes = 0;  // of the line being read, so far
  int line = 1;
  auto too_long = [&]() {
    return ParseError(path, line,
                      absl::StrCat("line longer than the maximum of ", kMaxTtgirLineBytes,
                                   " bytes (16 MiB); stopped reading there"));
  };
  for (size_t got; (got = std::fread(block.data(), 1, block.size(), file.get())) > 0;) {
    for (const char *p = block.data(), *end = p + got;;) {
      const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
      line_bytes += static_cast<size_t>((nl == nullptr ? end : nl) - p);
      if (line_bytes > kMaxTtgirLineBytes) return too_long();
      if (nl == nullptr) break;
      p = nl + 1;
      line_bytes = 0;
      if (line < std::numeric_limits<int>::max()) ++line;
    }
    text.append(block.data(), got);
  }
  if (std::ferror(file.get())) return absl::DataLossError(absl::StrCat(path, ": read error"));
  return text;
}

}  // namespace scratchsim::triton
