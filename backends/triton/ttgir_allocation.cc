// Triton's AllocationAnalysis (lib/Analysis/Allocation.cpp, Triton 3.6) over a TtgirModule. The
// phases keep upstream's names and order: getValuesAndSizes (explicit buffers, aliases, scratch),
// resolveLiveness (operation ids on the scf-to-cf form, buffer intervals), computeOffsets
// (triton_allocator.h). docs/triton.md lists the rules with the measured exceptions.
#include "backends/triton/ttgir_allocation.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <memory_resource>
#include <optional>
#include <tuple>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "backends/triton/amd_lds_usage.h"
#include "backends/triton/ttgir_cga.h"
#include "backends/triton/ttgir_layout.h"
#include "backends/triton/ttgir_lexer.h"
#include "sim/checked_math.h"
#include "sim/status_macros.h"

namespace scratchsim::triton {
namespace {

absl::Status PlanError(absl::string_view origin, int line, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(origin, ":", line, ": ", what));
}

// All regions of a ttg.warp_specialize (default and partitions) run
// concurrently, so their buffers never share addresses (Allocation.cpp's AsyncRegions check).
constexpr int kFirstAsyncRegion = 0;

// The analysis' tables live in one arena per plan (a bump allocator freed at once): they are
// many small vectors whose malloc/free cost more than filling them.
template <typename T>
using ArenaVector = std::pmr::vector<T>;

// The last " a b " (or " a " when b is 0) in `t`: " -> " and " : " by a backward scan
// (what rfind finds, without a library call per op).
size_t RFindSpaced(std::string_view t, char a, char b) {
  const size_t len = b == 0 ? 3 : 4;
  // Candidates from the end through their distinctive character ('>' or ':'); the first
  // match is the last occurrence.
  const char key = b == 0 ? a : b;
  const size_t key_at = b == 0 ? 1 : 2;
  for (size_t end = t.size(); end > 0;) {
    const void* hit = memrchr(t.data(), key, end);
    if (hit == nullptr) break;
    const size_t k = static_cast<size_t>(static_cast<const char*>(hit) - t.data());
    end = k;
    if (k < key_at) break;
    const size_t i = k - key_at;
    if (i + len <= t.size() && t[i] == ' ' && t[i + 1] == a && t[i + len - 1] == ' ') return i;
  }
  return std::string_view::npos;
}

// Inserts into a small sorted set; true if it was new.
bool InsertSorted(ArenaVector<int>& set, int x) {
  auto it = std::lower_bound(set.begin(), set.end(), x);
  if (it != set.end() && *it == x) return false;
  set.insert(it, x);
  return true;
}

// "!ttg.memdesc<2x128x64xf16, #shared, #smem, mutable>" after `->` (the op's result type).
// Views into the op's text.
struct MemDesc {
  std::vector<int64_t> shape;
  std::string_view element;
  std::string_view encoding;
  std::string_view space;
};

std::optional<MemDesc> ResultMemDesc(absl::string_view text_in) {
  const std::string_view text(text_in.data(), text_in.size());
  size_t arrow = text.rfind("-> !ttg.memdesc<");
  size_t p = arrow == std::string_view::npos ? text.rfind("!ttg.memdesc<") : arrow + 3;
  if (p == std::string_view::npos) return std::nullopt;
  p += 13;
  size_t e = text.find('>', p);
  if (e == std::string_view::npos) return std::nullopt;
  const std::string_view inner = text.substr(p, e - p);
  // The ", "-separated parts: dims and element, encoding, memory space, ...
  std::string_view parts[3];
  size_t num_parts = 0;
  for (size_t from = 0; num_parts < 3;) {
    const size_t sep = inner.find(", ", from);
    parts[num_parts++] = inner.substr(from, sep == std::string_view::npos ? sep : sep - from);
    if (sep == std::string_view::npos) break;
    from = sep + 2;
  }
  MemDesc d;
  // "2x128x64xf16": every 'x'-separated piece but the last is a dimension.
  std::string_view dims = parts[0];
  for (size_t x = dims.find('x'); x != std::string_view::npos; x = dims.find('x')) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(absl::string_view(dims.data(), x), &v)) return std::nullopt;
    d.shape.push_back(v);
    dims.remove_prefix(x + 1);
  }
  d.element = dims;
  if (num_parts > 1) d.encoding = parts[1];
  if (num_parts > 2) d.space = parts[2];
  return d;
}

std::string Describe(const MemDesc& d) {
  std::string s;
  for (int64_t v : d.shape) absl::StrAppend(&s, v, "x");
  s.append(d.element);
  return s;
}

// One plan's analysis. Tables are per op and per value id of the module.
class AllocationAnalysis {
 public:
  // `function`: which tt.func of the module; `callee_shared`: the allocation size of every function
  // it calls (planned first: ModuleAllocation walks the call graph callees first).
  AllocationAnalysis(const TtgirModule& module, int function, const std::map<std::string, int64_t>& callee_shared,
                     const PlanOptions& options, std::pmr::memory_resource* arena)
      : m_(module), fn_(function), callee_shared_(callee_shared), options_(options), pos_(arena), end_pos_(arena),
        cf_(arena), loop_(arena),
        ws_(arena), def_op_(arena), def_region_(arena), groups_(arena), users_(arena),
        alias_(arena), members_(arena), from_(arena), scratch_op_(arena) {}

  // Upstream AllocationAnalysis::run: getValuesAndSizes, resolveLiveness, computeOffsets.
  absl::StatusOr<SharedMemoryPlan> Run();

 private:
  // Op kinds and value definitions the phases look up.
  void IndexOps();

