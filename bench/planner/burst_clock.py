"""The SM clock a Triton matmul runs at within the sweeps' do_bench burst, read by the kernel itself
(issue 34; docs/validation/planner-h200-workloads.md, "The f32 32-row tiles: L2 delivery"): does a
GPU time the co-resident 32-row tiles slower because its clock drops inside a 10 ms burst, or
because its loop is slower at the same clock?

    python3 bench/planner/burst_clock.py OUT.json [--rounds 3]   # on the GPU machine, H100 and H200

Per (shape, configuration), in ROUNDS rounds: the plain matmul's do_bench median (the sweeps' 3 ms
warm-up and 10 ms of repetitions), then the same burst of matmul_clocked_kernel, whose first block
reads the SM's cycle counter and the nanosecond timer at its start and end
(bench/python/triton_kernels.py; the matmul's instructions are the plain kernel's, checked on the
PTX): per launch, cycles over nanoseconds is the clock that block's SM ran at. Records every
launch's clock in order (the warm-up's first), the median and the two timings.
"""
import argparse
import datetime
import json
import statistics

import torch
import triton

import sweep_workloads as sw
from sweep_workloads import DTYPES, GROUP_M, bench, launch_matmul, smi, tk

NAMES = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "NUM_STAGES", "NUM_WARPS")
# Prefill rows where the measured best is a 32-row BLOCK_K-32 tile on the H200 and the H100 sweeps
# rank those tiles 1.01-1.20x the best; the shapes of the clock-under-load runs.
ROWS = [((2000, 3840, 2560), "f32"), ((2000, 4096, 2304), "f32"), ((2000, 2048, 5632), "f32"),
        ((3840, 3840, 3072), "f32")]
CONFIGS = [(32, 256, 32, 3, 4), (32, 256, 32, 4, 4), (32, 128, 32, 4, 4), (32, 256, 64, 4, 4), (256, 128, 32, 4, 8),
           (256, 64, 32, 4, 8)]
CAPACITY = 1 << 14  # launches a burst may record


def clocked_burst(a, b, c, cfg):
    """(do_bench median ms, [SM clock in MHz of each launch, in launch order]) of one burst of the
    clocked matmul."""
    M, K = a.shape
    N = b.shape[1]
    stamps = torch.zeros((CAPACITY, 4), dtype=torch.int64, device=a.device)
    launches = [0]
    grid = (triton.cdiv(M, cfg["BLOCK_M"]) * triton.cdiv(N, cfg["BLOCK_N"]),)

    def fn():
        slot = stamps[launches[0] % CAPACITY]
        launches[0] += 1
        tk.matmul_clocked_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                       c.stride(0), c.stride(1), slot, BLOCK_M=cfg["BLOCK_M"],
                                       BLOCK_N=cfg["BLOCK_N"], BLOCK_K=cfg["BLOCK_K"], GROUP_M=GROUP_M,
                                       num_warps=cfg["NUM_WARPS"], num_stages=cfg["NUM_STAGES"])
    ms = bench(fn)
    torch.cuda.synchronize()
    rows = stamps[:min(launches[0], CAPACITY)].tolist()
    mhz = [(c1 - c0) / (n1 - n0) * 1e3 for c0, n0, c1, n1 in rows if n1 > n0]
    return ms, mhz


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    result = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
              "device": torch.cuda.get_device_name(0), "driver": smi(), "torch": torch.__version__,
              "triton": triton.__version__, "timing": {"warmup_ms": sw.WARMUP_MS, "rep_ms": sw.REP_MS},
              "results": []}
    for rnd in range(args.rounds):
        for (M, N, K), dtype_name in ROWS:
            dt = DTYPES[dtype_name]
            a = torch.randn((M, K), device="cuda", dtype=dt)
            b = torch.randn((K, N), device="cuda", dtype=dt)
            c = torch.empty((M, N), device="cuda", dtype=dt)
            for values in CONFIGS:
                cfg = dict(zip(NAMES, values))
                plain_ms = bench(lambda: launch_matmul(a, b, c, cfg))
                clocked_ms, mhz = clocked_burst(a, b, c, cfg)
                result["results"].append({"round": rnd, "M": M, "N": N, "K": K, "dtype": dtype_name, "config": cfg,
                                          "burst_ms": plain_ms, "clocked_burst_ms": clocked_ms, "sm_mhz": mhz,
                                          "median_mhz": statistics.median(mhz) if mhz else None})
                print(f"round {rnd} {M}x{N}x{K} {values}: {plain_ms * 1e3:.1f} us, clocked {clocked_ms * 1e3:.1f} us, "
                      f"SM clock median {statistics.median(mhz) if mhz else float('nan'):.0f} MHz over "
                      f"{len(mhz)} launches", flush=True)
                with open(args.out, "w") as f:
                    json.dump(result, f, indent=0)


if __name__ == "__main__":
    main()
