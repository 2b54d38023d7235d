#!/usr/bin/env python3
"""Judges measured configuration residuals (`simulate calibrate --residuals`) on timings they were
not learned from: on the H100 sweeps, leaving one sweep file out at a time (residuals learned on the
others, the left-out file's rows planned with them); and, learned on every H100 sweep, on other
devices' timings (the H200 transfer runs: `--device h200`). Each row is planned twice, without and
with the residuals, and judged as compare_transfer.py judges (top-1 within 10% of the measured
best; the best, within --tolerance, in the top 5).

    python3 bench/planner/residual_holdout.py build/simulate --kernel cuda_gemm \\
        --learn H100/planner-h100-cuda-gemm-timing-{1..13}.json \\
        --judge h200=docs/validation/data/planner/h200-transfer-2026-11-26/cuda-gemm-timing.json ... [--json OUT]

H100/ holds tests/data/planner's .json.gz gunzipped (simulate calibrate reads plain JSON).
--kernel triton plans models/graphs/triton_matmul.pbtxt (f32 rated in tf32); cuda_gemm plans
models/graphs/gemm.pbtxt over the configurations gemm-timing times. Prints Markdown.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_plan import load_json  # noqa: E402
from compare_transfer import judge  # noqa: E402
from make_transfer_plans import KERNELS, ROOT, plan, ranking  # noqa: E402


def calibrate(binary, device, files, out, params):
    args = [binary, "calibrate", "--device", device, "--terms", "none", "--residuals", "--out", out]
    if params:
        args += ["--residual-params", params]
    for f in files:
        args += ["--timings", f]
    subprocess.run(args, check=True, capture_output=True, text=True)


def plan_rows(binary, device, kernel, sweep, calibration, stages):
    """compare_transfer.judge's plan rows for every (dtype, shape) row of `sweep`, over the stage
    range the sweep timed (the H100 gemm sweeps include 1 stage)."""
    rows = sorted({(t["dtype"], t["M"], t["N"], t["K"]) for t in sweep["timings"]})
    return [{"dtype": dtype, "M": m, "N": n, "K": k,
             "ranking": ranking(plan(binary, device, kernel, dtype, (m, n, k), calibration, stages))}
            for dtype, m, n, k in rows]


def stage_range(sweep):
    stages = sorted({t["config"]["NUM_STAGES"] for t in sweep["timings"]})
    return f"{stages[0]}..{stages[-1]}"


def tally(rows):
    return {"rows": len(rows), "top1": sum(r["top1_vs_best"] <= 1.10 for r in rows),
            "top5": sum(r["best_in_top5"] for r in rows)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary")
    ap.add_argument("--kernel", choices=sorted(KERNELS), required=True)
    ap.add_argument("--learn", nargs="+", required=True, help="the H100 timing files the residuals are learned from")
    ap.add_argument("--learn-device", default="h100")
    ap.add_argument("--judge", nargs="*", default=[], help="DEVICE=FILE: other devices' timings to judge on")
    ap.add_argument("--residual-params", default=None, help="simulate calibrate --residual-params")
    ap.add_argument("--tolerance", type=float, default=0.003)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    binary = os.path.abspath(a.binary)
    result = {"kernel": a.kernel, "learn": a.learn, "residual_params": a.residual_params, "leave_one_out": {},
              "judged": {}}
    with tempfile.TemporaryDirectory() as tmp:
        plain_all, cal_all = [], []
        for held in a.learn:
            cal = os.path.join(tmp, "residuals.textproto")
            calibrate(binary, a.learn_device, [f for f in a.learn if f != held], cal, a.residual_params)
            sweep = load_json(held)
            plain = judge(plan_rows(binary, a.learn_device, a.kernel, sweep, None, stage_range(sweep)), sweep, a.tolerance)
            cal_rows = judge(plan_rows(binary, a.learn_device, a.kernel, sweep, cal, stage_range(sweep)), sweep,
                             a.tolerance)
            plain_all += plain
            cal_all += cal_rows
        result["leave_one_out"] = {"model": tally(plain_all), "residuals": tally(cal_all)}
        for dtype in ("f16", "f32"):
            result["leave_one_out"][dtype] = {"model": tally([r for r in plain_all if r["dtype"] == dtype]),
                                              "residuals": tally([r for r in cal_all if r["dtype"] == dtype])}
        cal = os.path.join(tmp, "all.textproto")
        calibrate(binary, a.learn_device, a.learn, cal, a.residual_params)
        for item in a.judge:
            device, path = item.split("=", 1)
            sweep = load_json(path)
            plain = judge(plan_rows(binary, device, a.kernel, sweep, None, stage_range(sweep)), sweep, a.tolerance)
            cal_rows = judge(plan_rows(binary, device, a.kernel, sweep, cal, stage_range(sweep)), sweep, a.tolerance)
            result["judged"][path] = {"device": device, "model": tally(plain), "residuals": tally(cal_rows),
                                      "rows": [{"dtype": p["dtype"], "shape": p["shape"], "model_rank_of_best": p["best_rank"],
                                                "residual_rank_of_best": c["best_rank"]} for p, c in zip(plain, cal_rows)]}
    keyed = f", keyed by {a.residual_params}" if a.residual_params else ""
    lines = [f"### {a.kernel}: residuals learned on {a.learn_device} ({len(a.learn)} timing files{keyed})", "",
             "| judged on | rows | top-1 within 10%: model / with residuals | best in top 5: model / with residuals |",
             "|---|---|---|---|"]
    loo = result["leave_one_out"]
    for key, label in (("f16", "leave one file out, f16"), ("f32", "leave one file out, f32"), (None, "leave one file out, all")):
        t = loo[key] if key else loo
        lines.append(f"| {label} | {t['model']['rows']} | {t['model']['top1']} / {t['residuals']['top1']} | "
                     f"{t['model']['top5']} / {t['residuals']['top5']} |")
    for path, j in result["judged"].items():
        lines.append(f"| {j['device']}: {os.path.relpath(path, ROOT)} | {j['model']['rows']} | {j['model']['top1']} / "
                     f"{j['residuals']['top1']} | {j['model']['top5']} / {j['residuals']['top5']} |")
    print("\n".join(lines))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