  // getValuesAndSizes: explicit buffers (getExplicitValueSize) and the values aliasing them
  // (getValueAlias, upstream's SharedMemoryAliasAnalysis) in walk order, then the scratch
  // buffers (getScratchValueSize) in walk order; Triton's buffer order follows.
  absl::Status GetValuesAndSizes();
  absl::Status GetExplicitValueSize(int op);
  // Returns whether a value gained an allocation.
  bool GetValueAlias(int op);
  // `to` aliases whatever `from` aliases; whether it gained an allocation.
  bool Flow(int from, int to);
  // Values a region yields (scf.yield, scf.condition) alias the results and block arguments
  // they flow into: a buffer allocated in a loop body and carried to the next iteration or out of
  // the loop is live wherever those are (upstream's dataflow alias analysis joins them). Returns
  // whether a value gained an allocation.
  bool PropagateYields();
  // Which ops use each value that can matter: aliases of buffers (their liveness) and atomics'
  // results (an atomic whose result is used needs scratch).
  void CollectUsers();
  // The function's own scratch: one byte per partition warp for warp-specialized kernels.
  void GetFunctionScratchSize();
  absl::Status GetScratchValueSize(int op);
  absl::StatusOr<ScratchNeed> ClusterScratch(const TtgirOp& o, bool used);

  // resolveLiveness: operation ids, then the buffers' intervals.
  void ResolveLiveness();
  // Upstream numbers operations in post-order after scf-to-cf: a structured op's id comes
  // before its regions' (it became the branch into them), any other op's after its regions'.
  // An explicit stack: nesting depth is bounded by the parser, not by this thread's stack.
  void NumberOperations();
  // resolveExplicitBufferLiveness and resolveAliasBufferLiveness: a buffer lives over the union
  // of the intervals of every value aliasing it.
  void ResolveAliasBufferLiveness();
  // resolveScratchBufferLiveness: scratch lives for its op only.
  void ResolveScratchBufferLiveness();
  // [definition, last use + 1) of a value, extended through the loops it is used in.
  std::pair<uint64_t, uint64_t> Liveness(int value) const;

  // computeOffsets: Triton's placement (AllocateLikeTriton).
  absl::Status ComputeOffsets();
  // AMD's OptimizeLDSUsage pass where the plan's release runs it after the TTGIR (3.6).
  absl::Status OptimizeLdsUsage();

  // The region (op, index) a value lives in; (-1, 0) for the function body.
  std::pair<int, int> ScopeOf(int op) const {
    return {m_.ops[op].parent, m_.ops[op].parent < 0 ? 0 : m_.ops[op].region};
  }
  // The warp_specialize op and partition region an op runs in ({-1, -1} outside partitions).
  std::pair<int, int> AsyncRegion(int op) const;

  // Whether op `i` belongs to the function being planned.
  bool Mine(int i) const { return m_.ops[i].function == fn_; }

  const TtgirModule& m_;
  const int fn_;
  const std::map<std::string, int64_t>& callee_shared_;
  const PlanOptions& options_;
  SharedMemoryPlan plan_;
  std::optional<LayoutContext> layouts_;
  // Per op.
  ArenaVector<int64_t> pos_;          // operation id, as Triton numbers them after scf-to-cf
  ArenaVector<int64_t> end_pos_;      // last id inside a structured op's regions
  ArenaVector<uint8_t> cf_, loop_, ws_;  // structured control flow, loop, warp_specialize
  // Per value id.
  ArenaVector<int> def_op_;                      // defining op, -1 if none
  ArenaVector<std::pair<int, int>> def_region_;  // (op, region) of a block argument, op -1 if none
  ArenaVector<ArenaVector<int>> groups_;         // "%x" -> "%x#0", ...
  ArenaVector<ArenaVector<int>> users_;          // only values that matter
  ArenaVector<ArenaVector<int>> alias_;          // value -> explicit buffers it aliases (sorted)
  // Per explicit buffer: the values aliasing it.
  ArenaVector<ArenaVector<int>> members_;
  ArenaVector<int> from_;                        // GetValueAlias's scratch list
  // Per buffer: the op owning its scratch, -1 for explicit and function scratch.
  ArenaVector<int> scratch_op_;
  // A conversion's scratch depends only on the tensor types of its text (and the module):
  // kernels repeat the same conversion, so each distinct one is worked out once.
  std::vector<std::pair<std::string_view, ScratchNeed>> cvt_memo_;
};

void AllocationAnalysis::IndexOps() {
  const size_t num_ops = m_.ops.size(), num_values = m_.num_values();
  pos_.assign(num_ops, 0);
  end_pos_.assign(num_ops, 0);
  cf_.assign(num_ops, 0);
  loop_.assign(num_ops, 0);
  ws_.assign(num_ops, 0);
  for (size_t i = 0; i < num_ops; ++i) {
    const TtgirOpKind k = m_.ops[i].kind;
    loop_[i] = k == TtgirOpKind::kFor || k == TtgirOpKind::kWhile;
    cf_[i] = loop_[i] || k == TtgirOpKind::kIf || k == TtgirOpKind::kExecuteRegion ||
             k == TtgirOpKind::kIndexSwitch;
    ws_[i] = k == TtgirOpKind::kWarpSpecialize;
  }
  def_op_.assign(num_values, -1);
  def_region_.assign(num_values, {-1, 0});
  groups_.resize(num_values);
  users_.resize(num_values);
  alias_.resize(num_values);
  for (size_t i = 0; i < num_ops; ++i) {
    const TtgirOp& o = m_.ops[i];
    for (int r : o.results) {
      def_op_[r] = static_cast<int>(i);
      if (m_.value_group[r] >= 0) groups_[m_.value_group[r]].push_back(r);
    }
    for (size_t r = 0; r < o.region_args.size(); ++r)
      for (int v : o.region_args[r]) def_region_[v] = {static_cast<int>(i), static_cast<int>(r)};
  }
}

std::pair<int, int> AllocationAnalysis::AsyncRegion(int op) const {
  for (int a = op; a >= 0 && m_.ops[a].parent >= 0; a = m_.ops[a].parent) {
    const int p = m_.ops[a].parent;
    if (ws_[p] && m_.ops[a].region >= kFirstAsyncRegion) {
      return {p, m_.ops[a].region};
    }
  }
  return {-1, -1};
}

