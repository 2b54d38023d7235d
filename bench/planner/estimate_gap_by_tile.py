"""The measured time over the estimate of every timed Triton matmul configuration, by tile shape.

    python3 bench/planner/estimate_gap_by_tile.py PLANS.json TIMINGS.json [TIMINGS.json ...] \
        [--tokens 16] [--wide-n 16384]

PLANS.json: make_workload_plans.py's file (each row's whole ranking with its estimates, in us);
TIMINGS.json: sweep_workloads.py's files of the same rows. For the rows of M = --tokens whose N a
16 divides, groups the configurations by (dtype, rows of N >= --wide-n or not, BLOCK_M, BLOCK_N)
and prints the median and 10th-90th percentiles of measured / estimated time (docs/planner.md,
"Co-resident blocks and the mma.sync wait": the 16-token f16 rows' narrow tiles). Several plan
files (parts) may be given as PLANS,PLANS,... with their timings after them.

    python3 bench/planner/estimate_gap_by_tile.py - TIMINGS.json [...] --a-heavy-rates

instead prints, per timing file, the L2 traffic rate (grid x (BLOCK_M + BLOCK_N) x K x 2 bytes /
time) of the wide 16-token f16 rows' configurations with BLOCK_M >= 4 x BLOCK_N: median and most.

    python3 bench/planner/estimate_gap_by_tile.py - TIMINGS.json [...] --tile-cost

instead prints, over the wide 16-token f16 rows of all the files, each (BLOCK_M, BLOCK_N, BLOCK_K)'s
time (its fastest depth and warps) over its row's best, median, beside the tile bytes it moves
through L2 in multiples of B's (1 + BLOCK_M / BLOCK_N).
"""
import argparse
import collections
import math
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


def a_heavy_rates(path, tokens, wide_n):
    """Median and most L2 traffic, TB/s, of the file's A-heavy configurations on wide f16 rows."""
    rates = []
    for r in load(path)["timings"]:
        c = r.get("config", {})
        if (r.get("kind", "matmul") != "matmul" or not r.get("ms") or r["M"] != tokens or r["N"] < wide_n
                or r["dtype"] != "f16" or c["BLOCK_M"] < 4 * c["BLOCK_N"]):
            continue
        grid = math.ceil(r["M"] / c["BLOCK_M"]) * math.ceil(r["N"] / c["BLOCK_N"])
        rates.append(grid * (c["BLOCK_M"] + c["BLOCK_N"]) * r["K"] * 2 / (r["ms"] * 1e-3) / 1e12)
    return (statistics.median(rates), max(rates)) if rates else None


def tile_cost(timing_files, tokens, wide_n):
    rows = collections.defaultdict(dict)
    for key, us in measured(timing_files).items():
        m, n, k, dtype, bm, bn, bk = key[:7]
        if m == tokens and n >= wide_n and dtype == "f16":
            rows[(m, n, k)][(bm, bn, bk)] = min(us, rows[(m, n, k)].get((bm, bn, bk), math.inf))
    ratios = collections.defaultdict(list)
    for tiles in rows.values():
        best = min(tiles.values())
        for tile, us in tiles.items():
            ratios[tile].append(us / best)
    print(f"{len(rows)} rows\nBLOCK_K BLOCK_M BLOCK_N  rows  time / row's best (median)  L2 bytes / B's")
    for bm, bn, bk in sorted(ratios, key=lambda t: (t[2], t[0], t[1])):
        values = ratios[(bm, bn, bk)]
        print(f"{bk:7d} {bm:7d} {bn:7d} {len(values):5d} {statistics.median(values):27.2f} {1 + bm / bn:15.2f}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("plans", help="one plan file, or several separated by commas")
    p.add_argument("timings", nargs="+")
    p.add_argument("--tokens", type=int, default=16, help="the rows' M")
    p.add_argument("--wide-n", type=int, default=16384, help="N from which a row counts as wide")
    p.add_argument("--a-heavy-rates", action="store_true", help="the A-heavy tiles' L2 rates instead (PLANS: -)")
    p.add_argument("--tile-cost", action="store_true", help="each tile's time over its row's best instead (PLANS: -)")
    args = p.parse_args()
    if args.tile_cost:
        tile_cost(args.timings, args.tokens, args.wide_n)
        return
    if args.a_heavy_rates:
        for path in args.timings:
            figures = a_heavy_rates(path, args.tokens, args.wide_n)
            print(f"{path}: " + ("no such configurations" if figures is None else
                                 f"median {figures[0]:.2f} TB/s, most {figures[1]:.2f} TB/s"))
        return
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
