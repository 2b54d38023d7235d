"""Planner-guided autotuning in Triton's own autotuner on the GPU (issue 34, item 6): for workload
rows, `triton.autotune` over the whole 288-configuration matmul space against the same autotuner
with `prune_configs_by=scratchsim.triton.early_prune(top_k=K)` and with `registers=True`.

    python3 bench/planner/guided_autotune_live.py OUT.json [--part heldout15] [--rows 0:8]
        [--dtypes f16,f32] [--top-k 5] [--rounds 6] [--budget-s 540]

bench/planner/guided_autotune.py replays the sweeps' recorded seconds; this runs the real path a
user runs: Triton's Autotuner (its do_bench set to the sweeps' protocol: 3 ms warm-up, 10 ms of
repetitions, median), early_prune ranking the launch's own arguments for device h200, and for
registers=True compiling on the CPU what can change its first K. Triton's cache is warmed first
with every configuration (a spawn pool, as sweep_workloads.py), so each autotune's wall time is its
pruning, lowering and benchmarking, not the 288 compiles an exhaustive autotune pays cold (those
are in the sweeps' record: guided_autotune.py). The winners of each row are then timed again
together, interleaved in shuffled rounds, and each guided winner is reported over the exhaustive
one.
"""
import argparse
import datetime
import json
import multiprocessing as mp
import os
import random
import statistics
import sys
import time
import traceback

os.environ.setdefault("TRITON_CACHE_DIR", "/tmp/scratchsim_triton_cache")

import torch  # noqa: E402
import triton  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from sweep_workloads import (DTYPES, GROUP_M, PLAIN_SPACE, REP_MS, WARMUP_MS, bench, compile_one, row_slice,  # noqa: E402
                             smi, space, tk)

import scratchsim.triton as sst  # noqa: E402

NAMES = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "NUM_STAGES", "NUM_WARPS")


def configs():
    return [triton.Config({"BLOCK_M": c["BLOCK_M"], "BLOCK_N": c["BLOCK_N"], "BLOCK_K": c["BLOCK_K"],
                           "GROUP_M": GROUP_M}, num_stages=c["NUM_STAGES"], num_warps=c["NUM_WARPS"])
            for c in space(PLAIN_SPACE)]


def label(config):
    return (config.kwargs["BLOCK_M"], config.kwargs["BLOCK_N"], config.kwargs["BLOCK_K"], config.num_stages,
            config.num_warps)


def sweep_bench(fn, quantiles=None):
    return triton.testing.do_bench(fn, warmup=WARMUP_MS, rep=REP_MS, quantiles=quantiles)


def autotuned(prune):
    """A fresh Autotuner over the whole space for tk.matmul_kernel (prune: an early_config_prune)."""
    return triton.autotune(configs=configs(), key=["M", "N", "K"], do_bench=sweep_bench,
                           prune_configs_by={"early_config_prune": prune} if prune else None)(tk.matmul_kernel)


def run(kernel, a, b, c):
    M, K = a.shape
    N = b.shape[1]

    def grid(meta):
        return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)
    kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))


def launch_with(config, a, b, c):
    M, K = a.shape
    N = b.shape[1]
    grid = (triton.cdiv(M, config.kwargs["BLOCK_M"]) * triton.cdiv(N, config.kwargs["BLOCK_N"]),)
    tk.matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                           c.stride(1), **config.kwargs, num_warps=config.num_warps, num_stages=config.num_stages)


