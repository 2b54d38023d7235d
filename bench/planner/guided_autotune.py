"""Planner-guided autotuning against exhaustive autotuning on the workload suite (issue 34):
what scratchsim.triton.early_prune(top_k=K) saves and what it loses.

    python3 bench/planner/guided_autotune.py PLANS.json TIMINGS.json [TIMINGS.json ...] [--k 1,3,5,10]
        [--lower-cost-s S]

Exhaustive: Triton's autotuner compiles and benchmarks every configuration that compiles; its
cost per row is the sum of the recorded compile seconds (compile plus first launch, in the sweep's
worker pool on the GPU machine) and benchmark seconds (do_bench, 3 ms warm-up and 10 ms of
repetitions; Triton's autotuner defaults to 25 and 100, so its benchmarks cost about 9x these).
Guided: early_prune lowers configurations in the planner's autotuning shortlist's order (the plan's
"shortlist" where it records one; with --ranking, or in an older plan file, the ranking's) until K
fit and keeps those, so
the autotuner compiles and benchmarks K; its cost adds early_prune's own lowering (K
configurations at --lower-cost-s each; measure it with --measure-lowering on the machine at hand).
The winner is the fastest measured configuration among those kept; its slowdown is against the
exhaustive winner (the measured best of the row's whole space).
"""
import argparse
import statistics
import sys
import time

from judge_workloads import KIND_OF_FAMILY, cfg_key, load, measured, row_key
from workloads import PARTS


def measure_lowering(n):
    """Seconds early_prune spends lowering one matmul configuration for sm_90 here (median of n)."""
    import os
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    import scratchsim.triton as sst
    import triton_kernels as tk
    seconds = []
    for i, cfg in enumerate(tk.matmul_configs()[:n]):
        t0 = time.perf_counter()
        sst.lower(tk.matmul_kernel, cfg, tk.MATMUL_SIGNATURE, "sm_90", num_warps=cfg.num_warps,
                  num_stages=cfg.num_stages)
        seconds.append(time.perf_counter() - t0)
    return statistics.median(seconds)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("plans")
    p.add_argument("timings", nargs="+")
    p.add_argument("--k", default="1,3,5,10")
    p.add_argument("--lower-cost-s", type=float, default=None)
    p.add_argument("--measure-lowering", type=int, default=0)
    p.add_argument("--ranking", action="store_true", help="take the ranking's order even where a shortlist is recorded")
    args = p.parse_args()
    lower_s = args.lower_cost_s
    if args.measure_lowering:
        lower_s = measure_lowering(args.measure_lowering)
        print(f"early_prune lowering: {lower_s:.3f} s per configuration (median of {args.measure_lowering})")
    lower_s = lower_s or 0.0
    plans = load(args.plans)
    m = measured(args.timings)
    # The plain matmul's timed configurations per row (the suite times the split-K family beside).
    times = {rk: {ck: ms for ck, ms in row.items() if ck[0] == "matmul"} for rk, row in m.times.items()}

    def cost(rk, ck):
        """An autotuner's seconds for one configuration: its compile, then its benchmark."""
        return m.compile_s.get((rk[-1], None, None), {}).get(ck, 0.0) + m.bench_s[rk][ck]

    ks = [int(k) for k in args.k.split(",")]
    for part in PARTS:
        rows = [r for r in plans["matmul"] if r["part"] == part and times.get(row_key(r))]
        if not rows:
            continue
        exhaustive = [sum(cost(row_key(r), ck) for ck in times[row_key(r)]) for r in rows]
        print(f"{part}: {len(rows)} rows; exhaustive autotuning {statistics.median(exhaustive):.1f} s per row "
              f"(median; {len(times[row_key(rows[0])])} configurations)")
        for k in ks:
            costs, slow = [], []
            for r in rows:
                rk = row_key(r)
                order = r["ranking"] if args.ranking else r.get("shortlist", r["ranking"])
                kept = [cfg_key(KIND_OF_FAMILY[f], prm) for f, prm, _ in order
                        if cfg_key(KIND_OF_FAMILY[f], prm) in times[rk]][:k]
                costs.append(sum(cost(rk, ck) for ck in kept) + k * lower_s)
                slow.append(min(times[rk][ck] for ck in kept) / min(times[rk].values()))
            within3 = sum(s <= 1.03 for s in slow)
            within10 = sum(s <= 1.10 for s in slow)
            saving = statistics.median(e / c for e, c in zip(exhaustive, costs))
            print(f"  top_k={k:2}: {statistics.median(costs):5.1f} s per row (median), {saving:5.1f}x less; winner within 3% "
                  f"on {within3}/{len(rows)}, within 10% on {within10}/{len(rows)}, worst {max(slow):.2f}x")


if __name__ == "__main__":
    main()
