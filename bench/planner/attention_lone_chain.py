"""A lone flash-attention block per SM, per configuration of the planner's space: what one block's
KV step costs when nothing shares its SM (docs/validation/planner-h200-workloads.md, "Attention:
a lone block's KV step"), and with --per-sm K what it costs beside K - 1 others. The grid is
128 x K blocks (the H200 has 132 SMs), so every SM runs at most K blocks at once; two sequence
lengths at the same grid give the cost of a step without the block's prologue and epilogue:

    step = (time(2 x N) - time(N)) / (steps(2 x N) - steps(N))

with the batch halved at 2 x N so the grid stays. Timing as the workload sweeps time
(triton.testing.do_bench, median). Each row records ptxas's registers and the shared memory, so
the summary can say how many of the K blocks an SM holds at once.

    python3 bench/planner/attention_lone_chain.py OUT.json [--head-dims 64,128] [--per-sm 1,2,3,4]   # GPU machine
    python3 bench/planner/attention_lone_chain.py --summarize OUT.json [SIMULATE]      # anywhere
    ncu ... python3 bench/planner/attention_lone_chain.py ORDER.json --profile HD/BM/BN/S/W/K,...   # under ncu

--profile launches each listed configuration twice on its 128 x K grid at the longer sequence (the
first launch compiles) and writes ORDER.json as bench/planner/attention_ncu.py reads it, whose
--summarize gives the profile's table (bench/planner/attention_ncu.sh shows the ncu line).

The summary gives per configuration and K the step in SM cycles at the GPU's maximum clock and,
with SIMULATE, beside it what the attention graph charges one block per step (its math at the
tensor peak and its softmax).
"""
import argparse
import datetime
import itertools
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
GRID_BLOCKS = 128
N_SHORT = 4096


def measure(out_path, head_dims, per_sm):
    import torch
    import triton
    from sweep_workloads import attn_tensors, launch_attn
    rows = []
    for hd, k_blocks in itertools.product(head_dims, per_sm):
        for bm, bn, stages, warps in itertools.product((64, 128), (32, 64, 128), (2, 3, 4), (4, 8)):
            cfg = {"BLOCK_M": bm, "BLOCK_N": bn, "NUM_STAGES": stages, "NUM_WARPS": warps}
            row = {"HEAD_DIM": hd, "per_sm": k_blocks, "config": cfg, "ms": {}}
            for n in (N_SHORT, 2 * N_SHORT):
                heads = GRID_BLOCKS * k_blocks * bm // n
                q, k, v, o = attn_tensors(1, heads, n, hd)
                try:
                    kernel = launch_attn(q, k, v, o, cfg)
                    torch.cuda.synchronize()
                    row["n_regs"], row["shared"] = kernel.n_regs, kernel.metadata.shared
                    row["ms"][str(n)] = triton.testing.do_bench(lambda: launch_attn(q, k, v, o, cfg), warmup=3,
                                                                rep=20, return_mode="median")
                except Exception as e:  # noqa: BLE001 (out of resources: recorded, not fatal)
                    row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
                    break
            rows.append(row)
            print(hd, k_blocks, cfg, row.get("ms"), row.get("error", ""), flush=True)
    props = torch.cuda.get_device_properties(0)
    with open(out_path, "w") as f:
        json.dump({"date": datetime.datetime.now(datetime.timezone.utc).isoformat(), "device": props.name,
                   "sms": props.multi_processor_count, "torch": torch.__version__, "triton": triton.__version__,
                   "grid_blocks": GRID_BLOCKS, "n_short": N_SHORT, "rows": rows}, f, indent=1)


def profile(order_path, launches):
    import torch
    from sweep_workloads import attn_tensors, launch_attn
    order = []
    for launch in launches:
        hd, bm, bn, stages, warps, k_blocks = (int(x) for x in launch.split("/"))
        cfg = {"BLOCK_M": bm, "BLOCK_N": bn, "NUM_STAGES": stages, "NUM_WARPS": warps}
        n = 2 * N_SHORT
        heads = GRID_BLOCKS * k_blocks * bm // n
        q, k, v, o = attn_tensors(1, heads, n, hd)
        for _ in range(2):
            launch_attn(q, k, v, o, cfg)
            torch.cuda.synchronize()
        order.append({"BATCH_HEADS": heads, "N_CTX": n, "HEAD_DIM": hd, "per_sm": k_blocks, "config": cfg})
    with open(order_path, "w") as f:
        json.dump(order, f, indent=1)


