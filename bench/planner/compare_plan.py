"""Compares `simulate plan` with the measured Triton matmul sweep (sweep_triton_matmul.py).

For each (shape, dtype): the planner's top-1 and top-5 against the measured best, Spearman's
rank correlation of predicted and measured time over the configurations both have, and how the
planner's fit verdicts and shared-memory bytes compare with what Triton compiled.

A measured time equal to the best (do_bench medians repeat to the timer's resolution), or with
--tolerance T within a fraction T of it, counts as a measured best too: "rank of best" is the
planner's best rank among them, "+n tied" says how many there are.

usage: python3 compare_plan.py SIMULATE_BINARY SWEEP.json [--shapes MxNxK,...] [--graph FILE] [--tolerance T]
                              [--kernel triton|cuda_gemm] [--device DEV] [--calibration FILE]
"""
import argparse
import gzip
import json
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
GRAPH = os.path.join(HERE, "..", "..", "models", "graphs", "triton_matmul.pbtxt")
GRAPH_PATH = [GRAPH]
NAMES = ["BLOCK_M", "BLOCK_N", "BLOCK_K", "NUM_STAGES", "NUM_WARPS"]
COMPUTE_DTYPE = {"f16": "f16", "f32": "tf32"}  # Triton's tl.dot on f32 inputs uses tf32
ELT = {"f16": 2, "f32": 4}


def load_json(path):
    """A recorded run: tests/data/planner keeps the ones tests replay gzipped (.json.gz)."""
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return json.load(f)


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    r = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2.0
        i = j + 1
    return r


def spearman(x, y):
    rx, ry = ranks(x), ranks(y)
    n = len(x)
    mx, my = sum(rx) / n, sum(ry) / n
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    vx = sum((a - mx) ** 2 for a in rx) ** 0.5
    vy = sum((b - my) ** 2 for b in ry) ** 0.5
    return cov / (vx * vy) if vx > 0 and vy > 0 else float("nan")


# The CUDA backend's GEMM (models/graphs/gemm.pbtxt, timed by `scratchsim_cuda gemm-timing`):
# fp32 FMA for every dtype, DTYPE selects the tile bytes, and the sweep covers the compiled tiles.
KERNEL = {"name": "triton"}
CUDA_GEMM_SPACE = ["BLOCK_M=32,64,128", "BLOCK_N=32,64,128", "BLOCK_K=16,32", "NUM_STAGES=1..4", "NUM_WARPS=4,8"]
# gemm-timing --split-k: the SPLIT_K values a sweep timed; the plan sweeps them too when any is > 1.
SPLITS = [1]


PLAN_EXTRA = {"device": "h100", "calibration": None}


def plan(binary, dtype, M, N, K, allow_spills):
    args = [binary, "plan", "--device", PLAN_EXTRA["device"], "--graph", GRAPH_PATH[0], "--set", f"M={M}",
            "--set", f"N={N}", "--set", f"K={K}", "--format", "json", "--top", "100000", "--threads", "1"]
    if PLAN_EXTRA["calibration"]:
        args += ["--calibration", PLAN_EXTRA["calibration"]]
    if KERNEL["name"] == "cuda_gemm":
        args += ["--set", f"DTYPE={0 if dtype == 'f32' else 1}"]
        for p in CUDA_GEMM_SPACE:
            args += ["--param", p]
        if SPLITS != [1]:
            args += ["--param", "SPLIT_K=" + ",".join(str(s) for s in SPLITS)]
        else:
            args += ["--set", "SPLIT_K=1"]  # the plain kernel, as every sweep before split-K timed
    else:
        args += ["--set", f"ELT={ELT[dtype]}", "--compute-dtype", COMPUTE_DTYPE[dtype]]
    if allow_spills:
        args.append("--allow-spills")
    out = subprocess.run(args, capture_output=True, text=True, check=False)
    if out.returncode not in (0, 1):
        raise RuntimeError(out.stderr)
    return json.loads(out.stdout)


