"""Measures every configuration of the Triton matmul of triton_matmul.pbtxt on the GPU.

For the planner's H100 validation (docs/validation/planner-h100.md): compiles the whole
(BLOCK_M, BLOCK_N, BLOCK_K, NUM_STAGES, NUM_WARPS) space for f16 and f32 (tf32 dot) in
parallel worker processes (spawn), records what Triton refuses (OutOfResources) and the compiled
registers/spills/shared memory, then times each compiled kernel on three problem shapes with
triton.testing.do_bench. Writes one JSON file. Stops early, keeping what it has, at --budget-s.

usage: python3 sweep_triton_matmul.py OUT.json [--budget-s 270] [--shapes MxNxK,MxNxK,...]
           [--dtypes f16,f32] [--settle-ms S] [--rep-ms R]

Timing: by default each configuration's do_bench median over 20 ms after 5 ms of warm-up, the
bursts Triton's autotuner times. With --settle-ms S (steady state), the GPU first runs the
configuration back to back for S ms, so that the clock settles where the power cap holds it for
that kernel, then do_bench times --rep-ms of launches with no further warm-up (docs/validation/
planner-h200-transfer.md, "Burst and sustained timing": power-capped kernels measure up to 22%
apart between the two protocols).

The compile phase also counts a few PTX instructions per kernel (wgmma, mma.sync, cp.async,
st.shared, ld.global): which MMA path and which operand-staging path Triton chose.
"""
import argparse
import datetime
import itertools
import json
import multiprocessing as mp
import os
import sys
import time
import traceback

os.environ.setdefault("TRITON_CACHE_DIR", "/tmp/scratchsim_triton_cache")

import torch  # noqa: E402
import triton  # noqa: E402

SPACE = {
    "BLOCK_M": [32, 64, 128, 256],
    "BLOCK_N": [32, 64, 128, 256],
    "BLOCK_K": [32, 64, 128],
    "NUM_STAGES": [2, 3, 4],
    "NUM_WARPS": [4, 8],
}
DTYPES = {"f16": torch.float16, "f32": torch.float32}
SHAPES = [(4096, 4096, 4096), (2048, 2048, 8192), (8192, 1024, 4096)]
GROUP_M = 8
PTX_COUNTED = ("wgmma.mma_async", "mma.sync", "cp.async", "cp.async.bulk", "st.shared", "ld.shared",
               "ldmatrix", "ld.global", "stmatrix")


# The kernel: the tutorial-style matmul every script here times and compiles, defined once.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from triton_kernels import matmul_kernel  # noqa: E402


def configs():
    names = list(SPACE)
    for values in itertools.product(*(SPACE[n] for n in names)):
        yield dict(zip(names, values))


def launch(a, b, c, cfg):
    M, K = a.shape
    N = b.shape[1]
    grid = (triton.cdiv(M, cfg["BLOCK_M"]) * triton.cdiv(N, cfg["BLOCK_N"]),)
    return matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                               c.stride(0), c.stride(1), BLOCK_M=cfg["BLOCK_M"],
                               BLOCK_N=cfg["BLOCK_N"], BLOCK_K=cfg["BLOCK_K"], GROUP_M=GROUP_M,
                               num_warps=cfg["NUM_WARPS"], num_stages=cfg["NUM_STAGES"])


def compile_one(task):
    """Worker: compiles (and launches once, small) one configuration; fills the disk cache."""
    dtype_name, cfg = task
    dtype = DTYPES[dtype_name]
    out = {"dtype": dtype_name, "config": cfg}
    try:
        # Same divisibility specialization as the timed shapes (all multiples of 16).
        a = torch.randn(512, 512, device="cuda", dtype=dtype)
        b = torch.randn(512, 512, device="cuda", dtype=dtype)
        c = torch.empty(512, 512, device="cuda", dtype=dtype)
        kernel = launch(a, b, c, cfg)
        torch.cuda.synchronize()
        out["status"] = "ok"
        for field in ("n_regs", "n_spills"):
            out[field] = getattr(kernel, field, None)
        metadata = getattr(kernel, "metadata", None)
        out["shared"] = getattr(metadata, "shared", None) if metadata is not None else None
        ptx = kernel.asm.get("ptx", "") if hasattr(kernel, "asm") else ""
        out["ptx_counts"] = {name: ptx.count(name) for name in PTX_COUNTED}
    except Exception as e:  # noqa: BLE001 - every refusal is data here
        out["status"] = type(e).__name__
        out["error"] = str(e).splitlines()[0][:300] if str(e) else type(e).__name__
    return out


def key(dtype_name, cfg):
    return dtype_name + ":" + ",".join(str(cfg[n]) for n in SPACE)


