"""The autotuning shortlist hedged across block shapes (issue 34), as a rule a plan file's rankings
can be reordered by, written before the thirteenth held-out part was timed.

    python3 bench/planner/shortlist.py PLANS.json TIMINGS.json [TIMINGS.json ...] --out BANDS.json

The rule. A ranking's first k configurations are what a guided autotune (early_prune top_k) times.
Ranked by estimate alone they are often one block shape at several depths and warp counts, and
where the model misjudges that block shape (an L2 or latency term it lacks) all k miss together.
So the shortlist keeps the model's pick first, then takes, in the order of their estimates, the
fastest configuration of each block shape (its BLOCK_* values) not yet listed whose estimate is
within the band of the pick's, then the rest of the ranking by estimate. The band is the model's
own ranking error, measured on the suite's fit part only: over each fit row's 20 best-ranked timed
configurations, |log(measured / measured of the pick) - log(estimate / estimate of the pick)|, its
90th percentile per family and dtype (the error the model's estimate of a gap between two
configurations exceeds one time in ten). PLANS.json must rank the fit part (make_workload_plans.py
without --part); TIMINGS.json are the fit part's timings.

bench/planner/judge_workloads.py --bands BANDS.json judges the shortlist in place of the ranking.
"""
import argparse
import collections
import json
import math

from compare_plan import load_json as load
from judge_workloads import KIND_OF_FAMILY, cfg_key, measured, row_key

DEPTH = 20        # configurations of a fit row whose estimated gaps are compared with measured ones
QUANTILE = 0.9


def dtype_of(row):
    return row.get("dtype", "f16")  # attention rows are f16 only


def block_shape(config):
    return tuple(sorted((k, v) for k, v in config.items() if k.startswith("BLOCK_")))


def ranking_error(plans, times, quantile=QUANTILE, depth=DEPTH):
    """{(family, dtype): band} over the fit part's rows of `plans` that `times` has."""
    errors = collections.defaultdict(list)
    for section in ("matmul", "attention"):
        for r in plans.get(section, []):
            rk = row_key(r)
            if r["part"] != "fit" or rk not in times:
                continue
            timed = [(f, p, est) for f, p, est in r["ranking"] if cfg_key(KIND_OF_FAMILY[f], p) in times[rk]]
            if len(timed) < 2:
                continue
            pick_f, pick, pick_est = timed[0]
            pick_ms = times[rk][cfg_key(KIND_OF_FAMILY[pick_f], pick)]
            for f, p, est in timed[1:depth]:
                ms = times[rk][cfg_key(KIND_OF_FAMILY[f], p)]
                errors[(pick_f, dtype_of(r))].append(abs(math.log(ms / pick_ms) - math.log(est / pick_est)))
    bands = {}
    for key, e in errors.items():
        e.sort()
        bands[key] = math.exp(e[min(len(e) - 1, int(quantile * len(e)))]) - 1
    return bands


def hedged(ranking, band):
    """The ranking reordered as the shortlist: the pick, then each further block shape's fastest
    configuration within `band` of the pick's estimate, then the rest by estimate."""
    if not ranking:
        return ranking
    first, seen, rest = [ranking[0]], {block_shape(ranking[0][1])}, []
    limit = ranking[0][2] * (1 + band)
    for entry in ranking[1:]:
        shape = block_shape(entry[1])
        if entry[2] <= limit and shape not in seen:
            seen.add(shape)
            first.append(entry)
        else:
            rest.append(entry)
    return first + rest


def load_bands(path):
    with open(path) as f:
        doc = json.load(f)
    return {(b["family"], b["dtype"]): b["band"] for b in doc["bands"]}


def reorder(plans, bands):
    """Every row's ranking of `plans` replaced by its shortlist (rows of a family and dtype without
    a band keep their ranking)."""
    for section in ("matmul", "attention"):
        for r in plans.get(section, []):
            if r["ranking"]:
                band = bands.get((r["ranking"][0][0], dtype_of(r)))
                if band is not None:
                    r["ranking"] = hedged(r["ranking"], band)
    return plans


def main():
    p = argparse.ArgumentParser()
    p.add_argument("plans")
    p.add_argument("timings", nargs="+")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    plans = load(args.plans)
    bands = ranking_error(plans, measured(args.timings).times)
    doc = {"commit": plans.get("commit"), "quantile": QUANTILE, "depth": DEPTH,
           "bands": [{"family": f, "dtype": d, "band": round(b, 4)} for (f, d), b in sorted(bands.items())]}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    for b in doc["bands"]:
        print(f"{b['family']:18} {b['dtype']}: band {b['band']:.3f}")


if __name__ == "__main__":
    main()
