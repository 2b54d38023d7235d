"""Judges rankings made before measuring (make_transfer_plans.py) against the timings taken
afterwards (sweep_triton_matmul.py, `scratchsim_cuda gemm-timing`): per (shape, dtype) row, the
measured time of the planner's top-1 against the measured best, whether the measured best is in
the planner's first five, and Spearman's rank correlation over every configuration both ranked
and measured. Prints Markdown (docs/validation/planner-h200-transfer.md) and a summary against
issue 19's targets: top-1 within 10% on >= 90% of the rows, best in the top 5 on >= 80%.

    python3 bench/planner/compare_transfer.py PLANS.json --triton SWEEP.json [--triton SWEEP2.json] \
        --cuda-gemm TIMING.json [--tolerance 0.003] [--json OUT.json]

"Top-1" and "top 5" are the first ranked configurations that were measured (the planner ranks
those that fit and do not spill by its estimate; Triton may refuse a few it ranks). A measured time
within --tolerance of the best counts as a best too (gemm-timing's run-to-run spread is 0.3%,
docs/validation/planner-h100.md).
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_plan import load_json, spearman  # noqa: E402

NAMES = ["BLOCK_M", "BLOCK_N", "BLOCK_K", "NUM_STAGES", "NUM_WARPS"]
TOP1_TARGET, TOP5_TARGET = 0.90, 0.80


def measured_rows(sweep):
    rows = {}
    for t in sweep["timings"]:
        if "ms" not in t:
            continue
        key = (t["dtype"], t["M"], t["N"], t["K"])
        rows.setdefault(key, {})[tuple(t["config"][n] for n in NAMES)] = t["ms"]
    return rows


def judge(plan_rows, sweep, tolerance):
    measured = measured_rows(sweep)
    out = []
    for row in plan_rows:
        key = (row["dtype"], row["M"], row["N"], row["K"])
        if key not in measured:
            continue
        times = measured[key]
        ranked = [tuple(r[:5]) for r in row["ranking"]]
        predicted = {tuple(r[:5]): r[5] for r in row["ranking"]}
        both = [k for k in ranked if k in times and predicted[k] is not None]
        if not both:
            continue
        best_ms = min(times.values())
        bests = {k for k, ms in times.items() if ms <= best_ms * (1 + tolerance)}
        top5 = both[:5]
        best_rank = next((i + 1 for i, k in enumerate(both) if k in bests), None)
        out.append({
            "dtype": row["dtype"], "shape": f"{row['M']}x{row['N']}x{row['K']}", "measured": len(times),
            "ranked": len(both), "best": min(times, key=times.get), "best_ms": best_ms, "top1": both[0],
            "top1_ms": times[both[0]], "top1_vs_best": times[both[0]] / best_ms,
            "best_in_top5": any(k in bests for k in top5), "best5_vs_best": min(times[k] for k in top5) / best_ms,
            # What planner-guided autotuning (scratchsim.triton.early_prune(top_k=10)) would pick:
            # the fastest measured of the planner's first ten.
            "best10_vs_best": min(times[k] for k in both[:10]) / best_ms,
            "best_rank": best_rank,
            "spearman": spearman([predicted[k] for k in both], [times[k] for k in both]),
            "tflops": 2.0 * row["M"] * row["N"] * row["K"] / (best_ms * 1e-3) / 1e12,
        })
    return out


def table(title, rows):
    fmt = lambda k: "/".join(str(x) for x in k)  # noqa: E731
    lines = [f"### {title}", "",
             "| dtype | shape | timed / ranked | measured best (BM/BN/BK/stages/warps) | best ms (TFLOP/s) | planner top-1 "
             "| top-1 vs best | best in top 5 | best of top 5 vs best | rank of best | Spearman |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['dtype']} | {r['shape']} | {r['measured']} / {r['ranked']} | {fmt(r['best'])} | "
                     f"{r['best_ms']:.4f} ({r['tflops']:.0f}) | {fmt(r['top1'])} | {r['top1_vs_best']:.3f}x | "
                     f"{'yes' if r['best_in_top5'] else 'no'} | {r['best5_vs_best']:.3f}x | "
                     f"{r['best_rank'] if r['best_rank'] else '-'} | {r['spearman']:.2f} |")
    if rows:
        top1 = sum(r["top1_vs_best"] <= 1.10 for r in rows)
        top5 = sum(r["best_in_top5"] for r in rows)
        rhos = [r["spearman"] for r in rows]
        top10 = sum(r["best10_vs_best"] <= 1.03 for r in rows)
        lines += ["", f"{len(rows)} rows: top-1 within 10% on {top1}, best in the top 5 on {top5}, the best of the top 10 "
                  f"within 3% of the best on {top10}; Spearman "
                      f"{min(rhos):.2f} to {max(rhos):.2f} (median {sorted(rhos)[len(rhos) // 2]:.2f})."]
    return lines


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("plans")
    parser.add_argument("--triton", action="append", default=None,
                        help="sweep_triton_matmul.py output (repeat it to join sweeps of other dtypes or shapes)")
    parser.add_argument("--cuda-gemm", default=None, help="scratchsim_cuda gemm-timing output")
    parser.add_argument("--tolerance", type=float, default=0.0)
    parser.add_argument("--json", default=None, help="also write every row here")
    args = parser.parse_args()
    plans = load_json(args.plans)
    calibration = plans.get("calibration")
    if isinstance(calibration, dict):  # per kernel (make_transfer_plans.py --calibration KERNEL=FILE)
        calibration = ", ".join(f"{k}: {v}" for k, v in sorted(calibration.items()))
    lines = [f"Plans: `{os.path.basename(args.plans).removesuffix('.gz')}` (device {plans['device']}, commit {plans['commit'][:12]}, "
             f"made {plans['date']}{', calibration ' + calibration if calibration else ''})."]
    every = []
    for kernel, paths in (("triton", args.triton or []), ("cuda_gemm", [args.cuda_gemm] if args.cuda_gemm else [])):
        if not paths:
            continue
        sweeps = [load_json(p) for p in paths]
        sweep = {"timings": [t for one in sweeps for t in one["timings"]]}
        rows = judge(plans["kernels"][kernel]["rows"], sweep, args.tolerance)
        for one, p in zip(sweeps, paths):
            lines += ["", f"Timings: `{os.path.basename(p).removesuffix('.gz')}`, {one.get('device')}, {one.get('date')}."]
        lines += [""]
        lines += table("Triton matmul" if kernel == "triton" else "CUDA backend's GEMM", rows)
        for r in rows:
            r["kernel"] = kernel
        every += rows
    if every:
        n = len(every)
        top1 = sum(r["top1_vs_best"] <= 1.10 for r in every)
        top5 = sum(r["best_in_top5"] for r in every)
        lines += ["", f"All {n} rows: top-1 within 10% on {top1} ({100.0 * top1 / n:.0f}%, target >= "
                      f"{100 * TOP1_TARGET:.0f}%: {'met' if top1 >= TOP1_TARGET * n else 'not met'}), best in the "
                      f"top 5 on {top5} ({100.0 * top5 / n:.0f}%, target >= {100 * TOP5_TARGET:.0f}%: "
                      f"{'met' if top5 >= TOP5_TARGET * n else 'not met'})."]
    print("\n".join(lines))
    if args.json:
        for r in every:
            r["best"], r["top1"] = list(r["best"]), list(r["top1"])
        with open(args.json, "w") as f:
            json.dump(every, f, indent=1)


if __name__ == "__main__":
    main()