def settle(fn, ms):
    """Runs fn back to back for about `ms` milliseconds of wall time (synchronising every few
    launches), leaving the GPU's clock where sustained load of this kernel puts it."""
    torch.cuda.synchronize()
    end = time.perf_counter() + ms / 1000.0
    while time.perf_counter() < end:
        for _ in range(8):
            fn()
        torch.cuda.synchronize()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--budget-s", type=float, default=270)
    parser.add_argument("--workers", type=int, default=14)
    parser.add_argument("--shapes", default=None, help="MxNxK,... (default: the three of the first run)")
    parser.add_argument("--dtypes", default="f16,f32", help="which of f16, f32 to compile and time")
    parser.add_argument("--settle-ms", type=float, default=0.0,
                        help="steady-state timing: run each configuration back to back this long first")
    parser.add_argument("--rep-ms", type=float, default=20.0, help="do_bench's timed repetitions (ms)")
    args = parser.parse_args()
    dtypes = {d: DTYPES[d] for d in args.dtypes.split(",")}
    shapes = SHAPES
    if args.shapes:
        shapes = [tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",")]
    start = time.time()
    result = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "device": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "space": SPACE,
        "shapes": shapes,
        "group_m": GROUP_M,
        "timing": ({"mode": "steady state", "settle_ms": args.settle_ms, "rep_ms": args.rep_ms} if args.settle_ms > 0
                   else {"mode": "burst", "warmup_ms": 5, "rep_ms": args.rep_ms}),
        "compiled": {},
        "timings": [],
        "notes": [],
        "driver": None,
    }
    try:
        import subprocess
        result["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version,clocks.max.sm",
                                           "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    except Exception as e:  # noqa: BLE001
        result["driver"] = f"unknown ({type(e).__name__})"

    def save():
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)

    tasks = [(d, cfg) for d in dtypes for cfg in configs()]
    compile_deadline = start + 0.5 * args.budget_s
    ctx = mp.get_context("spawn")
    with ctx.Pool(args.workers) as pool:
        pending = pool.imap_unordered(compile_one, tasks)
        for _ in range(len(tasks)):
            remaining = compile_deadline - time.time()
            if remaining <= 0:
                result["notes"].append("compile phase stopped at its deadline")
                break
            try:
                r = pending.next(timeout=remaining)
            except mp.TimeoutError:
                result["notes"].append("compile phase stopped at its deadline")
                break
            result["compiled"][key(r["dtype"], r["config"])] = r
        pool.terminate()
    print(f"compiled {len(result['compiled'])}/{len(tasks)} in {time.time() - start:.0f} s", flush=True)
    save()

    torch.backends.cuda.matmul.allow_tf32 = True
    stopped = False
    for (M, N, K), (dtype_name, dtype) in itertools.product(shapes, dtypes.items()):
        if stopped:
            break
        a = torch.randn(M, K, device="cuda", dtype=dtype)
        b = torch.randn(K, N, device="cuda", dtype=dtype)
        c = torch.empty(M, N, device="cuda", dtype=dtype)
        reference = torch.matmul(a.float(), b.float())
        checked = False
        for cfg in configs():
            if time.time() - start > args.budget_s:
                result["notes"].append(f"timing stopped at the budget during {dtype_name} {M}x{N}x{K}")
                stopped = True
                break
            compiled = result["compiled"].get(key(dtype_name, cfg))
            if compiled is None or compiled["status"] != "ok":
                continue
            row = {"dtype": dtype_name, "M": M, "N": N, "K": K, "config": cfg}
            try:
                if not checked:
                    launch(a, b, c, cfg)
                    torch.cuda.synchronize()
                    err = (c.float() - reference).abs().max().item() / reference.abs().max().item()
                    result["notes"].append(f"{dtype_name} {M}x{N}x{K} {cfg}: max relative error {err:.2e}")
                    checked = True
                if args.settle_ms > 0:
                    settle(lambda: launch(a, b, c, cfg), args.settle_ms)
                ms = triton.testing.do_bench(lambda: launch(a, b, c, cfg), warmup=0 if args.settle_ms > 0 else 5,
                                             rep=args.rep_ms, return_mode="median")
                row["ms"] = ms
                row["tflops"] = 2.0 * M * N * K / (ms * 1e-3) / 1e12
            except Exception as e:  # noqa: BLE001
                row["error"] = (type(e).__name__ + ": " + str(e).splitlines()[0][:200]) if str(e) else type(e).__name__
            result["timings"].append(row)
        del a, b, c, reference
        torch.cuda.empty_cache()
        save()
        print(f"timed {len(result['timings'])} at {time.time() - start:.0f} s", flush=True)
    # cuBLAS for scale, same shapes.
    for (M, N, K), (dtype_name, dtype) in itertools.product(shapes, dtypes.items()):
        if time.time() - start > args.budget_s + 15:
            break
        a = torch.randn(M, K, device="cuda", dtype=dtype)
        b = torch.randn(K, N, device="cuda", dtype=dtype)
        ms = triton.testing.do_bench(lambda: torch.matmul(a, b), warmup=5, rep=20, return_mode="median")
        result["notes"].append(f"torch.matmul {dtype_name} {M}x{N}x{K}: {ms:.4f} ms "
                               f"({2.0 * M * N * K / (ms * 1e-3) / 1e12:.1f} TFLOP/s)")
    result["elapsed_s"] = time.time() - start
    save()


if __name__ == "__main__":
    try:
        main()
    except Exception:
        traceback.print_exc()
        sys.exit(1)
