// What a traced Pallas body holds in vector registers, replayed value by value through the live
// ranges of its vector program: the scratchpad replay of this project, one level down.
// Mosaic unrolls every vector op into ops on vregs (8 sublanes x 128 lanes x 32 bits) and the
// scheduler streams what it can vreg by vreg; what it cannot stream is a value whose uses straddle
// an op that needs a whole operand before it yields (a reduction, a dot, a minor-dim transpose):
// such a value is held whole across that op, and what the register file cannot hold is spilled
// to scoped VMEM (docs/tpu.md, "The vreg replay").
#ifndef SCRATCHSIM_BACKENDS_TPU_VREG_REPLAY_H_
#define SCRATCHSIM_BACKENDS_TPU_VREG_REPLAY_H_

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/device.pb.h"
#include "proto/graph.pb.h"

namespace scratchsim {

// What the widened spill central takes off the replay's held bytes: v4's vector register file, 32
// vregs of 4 KiB (8 x 128 x 32-bit each). libtpu's allocator has 64 vregs on v5e, v5p, v6e and
// v7x (tests/data/tpu/vreg_alloc_probe.txt), but the held bytes are not the register pressure of
// the schedule it allocates, and taking 64 off there moved the dev families' figures away from
// libtpu (docs/tpu.md, "How libtpu allocates spill slots"): one offset on every generation.
inline constexpr int64_t kVregFileBytes = 32 * 4096;

// Which axes of a value's vregs Mosaic's layout replicates (infer_vector_layout): an iota along
// the minor dim is the same in every sublane, one along the second-minor in every lane; a
// broadcast replicates the minor dims it expands (a scalar's both); elementwise ops keep what
// their operands share. A replicated axis holds one tile.
enum class Replicated { kNone, kSublanes, kLanes, kBoth };

// A vector value of the program by its type ("f32[256,512]", "i32[128,1024]{sublanes replicated}").
struct VregValueType {
  bool vector = false;  // false: a ref or a scalar
  std::string dtype;    // canonical ("f32", "bf16", "i8", "i1", ...)
  int bits = 32;
  std::vector<int64_t> dims;
  Replicated replicated = Replicated::kNone;
};
// Whether `value`'s layout replicates its sublanes (alone or with its lanes): every row of each
// vreg the same, as a block's column sum or an iota along the lanes is.
bool InEverySublane(const VregValueType& value);

// Parses PallasRegion.values' words; `field` names the value in the error.
absl::StatusOr<VregValueType> ParseValueType(absl::string_view text, absl::string_view field);

// Bytes of `value` in vregs: the two minor dims padded to (8 x packing sublanes, 128 lanes), a
// replicated one counted as a single row (or lane), 16-bit values packed 2 and 8-bit 4 to a
// 32-bit sublane unless `widened` (then 32 bits each), leading dims multiplied; a 1-d value fills
// lanes. 0 for refs and scalars.
int64_t VregBytes(const VregValueType& value, bool widened);

// The bytes of `device`'s vector register file as libtpu allocates it: its vregs of 4 KiB (32 on
// v4, 64 on v5e-v7x: tests/data/tpu/vreg_alloc_probe.txt, in the device models).
int64_t RegisterFileBytes(const DeviceModel& device);

// Whether `device`'s Mosaic computes 16- and 8-bit vector arithmetic in 32 bits: the generations
// without a bf16 VPU (v4, v5e, v5p), and a TPU other than the five (the larger figure).
bool WidensNarrowArithmetic(const DeviceModel& device);

// Whether `device`'s Mosaic widens an 8-bit (or 4-bit) value loaded from a block whose minor dim
// is not a multiple of 128 to 32 bits: v4, and a TPU other than the five (the larger figure);
// v5e-v7x keep it packed (tests/data/tpu/unaligned8_spill_sweep.jsonl.gz).
bool WidensUnalignedNarrowLoads(const DeviceModel& device);

// Whether `device`'s Mosaic unpacks a dot operand the body computes from 8-bit (or 4-bit) values
// whole to 32 bits before the MXU takes it: v4, and a TPU other than the five (the larger figure);
// v5e-v7x convert it vreg by vreg (tests/data/tpu/converted_dot_operand_probe.txt: on v4 every
// such operand spills whole less 0-22 vregs, on v5e-v7x none spills whole).
bool UnpacksConvertedNarrowDotOperands(const DeviceModel& device);

// Whether value `id` of `region` is computed from an 8-bit (or 4-bit) vector by a convert, alone or
// followed by elementwise ops (a dequantization's scale or zero point): what a dot operand carries
// from such a value. `defining` maps each value to the index of the op that defines it in the
// region (-1: none, an input of the region).
bool ComputedFromNarrowConvert(const PallasRegion& region, const std::vector<int>& defining, int32_t id);

// The replay's result for one body on one device.
struct VregReplay {
  // The most bytes of vector values held whole across one whole-operand op (a "barrier"): values
  // defined before it and used after it, plus a dot's operands computed in the body (not loads),
  // which Mosaic materializes whole (at their arithmetic width) before the MXU pushes them, but for
  // one converted from 8 bits where the generation converts it vreg by vreg
  // (UnpacksConvertedNarrowDotOperands); times the copies an unrolled loop interleaves. A
  // concatenation of part tiles counts as a barrier whose result is held too: it shifts lanes (or
  // sublanes) across its operands' vregs and makes the result whole before it is read. 0 for a
  // body with no barrier.
  int64_t peak_held_bytes = 0;
  std::string peak_at;  // "reduce_max (region 0, op 1)"
  // The same held across one barrier, the body's loads left out: at libtpu's pressure peak LLO
  // holds computed blocks and loads a block's values again rather than keeping them (docs/tpu.md,
  // "How libtpu allocates spill slots"). Region inputs count as computed (a loop's carries).
  int64_t peak_computed_held_bytes = 0;
  std::string computed_peak_at;  // where that figure peaks: "reduce_sum (region 0, op 21)"
  // The computed values held across a reduction over its operand's sublanes (a block's column
  // sum), as peak_computed_held_bytes counts them: such a reduction reads every vreg of its operand
  // before it yields, so no schedule can interleave what comes after it with what came before, and
  // a value read on both sides of it is held whole.
  int64_t sublane_reduction_computed_held_bytes = 0;
  // The computed values the stores of a straight-line region hold on any order of their output
  // groups: LLO's critical-path scheduler emits each output buffer's stores as one run
  // (docs/validation/data/tpu/store-groups-probe.txt), so a computed value that feeds the stores of
  // two outputs is whole at the boundary between their runs. The least, over every order of the
  // runs, of the most such values one boundary has. 0 for one output, or more than 8.
  int64_t store_group_held_bytes = 0;
  // The same on the program's order of the outputs' first stores, the order Mosaic emits them in
  // and LLO keeps unless its priorities move a run (the probe keeps it for a, b, o and moves o
  // after a in o, a, b): the central's figure for what such stores hold.
  int64_t store_group_program_order_bytes = 0;
  // The results of the barrier where that figure peaks (a reduction's row vector), times the
  // copies: what the cross-lane units yield at it.
  int64_t barrier_results_bytes = 0;
  // The most bytes of vector values live at once in program order (defined, or entering the
  // region, and not yet read for the last time; a loop or cond body on top of what its enclosing
  // code keeps live across it), times the unrolled copies: the register allocator's pressure if
  // the scheduler kept the program's order.
  int64_t peak_live_bytes = 0;
  // Some value computed from a dot's result is held whole across a later whole-operand op, or is
  // a dot's computed left operand: the dot class's figure (the largest dot's f32 result) presumes
  // it, as in every fitted dot body (flash attention's backward). Bodies of independent matmuls,
  // whose results stream out to stores, do not hold one.
  bool dot_result_held = false;
  // A region runs inside a loop the body does not unroll (a while, a partly unrolled scan).
  bool rolled = false;
  // Every vector value every region defines and reads, whole and at the arithmetic width (loop
  // copies counted): no schedule spills more than every value it has, so this bounds the spill
  // slots.
  int64_t all_values_bytes = 0;
  // The body's signature: its distinct primitives, each barrier with the op that produced each of
  // its vector operands ("reduce_max(exp)", "dot_general(convert_element_type)"; "input" for a
  // value from outside the region), and the most barriers one region has.
  std::set<std::string> primitives;
  int max_barriers_per_region = 0;
};

// Whether an op needs a whole operand before it yields: reductions (sum, max, argmax, cumsum, ...),
// dot_general, and a transpose of the two minor dims.
bool IsBarrier(const PallasOp& op);

// What bounds the spill slots of the replayed body: in straight-line code (unrolled loops
// included) Mosaic's schedule keeps no more live than the program's order does, so the
// program-order peak; across a rolled loop it does (ragged paged attention spills up to 2.8x that
// peak), so every value the body defines. TpuCorpusTest.SpillsStayWithinTheReplaysBound checks it
// on every recorded compile.
int64_t SpillBoundBytes(const VregReplay& replay);

// Replays `body.program` (empty program: an empty replay). Errors name the field.
absl::StatusOr<VregReplay> ReplayVregs(const PallasBody& body, const DeviceModel& device);

}  // namespace scratchsim

#endif  // SCRATCHSIM_BACKENDS_TPU_VREG_REPLAY_H_
