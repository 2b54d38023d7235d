"""Wide decode rows of the workload suite against the last wave (docs/validation/
planner-h200-workloads.md, "Wide decode rows: the last wave"): for every timed Triton matmul row of
16 tokens and at least --min-n columns, each configuration's measured time over the row's best
beside the model's (`simulate plan --format json`: estimated_us), binned by the share of its
waves' block slots the grid fills at the model's blocks per core (wave_efficiency).

    python3 bench/planner/wave_tail.py SIMULATE [--dtype f16] [--min-n 30000] [--config 32,128,64,4,4 ...]

--config also prints, row by row, the named configurations' measured ratio and wave share.
"""
import argparse
import collections
import glob
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, HERE)
from judge_workloads import cfg_key, measured  # noqa: E402


def timing_files(dtype):
    """Each matmul part's H200 sweeps of dtype (the fit and first held-out parts share a run)."""
    runs = sorted({os.path.dirname(p) for p in glob.glob(os.path.join(ROOT, "tests/data/planner/h200-*/h200-*.json.gz"))
                   if "transfer" not in p})
    return [f for run in runs for f in glob.glob(os.path.join(run, f"h200-*{dtype}*.json.gz")) if "repeat" not in f]


def model(simulate, n, k, dtype):
    elt, compute = {"f16": (2, "f16"), "f32": (4, "tf32")}[dtype]
    out = subprocess.run([simulate, "plan", "--device", "h200", "--graph",
                          os.path.join(ROOT, "models/graphs/triton_matmul.pbtxt"), "--set", "M=16", "--set", f"N={n}",
                          "--set", f"K={k}", "--set", f"ELT={elt}", "--compute-dtype", compute, "--format", "json",
                          "--top", "100000"], capture_output=True, text=True, check=False)
    configs = json.loads(out.stdout)["configs"]
    return {cfg_key("matmul", c["params"])[1:]: (c["estimated_us"], c["wave_efficiency"])
            for c in configs if c["estimated_us"]}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("simulate")
    p.add_argument("--dtype", default="f16", choices=["f16", "f32"])
    p.add_argument("--min-n", type=int, default=30000)
    p.add_argument("--config", action="append", default=[], help="BLOCK_M,BLOCK_N,BLOCK_K,NUM_STAGES,NUM_WARPS")
    args = p.parse_args()
    named = [tuple(int(v) for v in c.split(",")) for c in args.config]
    times = measured(timing_files(args.dtype)).times
    rows = sorted(k for k in times if k[0] == "matmul" and k[1] == 16 and k[2] >= args.min_n and k[2] % 16 == 0
                  and k[4] == args.dtype)
    bins = collections.defaultdict(list)
    for key in rows:
        t = {k[1:]: v for k, v in times[key].items()}
        best = min(t.values())
        est = model(args.simulate, key[2], key[3], args.dtype)
        best_est = min(e for e, _ in est.values())
        for k, (e, share) in est.items():
            if k in t and t[k] < 1.5 * best:
                bins[min(int(share * 10), 9)].append((t[k] / best, e / best_est))
        if named:
            cells = [f"{c}: {t[c] / best:.3f}, waves {est[c][1]:.2f} used" if c in t and c in est else f"{c}: -" for c in named]
            print(f"{key[1]} x {key[2]} x {key[3]}  " + "; ".join(cells))
    print(f"{args.dtype}: {len(rows)} rows of 16 tokens and at least {args.min_n} columns")
    for b in sorted(bins):
        measured_ratio = [m for m, _ in bins[b]]
        rel = [m / e for m, e in bins[b]]
        print(f"  waves {b / 10:.1f}-{(b + 1) / 10:.1f} used: {len(rel):5d} configurations, measured/best median "
              f"{statistics.median(measured_ratio):.3f}, measured over the model's ratio median {statistics.median(rel):.3f}")


if __name__ == "__main__":
    main()
