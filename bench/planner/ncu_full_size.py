"""Launches a few Triton matmul configurations at full problem size, for Nsight Compute to report
what the planner's model predicts per kernel: duration, the SM clock it ran at, SM cycles, DRAM
bytes read, L2 read sectors (and their hit share), tensor-pipe and shared-memory activity
(docs/validation/planner-h100.md, "Full-size launches: DRAM traffic and clock"); triton_full_size_ncu.sh runs it.

usage (on the GPU):
  ncu --clock-control none --csv --kernel-name regex:matmul_kernel --metrics ... \
      python3 ncu_full_size.py ORDER.json
  python3 ncu_full_size.py --summarize ORDER.json NCU.csv [--json OUT.json]

ORDER.json records the launch order, which is the order of ncu's kernel rows.
"""
import argparse
import json
import os
import sys

import ncu_csv

NAMES = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "NUM_STAGES", "NUM_WARPS")
SHAPES = [(4096, 4096, 4096), (3072, 3072, 3072)]
CONFIGS = [
    ("f32", 256, 128, 32, 4, 8), ("f32", 32, 256, 64, 4, 4), ("f32", 256, 64, 32, 4, 8),
    ("f32", 128, 128, 32, 3, 4),
    ("f16", 128, 256, 64, 4, 8), ("f16", 128, 256, 32, 4, 8), ("f16", 128, 128, 64, 4, 4),
    ("f16", 32, 256, 64, 4, 4),
]
METRICS = [
    "gpu__time_duration.sum", "sm__cycles_elapsed.avg.per_second", "sm__cycles_elapsed.max",
    "sm__cycles_active.avg", "dram__bytes_read.sum", "lts__t_sectors_srcunit_tex_op_read.sum",
    "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum", "sm__pipe_tensor_op_hmma_cycles_active.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
]


def launch_all(order_path):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import torch
    import sweep_triton_matmul as sweep

    order = []
    for M, N, K in SHAPES:
        for dtype_name, *values in CONFIGS:
            cfg = dict(zip(NAMES, values))
            dtype = sweep.DTYPES[dtype_name]
            a = torch.randn(M, K, device="cuda", dtype=dtype)
            b = torch.randn(K, N, device="cuda", dtype=dtype)
            c = torch.empty(M, N, device="cuda", dtype=dtype)
            try:
                sweep.launch(a, b, c, cfg)
                torch.cuda.synchronize()
            except Exception as e:  # noqa: BLE001 - a refused configuration launches nothing
                order.append({"dtype": dtype_name, "config": cfg, "M": M, "N": N, "K": K, "launched": False,
                              "error": type(e).__name__})
                continue
            order.append({"dtype": dtype_name, "config": cfg, "M": M, "N": N, "K": K,
                          "grid": sweep.triton.cdiv(M, cfg["BLOCK_M"]) * sweep.triton.cdiv(N, cfg["BLOCK_N"])})
    with open(order_path, "w") as f:
        json.dump(order, f, indent=1)


def summarize(order_path, csv_path, json_path):
    order = [o for o in json.load(open(order_path)) if o.get("launched", True)]
    profiled = ncu_csv.kernels(csv_path)
    if len(profiled) != len(order):
        sys.exit(f"{csv_path}: {len(profiled)} profiled kernels, {order_path} launched {len(order)}")
    print("| dtype | shape | BM/BN/BK/stages/warps | grid | time (us) | SM clock (MHz) | DRAM read (MB) | "
          "L2 read from SMs (MB) | L2 hit share | SM active cycles (avg) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for o, m in zip(order, profiled):
        o["metrics"] = ncu_csv.values(m)
        o["units"] = {k: v[1] for k, v in m.items()}

        time_us = ncu_csv.in_units(m, "gpu__time_duration.sum", ncu_csv.TO_US, 1.0)
        clock = ncu_csv.in_units(m, "sm__cycles_elapsed.avg.per_second", {"hz": 1e-6, "cycle/second": 1e-6, "khz": 1e-3,
                                 "mhz": 1.0, "ghz": 1e3, "cycle/nsecond": 1e3}, 1.0)
        dram = ncu_csv.in_units(m, "dram__bytes_read.sum", ncu_csv.TO_MB, 1.0)
        sectors = m.get("lts__t_sectors_srcunit_tex_op_read.sum", (float("nan"), ""))[0]
        hits = m.get("lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum", (float("nan"), ""))[0]
        active = m.get("sm__cycles_active.avg", (float("nan"), ""))[0]
        cfg = "/".join(str(o["config"][n]) for n in NAMES)
        o["derived"] = {"time_us": time_us, "sm_clock_mhz": clock, "dram_read_mb": dram,
                        "l2_read_mb": sectors * 32 / 1e6, "l2_hit_share": hits / sectors if sectors else None}
        print(f"| {o['dtype']} | {o['M']}x{o['N']}x{o['K']} | {cfg} | {o['grid']} | {time_us:.1f} | {clock:.0f} | "
              f"{dram:.1f} | {sectors * 32 / 1e6:.1f} | {hits / sectors if sectors else float('nan'):.3f} | {active:.0f} |")
    if json_path:
        with open(json_path, "w") as f:
            json.dump(order, f, indent=1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("order")
    parser.add_argument("csv", nargs="?")
    parser.add_argument("--summarize", action="store_true")
    parser.add_argument("--json", default=None)
    parser.add_argument("--metrics", action="store_true", help="print the metric list for ncu --metrics")
    args = parser.parse_args()
    if args.metrics:
        print(",".join(METRICS))
    elif args.summarize:
        summarize(args.order, args.csv, args.json)
    else:
        launch_all(args.order)


if __name__ == "__main__":
    main()
