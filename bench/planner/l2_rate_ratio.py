"""Two GPUs' times of the same Triton matmul configurations, binned by the SMs' L2 delivery rate.

    python3 bench/planner/l2_rate_ratio.py SLOW.json.gz FAST.json.gz [...] --elt 4

SLOW and FAST: sweep_workloads.py files of the same rows (the H100's and the H200's timings of one
part). For every configuration timed in both, the rate at which the SMs receive its tiles on FAST
(grid x (BLOCK_M + BLOCK_N) x K x element bytes / time, TB/s) and SLOW's time over FAST's; prints
the ratio's median and 10th-90th percentiles per rate bin (docs/validation/planner-h200-workloads.md,
"Both readings in the planner"). Several SLOW files (repeat runs) are averaged per configuration.
"""
import argparse
import gzip
import json
import math
import statistics

BINS = (0, 2, 4, 6, 8, 9, 10, 11, 12, 14)


def load(path):
    with gzip.open(path, "rt") as f:
        data = json.load(f)
    out = {}
    for r in data["timings"]:
        if r.get("kind", "matmul") != "matmul" or not r.get("ms"):
            continue
        c = r["config"]
        out[(r["M"], r["N"], r["K"], c["BLOCK_M"], c["BLOCK_N"], c["BLOCK_K"], c["NUM_STAGES"], c["NUM_WARPS"])] = r["ms"]
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("files", nargs="+", help="SLOW files (one or more runs), then FAST last")
    p.add_argument("--elt", type=int, required=True, help="element bytes of the operands (2: f16, 4: f32)")
    args = p.parse_args()
    if len(args.files) < 2:
        p.error("give at least one SLOW file and the FAST file")
    slow_runs, fast = [load(f) for f in args.files[:-1]], load(args.files[-1])
    pairs = []
    for key, fast_ms in fast.items():
        slow = [run[key] for run in slow_runs if key in run]
        if len(slow) != len(slow_runs):
            continue
        M, N, K, bm, bn, _, _, _ = key
        tile_bytes = math.ceil(M / bm) * math.ceil(N / bn) * (bm + bn) * K * args.elt
        pairs.append((tile_bytes / (fast_ms * 1e-3) / 1e12, statistics.fmean(slow) / fast_ms))
    print(f"{len(pairs)} configurations timed on both")
    for lo, hi in zip(BINS, BINS[1:] + (math.inf,)):
        ratios = sorted(r for rate, r in pairs if lo <= rate < hi)
        if ratios:
            print(f"  {lo:>2}-{hi:<4} TB/s: {len(ratios):5d}  median {statistics.median(ratios):.3f}  "
                  f"p10 {ratios[len(ratios) // 10]:.3f}  p90 {ratios[9 * len(ratios) // 10]:.3f}")


if __name__ == "__main__":
    main()
