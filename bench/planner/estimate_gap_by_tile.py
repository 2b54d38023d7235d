"""The measured time over the estimate of every timed Triton matmul configuration, by tile shape.

    python3 bench/planner/estimate_gap_by_tile.py PLANS.json TIMINGS.json [TIMINGS.json ...] \
        [--tokens 16] [--wide-n 16384]

PLANS.json: make_workload_plans.py's file (each row's whole ranking with its estimates, in us);
TIMINGS.json: sweep_workloads.py's files of the same rows. For the rows of M = --tokens whose N a
16 divides, groups the configurations by (dtype, rows of N >= --wide-n or not, BLOCK_M, BLOCK_N)
and prints the median and 10th-90th percentiles of measured / estimated time (docs/planner.md,
"Co-resident blocks and the mma.sync wait": the 16-token f16 rows' narrow tiles). Several plan
files (parts) may be given as PLANS,PLANS,... with their timings after them.
"""
import argparse
import collections
import statistics

from compare_plan import load_json as load


def measured(timing_files):
    out = {}
    for path in timing_files:
        for r in load(path)["timings"]:
            if r.get("kind", "matmul") != "matmul" or not r.get("ms"):
                continue
            c = r["config"]
            out[(r["M"], r["N"], r["K"], r["dtype"], c["BLOCK_M"], c["BLOCK_N"], c["BLOCK_K"], c["NUM_STAGES"],
                 c["NUM_WARPS"])] = r["ms"] * 1000
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("plans", help="one plan file, or several separated by commas")
    p.add_argument("timings", nargs="+")
    p.add_argument("--tokens", type=int, default=16, help="the rows' M")
    p.add_argument("--wide-n", type=int, default=16384, help="N from which a row counts as wide")
    args = p.parse_args()
    times = measured(args.timings)
    ratios = collections.defaultdict(list)
    for plans in args.plans.split(","):
        for row in load(plans)["matmul"]:
            if row["M"] != args.tokens or row["N"] % 16:
                continue
            for family, cfg, estimate_us in row["ranking"]:
                key = (row["M"], row["N"], row["K"], row["dtype"], cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"],
                       cfg["NUM_STAGES"], cfg["NUM_WARPS"])
                if family == "triton_matmul" and key in times and estimate_us > 0:
                    ratios[(row["dtype"], row["N"] >= args.wide_n, cfg["BLOCK_M"], cfg["BLOCK_N"])].append(
                        times[key] / estimate_us)
    print("dtype  wide-N  BLOCK_M BLOCK_N  configs  measured/estimated: median (p10-p90)")
    for (dtype, wide, bm, bn), values in sorted(ratios.items()):
        values.sort()
        print(f"{dtype:5s}  {'yes' if wide else 'no':6s}  {bm:7d} {bn:7d}  {len(values):7d}  "
              f"{statistics.median(values):.2f} ({values[len(values) // 10]:.2f}-{values[9 * len(values) // 10]:.2f})")


if __name__ == "__main__":
    main()