absl::Status AllocationAnalysis::GetExplicitValueSize(int i) {
  const TtgirOp& o = m_.ops[i];
  std::optional<MemDesc> d = ResultMemDesc(o.text);
  if (!d) return PlanError(m_.origin, o.line, "ttg.local_alloc without a !ttg.memdesc result type");
  // MLIR's printer names every result; hand-written IR may leave it out, and then no use of the
  // buffer can be followed.
  if (o.results.size() != 1) return PlanError(m_.origin, o.line, "ttg.local_alloc without one named result");
  // Shared memory however the space is written (aliased or inline); tensor memory and the other
  // spaces hold none; a space that is neither is refused, never dropped.
  switch (ClassifyMemorySpace(d->space, m_.aliases)) {
    case MemorySpace::kShared: break;
    case MemorySpace::kOther: return absl::OkStatus();
    case MemorySpace::kUnknown:
      return PlanError(m_.origin, o.line, absl::StrCat("unknown memory space ", std::string(d->space)));
  }
  auto enc = m_.aliases.find(std::string(d->encoding));
  if (enc == m_.aliases.end()) {
    return PlanError(m_.origin, o.line, absl::StrCat("unknown shared encoding ", std::string(d->encoding)));
  }
  int64_t bits = ElementBits(absl::string_view(d->element.data(), d->element.size()));
  if (bits <= 0) {
    return PlanError(m_.origin, o.line, absl::StrCat("unsupported element type ", std::string(d->element)));
  }
  if (m_.num_ctas > 1) {
    // Triton allocates per CTA (getAllocationShapePerCTA): the shape the CGA layout leaves each.
    auto split = CtaSplitNum(enc->second, m_.aliases, static_cast<int>(d->shape.size()));
    if (!split.ok()) return PlanError(m_.origin, o.line, split.status().message());
    d->shape = ShapePerCta(d->shape, *split);
  }
  int64_t numel = 1;
  for (int64_t v : d->shape) {
    auto p = CheckedMul(numel, v);
    if (!p || v <= 0) return PlanError(m_.origin, o.line, "memdesc shape overflows or is empty");
    numel = *p;
  }
  absl::StatusOr<SharedEncoding> se = ParseSharedEncoding(enc->second);
  if (!se.ok()) {
    return absl::Status(se.status().code(),
                        absl::StrCat(m_.origin, ":", o.line, ": ", se.status().message()));
  }
  std::optional<int64_t> bytes;
  if (se->elements_per_memdesc_element != 1) {
    const std::optional<int64_t> scaled = CheckedMul(numel, se->elements_per_memdesc_element);
    if (!scaled) return PlanError(m_.origin, o.line, "memdesc shape overflows");
    numel = *scaled;
  }
  if (std::optional<int64_t> padded = se->padded ? se->PaddedSize(numel) : numel) {
    bytes = CheckedMul(*padded, bits);
  }
  if (!bytes || *bytes / 8 > kMaxTritonBufferBytes) {
    return PlanError(m_.origin, o.line,
                     absl::StrCat("ttg.local_alloc of ", Describe(*d), ": larger than 2^40 bytes"));
  }
  SharedBuffer b;
  b.name = std::string(m_.ValueName(o.results[0]));
  b.line = o.line;
  b.op_index = i;
  b.kind = SharedBufferKind::kExplicit;
  b.op = std::string(o.name);
  b.shape = Describe(*d);
  b.buffer.size = *bytes / 8;
  b.buffer.alignment = se->alignment;
  std::tie(b.buffer.async_group, b.buffer.async_region) = AsyncRegion(i);
  if (auto al = IntAttr(std::string_view(o.text.data(), o.text.size()), "alignment")) {
    if (*al <= 0 || (*al & (*al - 1)) != 0 || *al > kMaxTritonBufferBytes) {
      return PlanError(m_.origin, o.line, absl::StrCat("ttg.local_alloc alignment ", *al, " is not a power of two"));
    }
    b.buffer.alignment = *al;
  }
  InsertSorted(alias_[o.results[0]], static_cast<int>(plan_.buffers.size()));
  members_.push_back({o.results[0]});
  scratch_op_.push_back(-1);
  plan_.buffers.push_back(std::move(b));
  return absl::OkStatus();
}

bool AllocationAnalysis::Flow(int from, int to) {
  bool changed = false;
  for (size_t k = 0; k < alias_[from].size(); ++k) {
    const int b = alias_[from][k];
    if (InsertSorted(alias_[to], b)) {
      members_[b].push_back(to);
      changed = true;
    }
  }
  return changed;
}

bool AllocationAnalysis::GetValueAlias(int i) {
  const TtgirOp& o = m_.ops[i];
  if (o.kind == TtgirOpKind::kFor || o.kind == TtgirOpKind::kWhile) {
    // A loop's initial values flow, position by position, into its iteration arguments and its
    // results (scf.for: `%iv = %lb to %ub step %s iter_args(%x = %init, ...)`, the inits after
    // the three bounds; scf.while: `(%x = %init, ...)`); yields add theirs (PropagateYields).
    const size_t n = o.kind == TtgirOpKind::kFor ? (o.defined.empty() ? 0 : o.defined.size() - 1) : o.defined.size();
    const size_t first = o.kind == TtgirOpKind::kFor ? 3 : 0;
    if (o.uses.size() >= first + n) {
      bool changed = false;
      for (size_t k = 0; k < n; ++k) {
        const int init = o.uses[first + k];
        if (alias_[init].empty()) continue;
        changed |= Flow(init, o.defined[o.defined.size() - n + k]);
        if (k < o.results.size()) changed |= Flow(init, o.results[k]);
      }
      return changed;
    }
  }
  if (!cf_[i] && !ws_[i] && o.results.size() > 1) {
    // An op of several results passing operands through (ttng.warp_group_dot_wait: result k is
    // operand k): each result aliases its own operand only.
    bool changed = false;
    for (size_t k = 0; k < o.results.size() && k < o.uses.size(); ++k) {
      if (!alias_[o.uses[k]].empty()) changed |= Flow(o.uses[k], o.results[k]);
    }
    return changed;
  }
  // Views and loop-carried memdescs alias the allocations their operands alias.
  from_.clear();
  for (int u : o.uses)
    for (int b : alias_[u]) from_.push_back(b);
  if (from_.empty()) return false;
  bool changed = false;
  std::sort(from_.begin(), from_.end());
  from_.erase(std::unique(from_.begin(), from_.end()), from_.end());
  auto add = [&](int v) {
    for (int b : from_) {
      if (InsertSorted(alias_[v], b)) {
        members_[b].push_back(v);
        changed = true;
      }
    }
  };
  // Only results of memdesc type are views (a local_load's operand is a memdesc, its
  // result a tensor).
  {
    const std::string_view t(o.text.data(), o.text.size());
    size_t start = RFindSpaced(t, '-', '>');
    if (start == std::string_view::npos) start = RFindSpaced(t, ':', 0);
    if (start != std::string_view::npos && t.find("!ttg.memdesc", start) != std::string_view::npos) {
      for (int r : o.results) add(r);
    }
  }
  if (ws_[i]) {
    // Partition arguments are the captures, in order.
    for (size_t r = 0; r < o.region_args.size(); ++r) {
      for (size_t k = 0; k < o.region_args[r].size() && k < o.captures.size(); ++k) {
        if (alias_[o.captures[k]].empty()) continue;
        const std::vector<int> bufs(alias_[o.captures[k]].begin(), alias_[o.captures[k]].end());
        const int arg = o.region_args[r][k];
        for (int b : bufs)
          if (InsertSorted(alias_[arg], b)) {
            members_[b].push_back(arg);
            changed = true;
          }
      }
    }
  }
  if (cf_[i]) {
    for (int d : o.defined) add(d);
  }
  return changed;
}

