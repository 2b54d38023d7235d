"""Times Triton matmul configurations the way the sweeps do (do_bench: a burst of launches) and,
beside it, under a sustained loop, sampling the SM clock and the board's power while it runs: is a
configuration's burst time its own, or the clock the GPU holds under its power limit? (issue 34;
docs/validation/planner-h200-workloads.md, "The f32 32-row tiles at 3 and 4 stages").

    python3 bench/planner/sustained_clock.py OUT.json [--rounds 3] [--seconds 2]   # on the GPU machine

Per (shape, configuration), in ROUNDS rounds, each in the order given: the do_bench median (the
sweeps' 3 ms warm-up, 10 ms of repetitions), then a loop of launches for SECONDS whose mean time
comes from CUDA events while a thread samples the SM clock and the power (torch.cuda.clock_rate,
torch.cuda.power_draw: NVML) every 20 ms.
"""
import argparse
import datetime
import json
import statistics
import threading
import time

import torch
import triton

from sweep_workloads import DTYPES, bench, launch_matmul, smi

NAMES = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "NUM_STAGES", "NUM_WARPS")
# Rows where the 3-stage 32-row tile measured 1.18-1.30x faster than the 4-stage one in the sweeps,
# though Nsight Compute's single launches put them within 1-13%.
ROWS = [((2000, 3840, 2560), "f32"), ((2000, 4096, 2304), "f32"), ((64, 28672, 8192), "f32")]
CONFIGS = [(32, 256, 32, 3, 4), (32, 256, 32, 4, 4), (32, 128, 32, 3, 4), (32, 128, 32, 4, 4)]


def sustained(fn, seconds):
    """(mean ms a launch over a loop of `seconds`, SM clock samples in MHz, power samples in W)."""
    clocks, power, stop = [], [], threading.Event()

    def sample():
        while not stop.is_set():
            clocks.append(torch.cuda.clock_rate())
            power.append(torch.cuda.power_draw() / 1000)
            time.sleep(0.02)
    sampler = threading.Thread(target=sample)
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    fn()
    torch.cuda.synchronize()
    sampler.start()
    launches, start = 0, time.perf_counter()
    begin.record()
    while time.perf_counter() - start < seconds:
        for _ in range(20):
            fn()
        launches += 20
        torch.cuda.synchronize()
    end.record()
    torch.cuda.synchronize()
    stop.set()
    sampler.join()
    return begin.elapsed_time(end) / launches, clocks, power


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seconds", type=float, default=2.0)
    args = p.parse_args()
    records = []
    for (M, N, K), dtype_name in ROWS:
        dtype = DTYPES[dtype_name]
        a = torch.randn(M, K, device="cuda", dtype=dtype)
        b = torch.randn(K, N, device="cuda", dtype=dtype)
        c = torch.empty(M, N, device="cuda", dtype=dtype)
        for round_index in range(args.rounds):
            for cfg in CONFIGS:
                config = dict(zip(NAMES, cfg))
                fn = lambda: launch_matmul(a, b, c, config)  # noqa: E731
                burst = bench(fn)
                mean_ms, clocks, power = sustained(fn, args.seconds)
                records.append({"M": M, "N": N, "K": K, "dtype": dtype_name, "config": config, "round": round_index,
                                "do_bench_ms": burst, "sustained_ms": mean_ms,
                                "clock_mhz_median": statistics.median(clocks) if clocks else None,
                                "power_w_median": statistics.median(power) if power else None,
                                "clock_mhz": clocks, "power_w": power})
                print(f"{M}x{N}x{K} {'/'.join(map(str, cfg))} round {round_index}: do_bench {burst * 1e3:.1f} us, "
                      f"sustained {mean_ms * 1e3:.1f} us at {records[-1]['clock_mhz_median']} MHz, "
                      f"{records[-1]['power_w_median']:.0f} W", flush=True)
    with open(args.out, "w") as f:
        json.dump({"date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
                   "device": torch.cuda.get_device_name(0), "torch": torch.__version__, "triton": triton.__version__,
                   "driver": smi(), "rounds": args.rounds, "seconds": args.seconds, "records": records}, f, indent=0)


if __name__ == "__main__":
    main()
