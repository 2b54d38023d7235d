"""Measured over modelled time (the residual) of the f32 Triton matmul tiles that decide the f32
top 5 (docs/validation/planner-h200-workloads.md, "The f32 32-row tiles: L2 delivery"), on the fit
data only: the H100 sweeps (sweeps 1-7 and the fresh shapes) and the workload suite's fit part.
Per row: each tile's time over the row's measured best, its residual and its model rank.

    python3 bench/planner/f32_residuals.py build/simulate [--min-m 1000]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from judge_workloads import load  # noqa: E402
from make_workload_plans import ROOT, plan  # noqa: E402

DATA = os.path.join(ROOT, "tests", "data", "planner")
FIT = [("h100", f"planner-h100-triton-sweep{s}.json.gz", None) for s in ["", "-2", "-3", "-4", "-5", "-6", "-7"]] + [
    ("h100", "h100-fresh-2026-11-26/triton-sweep.json.gz", None),
    ("h200", "h200-workloads-2026-11-29/h200-f32.json.gz", "fit")]
TILES = [(32, 256, 32, 3, 4), (32, 128, 32, 4, 4), (32, 256, 64, 4, 4), (256, 128, 32, 4, 8)]
NAMES = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "NUM_STAGES", "NUM_WARPS")


def fit_rows(min_m):
    """{(device, M, N, K): {config tuple: ms}} of the f32 plain-matmul timings (repeats: the last)."""
    rows = {}
    for device, path, part in FIT:
        for t in load(os.path.join(DATA, path))["timings"]:
            if t.get("dtype") != "f32" or "ms" not in t or t.get("kind", "matmul") != "matmul":
                continue
            if (part and t.get("part") != part) or t["M"] < min_m or set(t["config"]) != set(NAMES):
                continue
            rows.setdefault((device, t["M"], t["N"], t["K"]), {})[tuple(t["config"][n] for n in NAMES)] = t["ms"]
    return rows


def main():
    p = argparse.ArgumentParser()
    p.add_argument("binary")
    p.add_argument("--min-m", type=int, default=1000, help="rows with M below this are left out (decode)")
    args = p.parse_args()
    print("device  M x N x K             " + "  ".join(f"{'/'.join(map(str, t)):>20}" for t in TILES))
    print(" " * 30 + "  ".join(f"{'time/best res #rank':>20}" for _ in TILES))
    for (device, m, n, k), times in sorted(fit_rows(args.min_m).items()):
        ranked = plan(args.binary, device, ["models/graphs/triton_matmul.pbtxt"],
                      {"M": m, "N": n, "K": k, "ELT": 4}, compute_dtype="tf32")["configs"]
        model = {tuple(c["params"][x] for x in NAMES): (i + 1, c["estimated_us"]) for i, c in enumerate(ranked)}
        best = min(times.values())
        cells = []
        for t in TILES:
            if t in times and t in model:
                cells.append(f"{times[t] / best:5.2f} {times[t] * 1e3 / model[t][1]:5.2f} #{model[t][0]:<4}")
            else:
                cells.append(" " * 17)
        print(f"{device:7} {m:6} x {n:6} x {k:6}  " + "  ".join(f"{c:>20}" for c in cells))


if __name__ == "__main__":
    main()
