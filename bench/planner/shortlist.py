"""Measures, on the workload suite's fit part, what the planner's autotuning shortlist rests on
(issue 34; docs/planner.md, "The autotuning shortlist"): each family's ranking error, and whether
its errors lie between block shapes (which the shortlist hedges) or within them.

    python3 bench/planner/shortlist.py PLANS.json TIMINGS.json [TIMINGS.json ...] --out BANDS.json

PLANS.json: make_workload_plans.py's file ranking the fit part (without --part); TIMINGS.json: the
fit part's timings. Per family and dtype:

* the ranking error (a graph's ranking_error_permille): over each fit row's 20 best-ranked timed
  configurations, |log(measured / measured of the pick) - log(estimate / estimate of the pick)|,
  its 90th percentile: the error the model's estimate of a gap between two configurations
  exceeds one time in ten;
* where the error lies: over each fit row's 40 best-ranked timed configurations, the spread
  (root mean square) of log(measured / estimate) about its block shape's mean (within a block
  shape: depths, warps, split-K) and of the block shapes' means about the row's (between). On the
  H200 fit part it does not separate the families the shortlist helps from the one it does not
  (docs/planner.md), so which family hedges is decided by the shortlist's top 5 on the fit part.

The planner (sim/planner/planner.cc, ShortlistCandidates) applies the rule; this tool measures its
inputs. The thirteenth held-out part judged the rule blind (tests/data/planner/h200-heldout13-*).
"""
import argparse
import collections
import json
import math

from compare_plan import load_json as load
from judge_workloads import KIND_OF_FAMILY, cfg_key, measured, row_key

DEPTH = 20         # configurations of a fit row whose estimated gaps are compared with measured ones
SPREAD_DEPTH = 40  # configurations of a fit row whose errors are split by block shape
QUANTILE = 0.9


def dtype_of(row):
    return row.get("dtype", "f16")  # attention rows are f16 only


def block_shape(config):
    return tuple(sorted((k, v) for k, v in config.items() if k.startswith("BLOCK_")))


def fit_rows(plans, times):
    """(family, dtype, [(config, estimate, measured)] in rank order) per fit row timed."""
    for section in ("matmul", "attention"):
        for r in plans.get(section, []):
            rk = row_key(r)
            if r["part"] != "fit" or rk not in times:
                continue
            timed = [(p, est, times[rk][cfg_key(KIND_OF_FAMILY[f], p)]) for f, p, est in r["ranking"]
                     if cfg_key(KIND_OF_FAMILY[f], p) in times[rk]]
            if len(timed) >= 2:
                yield r["ranking"][0][0], dtype_of(r), timed


def ranking_error(rows, quantile=QUANTILE, depth=DEPTH):
    """{(family, dtype): band}."""
    errors = collections.defaultdict(list)
    for family, dtype, timed in rows:
        _, pick_est, pick_ms = timed[0]
        for _, est, ms in timed[1:depth]:
            errors[(family, dtype)].append(abs(math.log(ms / pick_ms) - math.log(est / pick_est)))
    return {key: math.exp(sorted(e)[min(len(e) - 1, int(quantile * len(e)))]) - 1 for key, e in errors.items()}


def error_spread(rows, depth=SPREAD_DEPTH):
    """{(family, dtype): (within a block shape, between block shapes)}, root mean squares of log errors."""
    within, between = collections.defaultdict(list), collections.defaultdict(list)
    for family, dtype, timed in rows:
        errors = [(block_shape(p), math.log(ms / est)) for p, est, ms in timed[:depth]]
        row_mean = sum(e for _, e in errors) / len(errors)
        by_shape = collections.defaultdict(list)
        for shape, e in errors:
            by_shape[shape].append(e - row_mean)
        for es in by_shape.values():
            mean = sum(es) / len(es)
            between[(family, dtype)].append(mean * mean)
            within[(family, dtype)].extend((e - mean) ** 2 for e in es)
    return {key: (math.sqrt(sum(within[key]) / len(within[key])), math.sqrt(sum(between[key]) / len(between[key])))
            for key in within}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("plans")
    p.add_argument("timings", nargs="+")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    plans = load(args.plans)
    rows = list(fit_rows(plans, measured(args.timings).times))
    bands, spread = ranking_error(rows), error_spread(rows)
    doc = {"commit": plans.get("commit"), "quantile": QUANTILE, "depth": DEPTH, "spread_depth": SPREAD_DEPTH,
           "bands": [{"family": f, "dtype": d, "band": round(b, 4), "spread_within_block_shape": round(spread[(f, d)][0], 4),
                      "spread_between_block_shapes": round(spread[(f, d)][1], 4)}
                     for (f, d), b in sorted(bands.items())]}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    for b in doc["bands"]:
        print(f"{b['family']:18} {b['dtype']}: ranking error {b['band']:.3f}; log error spread within a block shape "
              f"{b['spread_within_block_shape']:.3f}, between block shapes {b['spread_between_block_shapes']:.3f}")


if __name__ == "__main__":
    main()