def cfg_key(params):
    key = tuple(params[n] for n in NAMES)
    # The CUDA GEMM's K shares join the key; a timing or plan without SPLIT_K ran one share.
    return key + (params.get("SPLIT_K", 1),) if KERNEL["name"] == "cuda_gemm" else key


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("sweep")
    parser.add_argument("--shapes", default=None, help="only these MxNxK shapes of the sweep")
    parser.add_argument("--graph", default=None, help="another graph of the same kernel (e.g. without smem_bytes)")
    parser.add_argument("--tolerance", type=float, default=0.0,
                        help="count every configuration within this fraction of the best time as a measured best "
                             "(e.g. 0.003: the run-to-run spread of gemm-timing, docs/validation/planner-h100.md)")
    parser.add_argument("--kernel", default="triton", choices=["triton", "cuda_gemm"],
                        help="cuda_gemm: the CUDA backend's GEMM (models/graphs/gemm.pbtxt, scratchsim_cuda gemm-timing)")
    parser.add_argument("--device", default="h100", help="the device model to plan for (default h100)")
    parser.add_argument("--calibration", default=None, help="plan with this calibration file (simulate calibrate)")
    args = parser.parse_args()
    KERNEL["name"] = args.kernel
    PLAN_EXTRA["device"] = args.device
    PLAN_EXTRA["calibration"] = args.calibration
    default_graph = GRAPH if args.kernel == "triton" else os.path.join(HERE, "..", "..", "models", "graphs", "gemm.pbtxt")
    GRAPH_PATH[0] = args.graph or default_graph
    sweep = load_json(args.sweep)
    SPLITS[:] = sorted({t["config"].get("SPLIT_K", 1) for t in sweep["timings"]}) or [1]
    if args.shapes:
        wanted = [[int(x) for x in s.split("x")] for s in args.shapes.split(",")]
        sweep["shapes"] = [s for s in sweep["shapes"] if list(s) in wanted]
    rows = []
    fit_rows = []
    for dtype in ("f16", "f32"):
        compiled = {cfg_key(v["config"]): v for v in sweep["compiled"].values() if v["dtype"] == dtype}
        lenient = plan(args.binary, dtype, 4096, 4096, 4096, allow_spills=True)
        predicted_fit = {cfg_key(c["params"]): c for c in lenient["configs"]}
        agree = sum((k in predicted_fit) == (v["status"] == "ok") for k, v in compiled.items())
        smem_exact = sum(1 for k, v in compiled.items()
                         if v["status"] == "ok" and k in predicted_fit and v.get("shared") is not None
                         and predicted_fit[k]["peak_bytes"].get("smem") == v["shared"])
        smem_total = sum(1 for k, v in compiled.items() if v["status"] == "ok" and k in predicted_fit)
        spills = sum(1 for v in compiled.values() if v["status"] == "ok" and (v.get("n_spills") or 0) > 0)
        fit_rows.append((dtype, len(compiled), agree, smem_exact, smem_total, spills))
        for M, N, K in sweep["shapes"]:
            measured = {cfg_key(t["config"]): t["ms"] for t in sweep["timings"]
                        if t["dtype"] == dtype and (t["M"], t["N"], t["K"]) == (M, N, K) and "ms" in t}
            if not measured:
                continue
            p = plan(args.binary, dtype, M, N, K, allow_spills=False)
            ranked = [cfg_key(c["params"]) for c in p["configs"]]
            predicted = {cfg_key(c["params"]): c["estimated_us"] for c in p["configs"]}
            best_ms = min(measured.values())
            bests = [k for k in measured if measured[k] <= best_ms * (1 + args.tolerance)]
            both = [k for k in ranked if k in measured]
            ranked_bests = [k for k in both if k in bests]
            best_key = ranked_bests[0] if ranked_bests else bests[0]
            top1 = both[0]
            top5 = both[:5]
            best5 = min(measured[k] for k in top5)
            rho = spearman([predicted[k] for k in both], [measured[k] for k in both])
            # The model alone: configurations Triton compiled without spills.
            clean = [k for k in both if not (compiled[k].get("n_spills") or 0)]
            rho_clean = spearman([predicted[k] for k in clean], [measured[k] for k in clean])
            # Spill verdicts: the graph's register estimate against ptxas.
            spill_agree = sum(1 for k in measured if (k not in predicted) == bool(compiled[k].get("n_spills") or 0))
            best_rank = both.index(best_key) + 1 if best_key in both else None
            rows.append({
                "dtype": dtype, "shape": f"{M}x{N}x{K}", "measured": len(measured), "ranked": len(both),
                "best": best_key, "tied": len(bests) - 1, "best_ms": best_ms, "top1": top1, "top1_ms": measured[top1],
                "top1_vs_best": measured[top1] / best_ms, "best_in_top5": best_key in top5,
                "best5_vs_best": best5 / best_ms, "best_rank": best_rank, "spearman": rho,
                "spearman_clean": rho_clean, "clean": len(clean), "spill_agree": spill_agree,
                "best_tflops": 2.0 * M * N * K / (best_ms * 1e-3) / 1e12,
            })
    fmt = lambda k: "/".join(str(x) for x in k)  # noqa: E731
    print("| dtype | shape | configs timed / ranked | measured best (BM/BN/BK/stages/warps[/split]) | best ms (TFLOP/s) "
          "| planner top-1 | top-1 ms (vs best) | best in top 5 | best of top 5 vs best | rank of best | Spearman | Spearman, no spills (n) | spill verdicts agree |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['dtype']} | {r['shape']} | {r['measured']} / {r['ranked']} | {fmt(r['best'])}"
              f"{' (+%d tied)' % r['tied'] if r['tied'] else ''} | "
              f"{r['best_ms']:.4f} ({r['best_tflops']:.0f}) | {fmt(r['top1'])} | {r['top1_ms']:.4f} "
              f"({r['top1_vs_best']:.2f}x) | {'yes' if r['best_in_top5'] else 'no'} | {r['best5_vs_best']:.2f}x | "
              f"{r['best_rank'] if r['best_rank'] else 'pruned'} | {r['spearman']:.2f} | "
              f"{r['spearman_clean']:.2f} ({r['clean']}) | {r['spill_agree']} / {r['measured']} |")
    print()
    if rows:
        top1 = sum(r["top1_vs_best"] <= 1.10 for r in rows)
        top5 = sum(r["best_in_top5"] for r in rows)
        both = sum(r["top1_vs_best"] <= 1.10 and r["best_in_top5"] for r in rows)
        rhos = [r["spearman"] for r in rows]
        print(f"{len(rows)} rows: top-1 within 10% of the best {top1}, best in the top 5 {top5}, both {both}; "
              f"top-1 at most {max(r['top1_vs_best'] for r in rows):.3f}x, best of the top 5 at most "
              f"{max(r['best5_vs_best'] for r in rows):.3f}x; Spearman {min(rhos):.2f}-{max(rhos):.2f}")
        print()
    print("| dtype | configurations | fit verdict agrees with Triton | shared bytes exact (of both fit) "
          "| compiled with spills |")
    print("|---|---|---|---|---|")
    for dtype, n, agree, exact, total, spills in fit_rows:
        print(f"| {dtype} | {n} | {agree} | {exact} / {total} | {spills} |")


if __name__ == "__main__":
    main()
