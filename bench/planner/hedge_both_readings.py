"""An autotuning shortlist that hedges both readings of the mma.sync wait (an experiment, issue 34).

    python3 bench/planner/hedge_both_readings.py PLANNER.json VARIANT.json OUT.json [--variant-first N]

PLANNER.json and VARIANT.json: make_workload_plans.py's files for the same rows, one from the
planner as it stands (every block's mma.sync wait added) and one from the closed-network variant
(co-resident blocks share the wait: tests/data/planner/h200-heldout23-2026-12-04/README.md, built with
SS_FILL=1). Writes VARIANT.json with each matmul row's shortlist replaced by the variant's first N
ranked configurations (default 2) followed by the planner's shortlist, duplicates dropped, five in
all: the pick is the variant's, and the rest covers a device whose co-resident blocks do not fill
the wait (docs/validation/planner-h200-workloads.md, "Both readings in one shortlist"). Judge the
result with `judge_workloads.py OUT.json TIMINGS... --shortlist`.
"""
import argparse
import json
import sys

from compare_plan import load_json as load

SHORTLIST_LENGTH = 5


def row_key(row):
    return row["M"], row["N"], row["K"], row["dtype"]


def config_key(entry):
    """A ranked entry ([family, config, time]) by its family and configuration."""
    return entry[0], json.dumps(entry[1], sort_keys=True)


def hedged_shortlist(variant_ranking, planner_shortlist, variant_first):
    """The variant's first `variant_first` configurations, then the planner's shortlist, then the
    rest of the variant's ranking; each once, SHORTLIST_LENGTH in all."""
    out, seen = [], set()
    for entry in variant_ranking[:variant_first] + planner_shortlist + variant_ranking[variant_first:]:
        if config_key(entry) not in seen:
            seen.add(config_key(entry))
            out.append(entry)
    return out[:SHORTLIST_LENGTH]


def hedge(planner, variant, variant_first):
    """VARIANT's plans with every matmul row's shortlist hedged by PLANNER's row of the same shape
    and dtype; a row PLANNER lacks is an error (the two files must plan the same rows)."""
    by_row = {row_key(r): r for r in planner["matmul"]}
    out = dict(variant)
    out["matmul"] = []
    for row in variant["matmul"]:
        if row_key(row) not in by_row:
            raise KeyError(f"{row_key(row)}: in the variant's plans, not in the planner's")
        hedged = dict(row)
        hedged["shortlist"] = hedged_shortlist(row["ranking"], by_row[row_key(row)]["shortlist"], variant_first)
        out["matmul"].append(hedged)
    out["shortlist_rule"] = f"the variant's first {variant_first}, then the planner's shortlist"
    return out


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("planner")
    p.add_argument("variant")
    p.add_argument("out")
    p.add_argument("--variant-first", type=int, default=2)
    args = p.parse_args(argv)
    if not 1 <= args.variant_first <= SHORTLIST_LENGTH:
        p.error(f"--variant-first: {args.variant_first} is not between 1 and {SHORTLIST_LENGTH}")
    try:
        hedged = hedge(load(args.planner), load(args.variant), args.variant_first)
    except KeyError as e:
        sys.exit(f"hedge_both_readings.py: {args.variant}: {e.args[0]}")
    with open(args.out, "w") as f:
        json.dump(hedged, f)


if __name__ == "__main__":
    main(sys.argv[1:])