def graph_terms(simulate, hd, cfg):
    """The attention graph's per-block math, sync and chain terms for one configuration, from
    `simulate plan` at the measured grid (one block per SM)."""
    n = 2 * N_SHORT
    heads = GRID_BLOCKS * cfg["BLOCK_M"] // n
    args = [simulate, "plan", "--device", "h200", "--graph", os.path.join(ROOT, "models/graphs/triton_attention.pbtxt"),
            "--set", f"BATCH_HEADS={heads}", "--set", f"N_CTX={n}", "--set", f"HEAD_DIM={hd}", "--format", "json",
            "--top", "100000", "--threads", "1"]
    for name, value in cfg.items():
        args += ["--param", f"{name}={value}"]
    out = subprocess.run(args, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        return None
    configs = json.loads(out.stdout)["configs"]
    return configs[0] if configs else None


def resident(row):
    """Blocks of the configuration an H200 SM holds at once (ptxas's registers in 8-register steps
    over 65,536; shared memory over 232,448 bytes and 1 KiB reserved per block; 64 warps), or None
    without the recorded figures."""
    if "n_regs" not in row:
        return None
    threads = row["config"]["NUM_WARPS"] * 32
    by_regs = 65536 // ((row["n_regs"] + 7) // 8 * 8 * threads)
    by_smem = 233472 // (row["shared"] + 1024)
    return min(by_regs, by_smem, 64 // row["config"]["NUM_WARPS"])


def summarize(path, simulate, clock_mhz):
    with open(path) as f:
        run = json.load(f)
    print(f"{run['device']}, Triton {run['triton']}, {run['date'][:16]}; cycles at {clock_mhz} MHz")
    print(f"{'HD K BLOCK_M/N/stages/warps':30}{'held':>5}{'step cycles':>12}{'graph math+softmax':>20}{'excess':>8}")
    for row in run["rows"]:
        c = row["config"]
        k_blocks = row.get("per_sm", 1)
        held = resident(row)
        name = f"{row['HEAD_DIM']:<3} {k_blocks} {c['BLOCK_M']}/{c['BLOCK_N']}/{c['NUM_STAGES']}/{c['NUM_WARPS']}"
        if "error" in row:
            print(f"{name:30}  {row['error'][:60]}")
            continue
        short, long_ = row["ms"][str(run["n_short"])], row["ms"][str(2 * run["n_short"])]
        steps = run["n_short"] // c["BLOCK_N"]
        step = (long_ - short) * 1e-3 * clock_mhz * 1e6 / steps
        line = f"{name:30}{held if held is not None else '-':>5}{step:12.0f}"
        terms = graph_terms(simulate, row["HEAD_DIM"], c) if simulate and k_blocks == 1 else None
        if terms:
            # One block per SM: the math and sync terms are one block's, over 2 x N / BLOCK_N steps.
            t = terms["terms_us"]
            work = (t["math"] + t["sync"]) * 1e-6 * clock_mhz * 1e6 / (2 * steps)
            line += f"{work:20.0f}{step - work:8.0f}"
        print(line)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("simulate", nargs="?")
    p.add_argument("--summarize", action="store_true")
    p.add_argument("--head-dims", default="64,128,256")
    p.add_argument("--per-sm", default="1", help="blocks each SM is given at once, a list: 1,2,3,4")
    p.add_argument("--profile", default=None, help="HD/BLOCK_M/BLOCK_N/STAGES/WARPS/K,... to launch for ncu")
    p.add_argument("--clock-mhz", type=float, default=1980)
    args = p.parse_args()
    if args.summarize:
        return summarize(args.out, args.simulate, args.clock_mhz)
    sys.path.insert(0, HERE)
    if args.profile:
        return profile(args.out, args.profile.split(","))
    return measure(args.out, [int(x) for x in args.head_dims.split(",")], [int(x) for x in args.per_sm.split(",")])


if __name__ == "__main__":
    main()
