// Mosaic's register spills estimated from what a Pallas kernel body holds in vector registers,
// and the other scratch Mosaic adds that the scoped limit counts (CountedMosaicScratch, below).
// Spills (PallasBody, proto/graph.proto): a class of body, one figure of it, and per TPU generation a
// low, central and high multiple fitted on the libtpu oracle corpus (docs/tpu.md, "What the
// compiler adds"; bench/tpu/fit_spill_model.py). The lowering turns the result into an
// estimated buffer (Buffer.estimate), which the fit engine judges at all three sizes.
#ifndef SCRATCHSIM_BACKENDS_TPU_SPILL_MODEL_H_
#define SCRATCHSIM_BACKENDS_TPU_SPILL_MODEL_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "backends/tpu/vreg_replay.h"
#include "proto/device.pb.h"
#include "proto/graph.pb.h"

namespace scratchsim {

// What kind of work keeps values whole in vector registers.
enum class BodyClass {
  kStreaming,  // nothing: values stream register by register (copies, elementwise, reductions into the output)
  kReduction,  // values live across a reduction, no dot (softmax, layer norm)
  kAttention,  // across a reduction, with dots (flash attention forward)
  kLooped,     // the same inside a loop the body does not unroll (paged, ragged paged attention)
  kMatmul,     // one dot of 16-bit operands, once per grid step, nothing live across a reduction (matmul, gmm)
  kMatmul8,    // the same with 8-bit (or 4-bit) operands
  kMatmul32,   // the same with 32-bit operands (the MXU takes them in 16-bit passes from VMEM)
  kDot,        // dots of 16/8/4-bit operands, nothing live across a reduction (flash backward)
  kDot32,      // several dots of 32-bit operands only
  kTranspose,  // a transpose of the two minor dims of 16/8/4-bit values, nothing else
};
absl::string_view BodyClassName(BodyClass c);

// A FITS with less than this to spare at the spill estimate's high bound is worded as near the
// limit, with what settles it. It is the most libtpu spilled beyond the band at shapes no fit saw
// (the holdout sweeps, tests/data/tpu/README.md), and
// TpuCorpusTest.HoldoutBandMissesStayWithinTheLargest holds it to them.
inline constexpr int64_t kNearLimitSpareBytes = 278528;

// The libtpu and JAX the spill model's coefficients and rules were fitted on and validated
// against (tests/data/tpu/README.md): a kernel traced beside another libtpu is reported as such.
inline constexpr absl::string_view kSpillModelLibtpu = "0.0.42.1";
inline constexpr absl::string_view kSpillModelJax = "0.10.2";

// The estimate as expressions over the graph's parameters (each bytes per grid step), with
// what it rests on in words.
struct SpillEstimate {
  BodyClass body_class = BodyClass::kStreaming;
  std::string figure;   // the body figure the multiples apply to ("" for streaming)
  std::string low;      // expressions; "0" for streaming
  std::string central;
  std::string high;
  std::string basis;    // "0.46-1.16 x reduction_live_bytes (central 1.044 x - 406490 B); ..."
  // The ops and patterns of the body no fitted body of its class has ("argmax, cumsum"), for which
  // the band was widened to what the vreg replay proves; empty where the band is validated.
  std::string unvalidated;
};

// Which class `body` falls in, from which of its figures are given (non-empty and not "0") and
// how many dots it has, so that the class of a graph does not change with its parameters.
BodyClass ClassifyBody(const PallasBody& body);

// What Mosaic keeps in vector registers across one dot's MXU passes, as an expression in bytes:
// nothing when the dot's weight tiles (k and n in MXU edges) fit the device's MXUs at once;
// otherwise the left operand when more than one column of MXU tiles reuses it (16- and 8-bit
// operands: 32-bit ones are re-read from VMEM for each pass), plus one MXU column of f32 partial
// results (n wide where n is narrower than the MXU, for 32-bit operands) when k's passes do not
// fill the MXUs evenly (more passes than MXUs, fewer that do not divide them, or several whose
// last is partial).
std::string DotHeldBytes(const PallasDot& dot, int64_t operand_bytes, const DeviceModel& device);

// What the largest of the body's dots keeps, as an expression in bytes: its f32 result,
// DotHeldBytes and its right operand (several dots: flash attention's backward pass, whose largest
// result is a logits block). "0" without body.dots.
std::string LargestDotBytes(const PallasBody& body, const DeviceModel& device);

// What Mosaic keeps in vector registers to transpose one operand, as an expression in bytes:
// 16-bit values turn in strips of 128 rows with every column at once (nothing where the operand
// has at most 128 rows); 8-bit and 4-bit values, on v4 (and a TPU other than the five), are
// widened to 16 bits and held whole, and on v5e-v7x turn without holding; 32-bit values hold
// nothing (tests/data/tpu/transpose_spill_sweep.jsonl.gz).
std::string TransposeHeldBytes(const PallasValue& transpose, const DeviceModel& device);

// What Mosaic keeps in vector registers of one load of 8-bit (or 4-bit) values from a block whose
// minor dim is not a multiple of 128, as an expression in bytes: on v4 (and a TPU other than the
// five) the value widened to 32 bits, whole; on v5e-v7x nothing
// (tests/data/tpu/unaligned8_spill_sweep.jsonl.gz).
std::string UnalignedNarrowLoadHeldBytes(const PallasValue& load, const DeviceModel& device);

// The enumerator's name ("kReduction"), for the validated-signature table.
absl::string_view BodyClassEnumerator(BodyClass c);

// The validated-signature table (backends/tpu/validated_signatures.inc) as compiled in, one
// ValidatedSignatureLine per class; the test that keeps it equal to the fitted bodies compares it.
std::string ValidatedSignatureTable();
std::string ValidatedSignatureLine(BodyClass body_class, int max_barriers, absl::string_view ops);

// The ops of `replay` (a body of `body_class`) and its most whole-operand ops per region that no
// fitted body of the class has, in words; empty where the class's band is validated for it.
std::vector<std::string> UnvalidatedPatterns(BodyClass body_class, const VregReplay& replay);

// Where `body`, whose class estimate is `estimate`, lies outside the shapes its class's band was
// drawn from on `device`'s generation (backends/tpu/spill_coverage.inc), in words ("m x k = 1048576,
// outside the 16384 to 524288 of the fitted v7x matmul bodies whose figure is 0"): its figure and,
// for a one-dot matmul, the dot's m, k, n, m x k and m x n. Empty where covered, for a streaming
// body, a TPU other than the five, or figures that are not constants.
std::vector<std::string> ShapesOutsideTheFit(const PallasBody& body, const SpillEstimate& estimate,
                                             const DeviceModel& device);

// The estimate for `body` on `device` (a TPU model: tpu_v4 ... tpu_v7x; another TPU takes the
// widest band of all five), with `replay` the body's vreg replay (ReplayVregs; null: none, the
// class's band alone). The first form replays the body itself and leaves out a program that does
// not replay (the lowering refuses one, by field, before it estimates).
SpillEstimate EstimateSpills(const PallasBody& body, const DeviceModel& device);
SpillEstimate EstimateSpills(const PallasBody& body, const DeviceModel& device, const VregReplay* replay);

// Scratch Mosaic allocates for some bodies beside the windows, scratch operands and spill slots,
// which libtpu's vmem_report lists and the scoped limit counts (verified by compiling at the
// report's total, total - 1 and total - the scratch: bench/tpu/probe_counted_scratch.py,
// tests/data/tpu/counted_scratch_probe.txt). Each is a byte expression over the graph's
// parameters; `low` == `high` where it is exact.
struct CountedScratch {
  std::string suffix;  // the lowered buffer's name after "<op>.": "sublane_replication", "internal_scratch"
  std::string central, low, high;
  std::string doc;     // what it is and where the rule was read
};
// v4 only: a row vector broadcast down the sublanes of a block is replicated into one 4 KiB
// temporary per vector register (row_broadcast_bytes, exactly), and such a kernel gets Mosaic's
// internal scratch (u32[72,128], 36 KiB). v4-v5p: a dot whose left operand has 2-4 rows gets the
// internal scratch too (matmuls and paged attention); with 1 or 5-7 rows some kernels do and
// some do not, so there it is an estimate of 0 to 36 KiB. v6e and v7x list none. Nothing where
// the graph sets pallas.internal_scratch_bytes (that buffer is the internal scratch) except the
// v4 temporaries. v4: a convert to or from an 8- or 4-bit type packs through a 4 KiB temporary,
// an estimate of 0 to 4 KiB (central 4 KiB; some kernels' reports do not count it). v4-v5p: a
// one-row 16-bit value loaded and stored as it is gets the internal scratch; on v4 one converted
// (or stored after a convert) an estimate of 0 to 36 KiB, central 36 KiB.
std::vector<CountedScratch> CountedMosaicScratch(const PallasBody& body, const DeviceModel& device,
                                                 bool internal_scratch_given);

}  // namespace scratchsim

#endif  // SCRATCHSIM_BACKENDS_TPU_SPILL_MODEL_H_
