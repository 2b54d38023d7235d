"""The time away from the L1 a block's K step must take, per recorded unaligned f16 launch, for the
planner's synchronous-steps closed network (sim/planner/perf_model.cc, RunSynchronousSteps) to give
the cycles Nsight Compute measured: the model's bank time a block-step (terms_us.banks over the
busiest core's block-steps) and the launch's resident blocks (its occupancy limits where recorded,
else the plan's) are held, and the delay is solved for by bisection. An experiment beside
docs/validation/planner-h200-workloads.md, "Synchronous steps"; not product code.

    python3 bench/planner/sync_steps_implied_away.py build/simulate RUN_DIR [RUN_DIR ...]
"""
import json
import math
import subprocess
import sys
import os

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ncu_csv import kernels  # noqa: E402

CLOCK_HZ = 1.98e9  # the H200's SM clock the runs report (nvidia-smi.csv beside each)
CORES = 132


def round_time(customers, demand, delay):
    """Mean value analysis: the time for each of `customers` to make one cycle."""
    queue, throughput = 0.0, 0.0
    for k in range(1, customers + 1):
        residence = demand * (1 + queue)
        throughput = k / (residence + delay)
        queue = throughput * residence
    return customers / throughput


def implied_delay(customers, demand, measured):
    if round_time(customers, demand, 0) >= measured:
        return 0.0
    lo, hi = 0.0, 1e7
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if round_time(customers, demand, mid) < measured else (lo, mid)
    return lo


def metric(launch, name):
    return launch[name][0] if name in launch else None


def main(simulate, run_dirs):
    graph = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "models", "graphs",
                         "triton_matmul.pbtxt")
    print("M      N      K     tile                   MMA       blocks  bank_cyc  step_cyc  away_cyc")
    for run_dir in run_dirs:
        order = json.load(open(os.path.join(run_dir, "decode_order.json")))
        for o, m in zip(order, kernels(os.path.join(run_dir, "decode_ncu.csv.gz"))):
            if o.get("dtype", "f16") != "f16" or o["N"] % 16 == 0:
                continue
            c = o["config"]
            args = [simulate, "plan", "--device", "h200", "--graph", graph, "--format", "json", "--allow-spills",
                    "--set", f"M={o['M']}", "--set", f"N={o['N']}", "--set", f"K={o['K']}", "--set", "ELT=2"]
            args += sum((["--param", f"{k}={v}"] for k, v in c.items()), [])
            plan = json.loads(subprocess.run(args, capture_output=True, text=True, check=True).stdout)["configs"][0]
            cycles = metric(m, "sm__cycles_active.avg") or metric(m, "gpu__time_duration.sum") * CLOCK_HZ / 1e9
            grid = math.ceil(o["M"] / c["BLOCK_M"]) * math.ceil(o["N"] / c["BLOCK_N"])
            on_core = math.ceil(grid / CORES)
            limits = [metric(m, k) for k in ("launch__occupancy_limit_registers", "launch__occupancy_limit_shared_mem")]
            resident = int(min(x for x in limits if x)) if all(limits) else plan["blocks_per_core"]
            resident = min(resident, on_core)
            steps = math.ceil(o["K"] / c["BLOCK_K"])
            bank = plan["terms_us"]["banks"] * 1e-6 * CLOCK_HZ / (on_core * steps)
            step = cycles / (on_core / resident * steps)
            mma = "mma.sync" if c["BLOCK_M"] < 64 else "wgmma"
            tile = "/".join(str(v) for v in c.values())
            print(f"{o['M']:<6} {o['N']:<6} {o['K']:<5} {tile:22} {mma:9} {resident:6} {bank:9.0f} {step:9.0f} "
                  f"{implied_delay(resident, bank, step):9.0f}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