bool AllocationAnalysis::PropagateYields() {
  bool changed = false;
  auto flow = [&](int from, int to) {
    if (from >= 0 && to >= 0) changed |= Flow(from, to);
  };
  const int num_ops = static_cast<int>(m_.ops.size());
  for (int i = 0; i < num_ops; ++i) {
    if (!(cf_[i] || ws_[i]) || !Mine(i)) continue;
    const TtgirOp& o = m_.ops[i];
    for (size_t r = 0; r < o.regions.size(); ++r) {
      if (o.regions[r].empty()) continue;
      const TtgirOp& term = m_.ops[o.regions[r].back()];
      absl::Span<const int> vals = term.uses;
      if (ws_[i]) {
        // A warp_specialize's results are what its default region yields (ttg.warp_yield;
        // the op is a region branch to itself in Triton's alias analysis), so a memdesc the
        // default region yields lives on through the results' uses.
        if (r != 0 || term.name != "ttg.warp_yield") continue;
      } else if (term.name == "scf.condition") {
        if (vals.empty()) continue;
        vals.remove_prefix(1);  // the condition itself
      } else if (term.name != "scf.yield") {
        continue;
      }
      for (size_t k = 0; k < vals.size(); ++k) {
        if (alias_[vals[k]].empty()) continue;
        if (k < o.results.size()) flow(vals[k], o.results[k]);
        if (o.kind == TtgirOpKind::kFor) {
          // iter_args follow the induction variable among the body's arguments.
          if (k + 1 < o.defined.size()) flow(vals[k], o.defined[k + 1]);
        } else if (o.kind == TtgirOpKind::kWhile) {
          // scf.condition feeds the after region, the after region's yield the before region.
          const size_t target = r == 0 ? 1 : 0;
          if (target < o.region_args.size() && k < o.region_args[target].size()) {
            flow(vals[k], o.region_args[target][k]);
          }
        }
      }
    }
  }
  return changed;
}

void AllocationAnalysis::CollectUsers() {
  const size_t num_ops = m_.ops.size(), num_values = m_.num_values();
  std::vector<uint8_t> interesting(num_values, 0);
  for (size_t v = 0; v < num_values; ++v) interesting[v] = !alias_[v].empty();
  for (const TtgirOp& o : m_.ops)
    if (ScratchDependsOnResultUse(o.kind))
      for (int r : o.results) interesting[r] = 1;
  // "%x" of a group "%x:2" uses every member.
  for (size_t i = 0; i < num_ops; ++i) {
    auto add = [&](int n) {
      if (!interesting[n]) return;
      ArenaVector<int>& u = users_[n];
      if (u.empty() || u.back() != static_cast<int>(i)) u.push_back(static_cast<int>(i));
    };
    for (int u : m_.ops[i].uses) {
      add(u);
      if (!groups_[u].empty() && def_op_[u] < 0)
        for (int n : groups_[u]) add(n);
    }
  }
}

void AllocationAnalysis::GetFunctionScratchSize() {
  int64_t ws_warps = 0;
  for (const TtgirOp& o : m_.ops)
    if (o.kind == TtgirOpKind::kWarpSpecialize && o.function == fn_) ws_warps = std::max(ws_warps, o.partition_warps);
  if (ws_warps > 0) {
    // allocate-warp-groups pads the partitions so the whole kernel is made of full warp
    // groups (4 warps), adding a partition when needed; measured on the sm_100 fixtures
    // (ttg.total-num-warps 8 for 4 + 3 partition warps).
    const int64_t total = (m_.num_warps + ws_warps + 3) / 4 * 4;
    ws_warps = total - m_.num_warps;
  }
  plan_.total_warps = m_.num_warps + static_cast<int>(ws_warps);
  if (ws_warps <= 0) return;
  SharedBuffer b;
  b.name = "warp-specialization state (one byte per partition warp)";
  b.kind = SharedBufferKind::kFunctionScratch;
  b.op = "tt.func";
  b.buffer.size = ws_warps;
  b.buffer.alignment = 4;
  b.buffer.start = 0;
  b.buffer.end = std::numeric_limits<uint64_t>::max();
  scratch_op_.push_back(-1);
  plan_.buffers.push_back(std::move(b));
}

