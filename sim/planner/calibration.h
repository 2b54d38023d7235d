// Calibration: device performance terms, and per-configuration residuals, fitted to timings of
// a device one has (docs/planner.md, "Calibration"). `simulate calibrate` reads a timing sweep,
// asks this module for the terms that make the planner's estimates match the measured times and,
// with --residuals, for what the model still misses of each configuration, and writes them as a
// device model that inherits the measured device; `simulate plan --calibration FILE` (or
// `--device FILE`) then ranks with them. The terms are those the analytic model already reads;
// a residual multiplies one configuration's estimate (ResidualTable). Without a calibration file
// the shipped device model stands.
#ifndef SCRATCHSIM_SIM_PLANNER_CALIBRATION_H_
#define SCRATCHSIM_SIM_PLANNER_CALIBRATION_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/device.pb.h"
#include "sim/graph.h"

namespace scratchsim {

// One timed configuration: every parameter the graph needs set ("BLOCK_M=128", "M=4096", ...),
// the dtype the model rates its math in, and the measured time.
struct CalibrationSample {
  std::vector<std::string> sets;
  // Of `sets`, those that name the configuration rather than the shape (everything but M, N and
  // K): the key of its residual (CalibrationOptions::residuals).
  std::vector<std::string> config_sets;
  std::string compute_dtype;  // empty: the graph's
  std::string row;            // the (shape, dtype) it belongs to: rows are weighted equally
  std::string origin;         // where it was read ("FILE: timings[3]"), for messages
  double measured_s = 0;
};

// What the fit minimizes (docs/planner.md, "Calibration").
enum class CalibrationObjective {
  // The times: the squared log error of the estimates near each row's best (the default).
  kTime,
  // The ranking: per row, the expected log slowdown against the measured best of a configuration
  // drawn with weights exp(-log(estimate / fastest estimate) / rank_temperature) (a softened
  // top-1), plus time_weight x the squared log error of the estimates.
  kRank,
};

struct CalibrationOptions {
  CalibrationObjective objective = CalibrationObjective::kTime;
  double rank_temperature = 0.03;
  double time_weight = 0.05;
  // The terms to fit, as term_origins names them ("clock_mhz", "l2_bandwidth_gbps",
  // "peak.f16"); empty: every term the ranking uses for this graph except the DRAM bandwidth
  // (ResolveModelTerms), plus the peak of each compute dtype in the samples.
  std::vector<std::string> terms;
  // Only configurations measured within this factor of their row's best enter the fit: the top
  // of the ranking is what the planner is for.
  double near_best = 1.5;
  // Each term moves within [1/range, range] times its starting value.
  double range = 4.0;
  int passes = 4;
  // Pulls each term towards its starting value: loss + weight x sum of log(factor)^2.
  double regularization = 0.002;
  // False: fit no term (the device's terms stand; with `residuals`, only those are learned).
  bool fit_terms = true;
  // Also learn each configuration's residual: per row, measured / estimated (with the fitted
  // terms) over the row's median; per configuration (config_sets and compute dtype), the median
  // over the rows it was timed in, kept where that is at least residual_min_rows rows.
  bool residuals = false;
  int residual_min_rows = 2;
  // The configuration parameters a residual is keyed by (empty: all of config_sets): leaving one
  // out pools the configurations that differ only in it.
  std::vector<std::string> residual_params;
};

struct TermFit {
  std::string term;
  double before = 0;  // the device's value (or the planner's stand-in)
  double after = 0;
  bool was_assumed = false;  // the device model gave none: `before` is the stand-in
};

// How well the estimates match and rank, before and after.
struct CalibrationQuality {
  double log_rms = 0;        // sqrt(mean over rows of mean over samples of log(estimate / measured)^2)
  double expected_regret = 0;  // mean over rows of the softened top-1's log slowdown (kRank)
  int rows = 0;
  int top1_within_10 = 0;    // rows whose top-1 (among measured configurations) is within 10% of the best
  int best_in_top5 = 0;
};

struct CalibrationResult {
  std::vector<TermFit> terms;
  CalibrationQuality before, after;
  int samples_estimated = 0; // fit the device and have an estimate (the ranking objective uses them all)
  int samples_used = 0;      // of those, within near_best of their row's best (the time error)
  int samples_total = 0;
  DeviceModel calibrated;    // `device` with the fitted terms (term_origins not updated)
  // With CalibrationOptions::residuals: one per configuration (graph set by the caller's graph),
  // and how the fitted terms and the residuals together rank the samples they were learned on.
  std::vector<ConfigResidual> residuals;
  CalibrationQuality with_residuals;
};

// Fits `options.terms` of `device` to `samples` of `graph` (a compiled graph; every sample binds
// its parameters). A sample whose configuration does not fit or spills on the device, or gets no
// estimate, is left out. Errors: no usable sample, an unknown term.
absl::StatusOr<CalibrationResult> Calibrate(const CompiledGraph& graph, const DeviceModel& device,
                                            const std::vector<CalibrationSample>& samples,
                                            const CalibrationOptions& options);

// Why a calibration is unfit to write, each as a sentence (empty: none). It ranks its own
// timings worse than the device model did (a higher expected top-1 slowdown: the planner is for
// the ranking), or it sets a term the hardware documents beyond that figure: a clock above the
// model's boost clock, a peak above its datasheet peak, a bandwidth above its memory's (the
// device's own value is the documented one; a stand-in documents nothing).
struct CalibrationProblems {
  bool ranks_worse = false;
  std::vector<std::string> beyond_documented;  // the terms set beyond their documented figure
  std::vector<std::string> sentences;          // each problem, with its figures
};
CalibrationProblems FindCalibrationProblems(const CalibrationResult& result);

// The calibration as a device model file: `name` inherits `device`, and sets the fitted terms,
// each with a "# source:" comment naming `provenance` (the timing files, their device and date)
// and the value it replaced. `command` is the command line that made it, `date` when. Text from
// outside (provenance, command, the display name) is written C-escaped (absl::CHexEscape).
std::string CalibrationTextproto(const DeviceModel& device, const CalibrationResult& result, const std::string& name,
                                 const std::string& provenance, const std::string& command, const std::string& date);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_PLANNER_CALIBRATION_H_