def tune_row(row, dtype_name, args, prunes):
    dtype = DTYPES[dtype_name]
    a = torch.randn(row["M"], row["K"], device="cuda", dtype=dtype)
    b = torch.randn(row["K"], row["N"], device="cuda", dtype=dtype)
    c = torch.empty(row["M"], row["N"], device="cuda", dtype=dtype)
    out = {key: row[key] for key in ("M", "N", "K", "model", "layer", "part")}
    out["dtype"] = dtype_name
    winners = {}
    for mode, make in prunes.items():
        prune = make()
        kernel = autotuned(prune)
        torch.cuda.synchronize()
        start = time.perf_counter()
        run(kernel, a, b, c)
        torch.cuda.synchronize()
        wall = time.perf_counter() - start
        winners[mode] = kernel.best_config
        out[mode] = {"autotune_s": round(wall, 3), "bench_s": round(getattr(kernel, "bench_time", 0.0), 3),
                     "winner": label(kernel.best_config), "benchmarked": len(getattr(kernel, "configs_timings", {}))}
        if prune is not None:
            out[mode]["early_prune"] = {k: (round(v, 3) if isinstance(v, float) else v) for k, v in prune.stats.items()}
    # The winners timed together, interleaved.
    distinct = {label(w): w for w in winners.values()}
    rounds = {k: [] for k in distinct}
    shuffle = random.Random(args.seed)
    for _ in range(args.rounds):
        order = list(distinct)
        shuffle.shuffle(order)
        for k in order:
            rounds[k].append(bench(lambda: launch_with(distinct[k], a, b, c)))
    ms = {k: statistics.median(v) for k, v in rounds.items()}
    for mode, w in winners.items():
        out[mode]["winner_ms"] = ms[label(w)]
        out[mode]["over_exhaustive"] = ms[label(w)] / ms[label(winners["exhaustive"])]
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--suite", default=os.path.join(HERE, "..", "..", "tests", "data", "planner", "workload-suite.json"))
    p.add_argument("--part", default="heldout15")
    p.add_argument("--rows", default=":", type=row_slice)
    p.add_argument("--dtypes", default="f16,f32")
    p.add_argument("--top-k", type=int, default=5)
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--seed", type=int, default=34)
    p.add_argument("--workers", type=int, default=14)
    p.add_argument("--budget-s", type=float, default=540)
    args = p.parse_args()
    start = time.time()
    with open(args.suite) as f:
        rows = [r for r in json.load(f)["matmul"] if r["part"] == args.part][args.rows]
    dtypes = args.dtypes.split(",")
    with mp.get_context("spawn").Pool(args.workers) as pool:
        warmed = list(pool.imap_unordered(compile_one, [("matmul", d, cfg, {}) for d in dtypes
                                                        for cfg in space(PLAIN_SPACE)]))
    result = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
              "device": torch.cuda.get_device_name(0), "torch": torch.__version__, "triton": triton.__version__,
              "driver": smi(), "part": args.part, "top_k": args.top_k, "rounds": args.rounds,
              "warmed": sum(w["status"] == "ok" for w in warmed), "rows": []}
    print(f"warmed {result['warmed']} of {len(warmed)} at {time.time() - start:.0f} s", flush=True)
    prunes = {
        "exhaustive": lambda: None,
        "top_k": lambda: sst.early_prune(tk.matmul_kernel, device="h200", top_k=args.top_k, to_fit=0),
        "top_k_registers": lambda: sst.early_prune(tk.matmul_kernel, device="h200", top_k=args.top_k, to_fit=0,
                                                   registers=True),
    }
    for row in rows:
        for d in dtypes:
            if time.time() - start > args.budget_s:
                result["stopped"] = f"budget reached before {row['M']}x{row['N']}x{row['K']} {d}"
                break
            result["rows"].append(tune_row(row, d, args, prunes))
            last = result["rows"][-1]
            print(f"{d} {row['M']}x{row['N']}x{row['K']}: " + ", ".join(
                f"{m} {last[m]['autotune_s']:.1f} s {last[m]['over_exhaustive']:.3f}x" for m in prunes), flush=True)
            with open(args.out, "w") as f:
                json.dump(result, f, indent=1)
        if "stopped" in result:
            break
    result["elapsed_s"] = round(time.time() - start, 1)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    try:
        main()
    except Exception:
        traceback.print_exc()
        sys.exit(1)