// A cluster launch's scratch. Triton 3.9 sizes it by the shape per CTA (the swizzled layout
// conversion divides by the source's CTASplitNum, getNumScratchElemsSwizzledCvt in
// lib/Analysis/Allocation.cpp; ReduceOpHelper and ScanLoweringHelper take getShapePerCTA).
// Triton 3.6 lacks that division: its conversion plan spans the CGA's block dimension too, so a
// conversion takes the per-CTA figure times the CTAs its source is split over; its reductions
// take the whole tensor (both measured: tests/data/triton/cluster). Ops crossing CTAs are sized
// as the release does within a CTA and recorded with their whole-cluster figure as the bound
// (SharedMemoryPlan::cross_cta_ops). The whole-cluster figure is sized only where it is the
// figure or that bound: a #ttg.linear layout's `block` bases (the CTAs') are outside what the
// conversion model plans, so an op on one that stays within its CTA has only its per-CTA figure.
absl::StatusOr<ScratchNeed> AllocationAnalysis::ClusterScratch(const TtgirOp& o, bool used) {
  absl::StatusOr<PerCtaText> per_cta = PerCtaOpText(o.text, o.name, m_.aliases);
  if (!per_cta.ok()) return PlanError(m_.origin, o.line, per_cta.status().message());
  ScratchNeed need;
  const bool v36 = layouts_->release == TritonRelease::k3_6;
  const bool per_cta_rules = per_cta->changed && (!v36 || o.kind == TtgirOpKind::kConvertLayout);
  if (per_cta_rules) {
    TtgirOp local = o;
    local.text = per_cta->text;
    ASSIGN_OR_RETURN(need, ScratchFor(local, *layouts_, used, m_.origin));
    if (v36) need.bytes *= per_cta->source_split;
  }
  // Triton 3.9 reduces across the cluster through the per-CTA scratch itself: every CTA keeps its
  // partials at the same offset and the others read them over distributed shared memory, so the
  // plan's figure is the requirement (tests/data/triton/xcta: every cross-CTA reduction).
  const bool exchanged_in_place = !v36 && o.kind == TtgirOpKind::kReduce;
  const bool bound_needed = per_cta->crosses_ctas && !exchanged_in_place;
  if (!per_cta_rules || bound_needed) {
    ASSIGN_OR_RETURN(const ScratchNeed whole, ScratchFor(o, *layouts_, used, m_.origin));
    if (!per_cta_rules) need = whole;
    if (bound_needed && whole.bytes > 0) {
      plan_.cross_cta_ops.push_back(absl::StrCat(o.name, " at line ", o.line));
      plan_.cross_cta_bytes += whole.bytes;
    }
  }
  return need;
}

absl::Status AllocationAnalysis::GetScratchValueSize(int i) {
  const TtgirOp& o = m_.ops[i];
  auto used = [&]() {
    for (int r : o.results)
      if (!users_[r].empty()) return true;
    return false;
  };
  ScratchNeed need;
  if (o.kind == TtgirOpKind::kCall) {
    // A call's scratch is the callee's whole allocation, placed like scratch at the call
    // (ModuleAllocation: a virtual buffer of the callee's shared-memory size, 128-byte aligned),
    // so the callee's buffers sit at the call's offset in the caller's frame.
    const auto callee = callee_shared_.find(std::string(o.callee));
    if (callee == callee_shared_.end()) {
      return PlanError(m_.origin, o.line, absl::StrCat("tt.call of @", o.callee, ", which was not planned first"));
    }
    need.bytes = callee->second;
  } else if (m_.num_ctas > 1) {
    ASSIGN_OR_RETURN(need, ClusterScratch(o, used()));
  } else if (o.kind == TtgirOpKind::kConvertLayout) {
    const std::string_view t(o.text.data(), o.text.size());
    const size_t types = t.find("tensor<");
    const std::string_view key = types == std::string_view::npos ? t : t.substr(types);
    auto hit = std::find_if(cvt_memo_.begin(), cvt_memo_.end(),
                            [&](const auto& e) { return e.first == key; });
    if (hit != cvt_memo_.end()) {
      need = hit->second;
    } else {
      ASSIGN_OR_RETURN(need, ScratchFor(o, *layouts_, used(), m_.origin));
      cvt_memo_.emplace_back(key, need);
    }
  } else {
    ASSIGN_OR_RETURN(need, ScratchFor(o, *layouts_, used(), m_.origin));
  }
  if (need.bytes <= 0) return absl::OkStatus();
  if (need.bytes > kMaxTritonBufferBytes) {
    return PlanError(m_.origin, o.line,
                     absl::StrCat(o.name, ": scratch of ", need.bytes, " bytes is larger than 2^40 bytes"));
  }
  SharedBuffer b;
  b.name = o.kind == TtgirOpKind::kCall ? absl::StrCat("scratch of tt.call @", o.callee, " (its allocation)")
                                       : absl::StrCat("scratch of ", o.name);
  b.line = o.line;
  b.op_index = i;
  b.kind = SharedBufferKind::kScratch;
  b.op = std::string(o.name);
  b.buffer.size = need.bytes;
  b.buffer.alignment = need.alignment;
  std::tie(b.buffer.async_group, b.buffer.async_region) = AsyncRegion(i);
  scratch_op_.push_back(i);
  plan_.buffers.push_back(std::move(b));
  return absl::OkStatus();
}

absl::Status AllocationAnalysis::GetValuesAndSizes() {
  const int num_ops = static_cast<int>(m_.ops.size());
  for (int i = 0; i < num_ops; ++i) {
    if (!Mine(i)) continue;
    if (m_.ops[i].kind == TtgirOpKind::kLocalAlloc) {
      RETURN_IF_ERROR(GetExplicitValueSize(i));
    } else {
      GetValueAlias(i);
    }
  }
  // Yields carry allocations back to loop arguments and out to results; views of those are
  // found again until nothing changes (most kernels: one check).
  for (int round = 0; PropagateYields() && round < num_ops; ++round) {
    for (int i = 0; i < num_ops; ++i) {
      if (Mine(i) && m_.ops[i].kind != TtgirOpKind::kLocalAlloc) GetValueAlias(i);
    }
  }
  CollectUsers();
  GetFunctionScratchSize();
  for (int i = 0; i < num_ops; ++i)
    if (Mine(i)) RETURN_IF_ERROR(GetScratchValueSize(i));
  return absl::OkStatus();
}

void AllocationAnalysis::NumberOperations() {
  // (op, region, next child) per open op; the next id goes to whatever is visited next.
  struct Open {
    int op;
    size_t region = 0, child = 0;
  };
  std::vector<Open> open;
  int64_t next = 0;
  plan_.position_ops.clear();
  auto enter = [&](int op) {
    if (cf_[op]) {
      pos_[op] = next++;
      plan_.position_ops.push_back(op);
    }
    open.push_back({op});
  };
  for (int top : m_.functions[fn_].body) {
    enter(top);
    while (!open.empty()) {
      Open& f = open.back();
      const TtgirOp& o = m_.ops[f.op];
      while (f.region < o.regions.size() && f.child >= o.regions[f.region].size()) {
        ++f.region;
        f.child = 0;
      }
      if (f.region < o.regions.size()) {
        const int child = o.regions[f.region][f.child++];
        enter(child);  // may reallocate `open`: `f` is not used past this point
        continue;
      }
      const int op = f.op;
      open.pop_back();
      if (cf_[op]) {
        end_pos_[op] = next - 1;
      } else {
        pos_[op] = next++;
        end_pos_[op] = pos_[op];
        plan_.position_ops.push_back(op);
      }
    }
  }
}

std::pair<uint64_t, uint64_t> AllocationAnalysis::Liveness(int v) const {
  int64_t def = 0;
  std::pair<int, int> scope{-1, 0};
  if (def_op_[v] >= 0) {
    def = pos_[def_op_[v]];
    scope = ScopeOf(def_op_[v]);
  } else if (def_region_[v].first >= 0) {
    const TtgirOp& owner = m_.ops[def_region_[v].first];
    scope = def_region_[v];
    if (cf_[def_region_[v].first]) {
      def = pos_[def_region_[v].first];
    } else {
      const auto& r = owner.regions[def_region_[v].second];
      def = r.empty() ? pos_[def_region_[v].first] : pos_[r.front()];
      for (int c : r) def = std::min(def, pos_[c]);
    }
  }
  int64_t last = def;
  for (int u : users_[v]) {
    int64_t end = pos_[u];
    int a = u;
    while (a >= 0) {
      std::pair<int, int> s = ScopeOf(a);
      if (s == scope) break;
      const int p = m_.ops[a].parent;
      if (p < 0) break;
      if (loop_[p]) end = std::max(end, end_pos_[p]);
      else if (!cf_[p]) end = std::max(end, pos_[p]);
      a = p;
    }
    last = std::max(last, end);
  }
  return {static_cast<uint64_t>(def), static_cast<uint64_t>(last + 1)};
}

void AllocationAnalysis::ResolveAliasBufferLiveness() {
  for (size_t b = 0; b < members_.size(); ++b) {
    uint64_t lo = std::numeric_limits<uint64_t>::max(), hi = 0;
    for (int v : members_[b]) {
      auto [s, e] = Liveness(v);
      lo = std::min(lo, s);
      hi = std::max(hi, e);
    }
    plan_.buffers[b].buffer.start = lo;
    plan_.buffers[b].buffer.end = hi;
  }
}

void AllocationAnalysis::ResolveScratchBufferLiveness() {
  for (size_t b = 0; b < plan_.buffers.size(); ++b) {
    const int op = scratch_op_[b];
    if (op < 0) continue;
    plan_.buffers[b].buffer.start = static_cast<uint64_t>(pos_[op]);
    plan_.buffers[b].buffer.end = static_cast<uint64_t>(pos_[op]) + 1;
  }
}

void AllocationAnalysis::ResolveLiveness() {
  NumberOperations();
  ResolveAliasBufferLiveness();
  ResolveScratchBufferLiveness();
}

absl::Status AllocationAnalysis::ComputeOffsets() {
  std::vector<TritonBuffer> raw;
  raw.reserve(plan_.buffers.size());
  for (const SharedBuffer& b : plan_.buffers) raw.push_back(b.buffer);
  if (!raw.empty()) {
    ASSIGN_OR_RETURN(plan_.allocation, AllocateLikeTriton(raw));
  }
  return absl::OkStatus();
}

absl::StatusOr<SharedMemoryPlan> AllocationAnalysis::Run() {
  if (m_.value_group.size() != m_.num_values()) {
    return absl::InvalidArgumentError("module's value tables disagree (not made by ParseTtgir)");
  }
  plan_.kernel = m_.functions[fn_].name;
  plan_.target = m_.target;
  plan_.num_warps = m_.num_warps;
  plan_.num_ctas = m_.num_ctas;
  plan_.total_warps = m_.num_warps;
  if (options_.release != TritonRelease::kUnknown) {
    plan_.release = options_.release;
    plan_.release_source = options_.release_source.empty() ? "given" : options_.release_source;
  } else {
    TritonReleaseCue cue = DetectTritonRelease(m_);
    if (cue.release != TritonRelease::kUnknown) {
      plan_.release = cue.release;
      plan_.release_source = std::move(cue.cue);
    } else {
      plan_.release = kNewestTritonRelease;
      plan_.release_source = absl::StrCat(
          "assumed: the TTGIR does not tell its Triton release; rules of ", TritonReleaseName(kNewestTritonRelease),
          ", the newest modelled; for a kernel of another release set it (simulate: SCRATCHSIM_TRITON_RELEASE=3.6)");
    }
  }
  layouts_.emplace(LayoutContext{m_.aliases, m_.num_warps, m_.threads_per_warp});
  layouts_->release = plan_.release;
  // AMD's LDS (TargetInfo): CDNA4 (gfx950) lines are 64 banks wide; both have their own
  // 128-bit load tiles.
  if (m_.target == "hip:gfx950") {
    layouts_->num_banks = 64;
    layouts_->amd_arch = 950;
  } else if (m_.target == "hip:gfx942") {
    layouts_->amd_arch = 942;
  }
  if (absl::StartsWith(m_.target, "cuda:")) {
    int cc = 0;
    if (absl::SimpleAtoi(absl::string_view(m_.target).substr(5), &cc) && cc > 0) {
      layouts_->compute_capability = cc;
    }
  }
  IndexOps();
  RETURN_IF_ERROR(GetValuesAndSizes());
  ResolveLiveness();
  RETURN_IF_ERROR(ComputeOffsets());
  RETURN_IF_ERROR(OptimizeLdsUsage());
  return std::move(plan_);
}

absl::Status AllocationAnalysis::OptimizeLdsUsage() {
  // Triton 3.6 runs the pass in make_llir, after the TTGIR is written; later releases run it in
  // make_ttgir, so their TTGIR already shows what it did.
  // It works on the kernel (the call graph's root) only; a callee's conversions stay.
  if (!absl::StartsWith(m_.target, "hip:") || plan_.release != TritonRelease::k3_6 || m_.num_ctas > 1 ||
      !m_.functions[fn_].is_public) {
    return absl::OkStatus();
  }
  const int64_t limit = AmdLdsBytes(m_.target);
  if (plan_.allocation.shared <= limit) return absl::OkStatus();
  // findLDSBottleneckLayoutConvert: a conversion's target is its size less what the kernel is
  // over the limit where it runs (the highest end among the buffers live there), as if every
  // buffer above it could move down; those larger than their target are tried, each against
  // the first plan.
  std::vector<std::pair<size_t, int64_t>> candidates;
  for (size_t b = 0; b < plan_.buffers.size(); ++b) {
    const TritonBuffer& cvt = plan_.buffers[b].buffer;
    const int op = scratch_op_[b];
    if (op < 0 || m_.ops[op].kind != TtgirOpKind::kConvertLayout || cvt.size <= 0) continue;
    int64_t end = 0;
    for (size_t o = 0; o < plan_.buffers.size(); ++o) {
      const TritonBuffer& other = plan_.buffers[o].buffer;
      if (other.start <= cvt.start && cvt.start < other.end) {
        end = std::max(end, plan_.allocation.offsets[o] + other.size);
      }
    }
    const int64_t target = std::max<int64_t>(0, cvt.size - (end - limit));
    if (cvt.size > target) candidates.emplace_back(b, target);
  }
  bool split = false;
  for (const auto& [b, target] : candidates) {
    SharedBuffer& buffer = plan_.buffers[b];
    ASSIGN_OR_RETURN(const std::optional<int64_t> lds,
                     SplitConversionLds(m_.ops[scratch_op_[b]], *layouts_, target, m_.origin));
    if (!lds) continue;
    // The two conversions it becomes run one after the other, each with its own scratch live for
    // its op only: the larger stands for both.
    buffer.buffer.size = *lds;
    buffer.name = absl::StrCat(buffer.name, " (split by OptimizeLDSUsage)");
    split = true;
  }
  return split ? ComputeOffsets() : absl::OkStatus();
}

}  // namespace

namespace {

// The kernel's own location, `#loc = loc("file":line:column)` (its arguments' locations name it):
// Triton 3.6 gives a function defined at the start of its line column 0, 3.9 column 1 (every
// TTGIR of the catalogue, held-out and generated sets of both releases: 7,559 files, no
// exception). An indented definition's column tells nothing.
TritonReleaseCue DetectFromKernelLocation(const TtgirModule& m) {
  TritonReleaseCue out;
  const absl::string_view loc = m.kernel_location;
  if (!absl::StartsWith(loc, "loc(\"") || !absl::EndsWith(loc, ")")) return out;
  const size_t colon = loc.rfind(':');
  if (colon == absl::string_view::npos) return out;
  const absl::string_view column = loc.substr(colon + 1, loc.size() - colon - 2);
  if (column != "0" && column != "1") return out;
  out.release = column == "0" ? TritonRelease::k3_6 : TritonRelease::k3_9;
  out.cue = absl::StrCat("the kernel's location is in column ", column, ", as Triton ", column == "0" ? "3.6" : "3.9",
                         " places a definition at the start of its line (3.6: 0, 3.9: 1): ", loc);
  return out;
}

}  // namespace

TritonReleaseCue DetectTritonRelease(const TtgirModule& m) {
  TritonReleaseCue out;
  const bool nvidia = absl::StartsWith(m.target, "cuda:");
  if (m.two_ctas_attribute) {
    out.release = TritonRelease::k3_9;
    out.cue = "module attribute \"ttng.two-ctas\" (Triton 3.9)";
    return out;
  }
  if (nvidia) {
    out.release = TritonRelease::k3_6;
    out.cue = "no module attribute \"ttng.two-ctas\" (Triton 3.9 writes it into every NVIDIA module)";
    return out;
  }
  for (const TtgirOp& o : m.ops) {
    if (o.name == "gpu.barrier") {
      out.release = TritonRelease::k3_6;
      out.cue = absl::StrCat("op gpu.barrier at line ", o.line, " (Triton 3.6; 3.9 prints ttg.barrier)");
      return out;
    }
    if (o.name == "ttg.barrier") {
      out.release = TritonRelease::k3_9;
      out.cue = absl::StrCat("op ttg.barrier at line ", o.line, " (Triton 3.9; 3.6 prints gpu.barrier)");
      return out;
    }
    if (absl::StartsWith(o.name, "amdg.buffer_") &&
        absl::string_view(o.text).find("contiguity = ") != absl::string_view::npos) {
      out.release = TritonRelease::k3_9;
      out.cue = absl::StrCat("`contiguity` on ", o.name, " at line ", o.line, " (Triton 3.9)");
      return out;
    }
  }
  const std::string_view text = m.storage->text;
  for (size_t p = text.find("!tt.tensordesc<"); p != std::string_view::npos; p = text.find("!tt.tensordesc<", p + 1)) {
    const bool old_form = text.substr(p + 15, 7) == "tensor<";
    out.release = old_form ? TritonRelease::k3_6 : TritonRelease::k3_9;
    out.cue = old_form ? "type !tt.tensordesc<tensor<...>> (Triton 3.6)" : "type !tt.tensordesc<...> (Triton 3.9)";
    return out;
  }
  return DetectFromKernelLocation(m);
}

namespace {

// The functions of the module in the order ModuleAllocation plans them: callees before their
// callers (post-order of the call graph from the kernel). Recursion cannot be sized (Triton
// refuses it too) and is an error naming the call.
absl::Status CallGraphPostOrder(const TtgirModule& m, int f, std::vector<uint8_t>& state, std::vector<int>& order) {
  state[f] = 1;  // on the walk's path
  for (const TtgirOp& o : m.ops) {
    if (o.function != f || o.kind != TtgirOpKind::kCall) continue;
    const auto callee = std::find_if(m.functions.begin(), m.functions.end(),
                                     [&](const TtgirFunction& g) { return g.name == o.callee; });
    const int c = static_cast<int>(callee - m.functions.begin());
    if (state[c] == 1) {
      return PlanError(m.origin, o.line, absl::StrCat("tt.call of @", o.callee, " is recursive: no allocation size"));
    }
    if (state[c] == 0) RETURN_IF_ERROR(CallGraphPostOrder(m, c, state, order));
  }
  state[f] = 2;
  order.push_back(f);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SharedMemoryPlan> PlanSharedMemory(const TtgirModule& module, const PlanOptions& options) {
  std::map<std::string, int64_t> callee_shared;
  std::vector<int> order;
  if (module.functions.size() > 1) {
    std::vector<uint8_t> state(module.functions.size(), 0);
    RETURN_IF_ERROR(CallGraphPostOrder(module, module.kernel, state, order));
    order.pop_back();  // the kernel, planned last below
  }
  for (int f : order) {
    std::pmr::monotonic_buffer_resource arena(size_t{16384} + 96 * (module.ops.size() + module.num_values()));
    ASSIGN_OR_RETURN(const SharedMemoryPlan callee,
                     AllocationAnalysis(module, f, callee_shared, options, &arena).Run());
    callee_shared[module.functions[f].name] = callee.allocation.shared;
  }
  std::pmr::monotonic_buffer_resource arena(size_t{16384} + 96 * (module.ops.size() + module.num_values()));
  return AllocationAnalysis(module, module.kernel, callee_shared, options, &arena).Run();
}

absl::StatusOr<TensorMemoryPlan> PlanTensorMemory(const TtgirModule& m) {
  TensorMemoryPlan plan;
  int64_t full_rows = 0;
  std::map<int64_t, int> half_rows;  // columns -> allocations of 64 rows that wide
  for (const TtgirOp& o : m.ops) {
    if (o.name != "ttng.tmem_alloc") continue;
    const std::optional<MemDesc> d = ResultMemDesc(o.text);
    if (!d || d->shape.size() < 2) {
      return PlanError(m.origin, o.line, "ttng.tmem_alloc without a !ttg.memdesc<...xMxN...> result type");
    }
    const auto enc = m.aliases.find(std::string(d->encoding));
    const std::string_view attr = enc == m.aliases.end() ? d->encoding : std::string_view(enc->second);
    const int64_t bits = ElementBits(absl::string_view(d->element.data(), d->element.size()));
    // A cluster launch's accumulator is split over its CTAs (3.6: CTASplitM/CTASplitN of the
    // encoding; 3.9: its CGALayout); each CTA's tensor memory holds its share.
    const size_t rank = d->shape.size();
    auto cga = CtaSplitNum(absl::string_view(attr.data(), attr.size()), m.aliases, static_cast<int>(rank));
    if (!cga.ok()) return PlanError(m.origin, o.line, cga.status().message());
    const int64_t split_m = IntAttr(attr, "CTASplitM").value_or((*cga)[rank - 2]);
    const int64_t split_n = IntAttr(attr, "CTASplitN").value_or((*cga)[rank - 1]);
    const std::vector<int64_t> per_cta = ShapePerCta({d->shape[rank - 2], d->shape[rank - 1]}, {split_m, split_n});
    const int64_t rows = per_cta[0], n = per_cta[1];
    int64_t lead = 1;
    for (size_t k = 0; k + 2 < d->shape.size(); ++k) lead *= d->shape[k];
    if (bits <= 0 || rows <= 0 || n <= 0 || lead <= 0 || lead > kMaxTritonBufferBytes) {
      return PlanError(m.origin, o.line, absl::StrCat("ttng.tmem_alloc of ", Describe(*d), ": unsupported shape or type"));
    }
    int64_t columns = 0;
    if (attr.find("tensor_memory_scales_encoding") != std::string_view::npos) {
      columns = std::max<int64_t>(n / 4, 1) * std::max<int64_t>(rows / 128, 1);
    } else if (attr.find("tensor_memory_encoding") != std::string_view::npos) {
      const int64_t stride = IntAttr(attr, "colStride").value_or(1);
      const int64_t cell_bits = bits * std::max<int64_t>(stride, 1);
      columns = std::max<int64_t>(cell_bits < 32 ? n * cell_bits / 32 : n, 1) * std::max<int64_t>(rows / 128, 1);
    } else {
      return PlanError(m.origin, o.line, absl::StrCat("unknown tensor memory encoding ", std::string(d->encoding)));
    }
    columns *= lead;
    ++plan.allocations;
    if (rows == 64) {
      ++half_rows[columns];
    } else {
      full_rows += columns;
    }
    if (full_rows > kMaxTritonBufferBytes) return PlanError(m.origin, o.line, "tensor memory columns overflow");
  }
  int64_t total = full_rows;
  for (const auto& [columns, count] : half_rows) total += (count + 1) / 2 * columns;
  if (total == 0) return plan;
  plan.columns = 32;
  while (plan.columns < total) plan.columns *= 2;
  return plan;
}

absl::StatusOr<SharedMemoryPlan> PlanTtgir(std::string_view text, std::string_view origin, const PlanOptions& options) {
  ASSIGN_OR_RETURN(TtgirModule module, ParseTtgir(text, origin));
  return PlanSharedMemory(module, options);
}

}  // namespace scratchsim::triton
