"""Is the A strip's cost on wide decode rows its bytes, or its repeated lines? Times Triton matmul
tiles on 16-token f16 rows of wide N twice: with A of 16 rows (the kernel wraps its rows modulo
M, so a BLOCK_M of 32-256 loads the same 16 rows' lines BLOCK_M / 16 times in every block) and
with A of BLOCK_M distinct rows (the same bytes per block, every line distinct).

    python3 bench/planner/a_strip_probe.py OUT.json [--budget-s 120]
    python3 bench/planner/a_strip_probe.py --summarize OUT.json [ORDER.json NCU.csv]

(--summarize: the two launches of each tile side by side, and with a_strip_ncu.sh's files the L2's
busiest units, its hit and miss sectors, the fabric's bytes and the SMs' issue activity.)

Equal times say the tile bytes' rate alone sets the cost; a slower 16-row launch says the
repeated lines do (docs/validation/planner-h200-workloads.md, "The A strip on wide decode rows").
"""
import argparse
import datetime
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

SHAPES = [(16, 35840, 6656), (16, 36864, 4608)]
TILES = [(32, 32, 64, 4, 4), (32, 32, 64, 2, 4), (64, 32, 64, 4, 4), (128, 32, 64, 4, 4), (32, 64, 64, 4, 4),
         (32, 128, 64, 3, 4), (32, 128, 128, 2, 4), (64, 128, 64, 3, 4), (128, 64, 64, 3, 4)]
NAMES = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "NUM_STAGES", "NUM_WARPS")


def summarize(probe_path, order_path=None, ncu_path=None):
    runs = {}
    for t in json.load(open(probe_path))["timings"]:
        runs.setdefault((t["M"], t["N"], t["K"], tuple(t["config"][n] for n in NAMES)), {})[t["a_rows"]] = t["ms"] * 1e3
    print("shape             tile          A of M rows (us)  of BLOCK_M rows (us)  ratio")
    for (m, n, k, tile), by_rows in runs.items():
        wrapped, distinct = by_rows.get(m), by_rows.get(max(m, tile[0]))
        if wrapped and distinct:
            print(f"{m}x{n}x{k:<7} {'/'.join(map(str, tile)):14} {wrapped:16.1f} {distinct:21.1f} {wrapped / distinct:6.2f}")
    if not ncu_path:
        return
    from ncu_csv import raw_kernels
    units = ("ltcfabric2ltc_cycles_active", "lts2xbar_cycles_active_realtime", "t_sectors", "t_tag_requests",
             "d_sectors", "xbar2lts_cycles_active")
    print("\nshape             tile          us     busiest L2 units (% of peak)                      "
          "hit_MB  miss_MB  fabric_MB  issue_%")
    for o, k in zip(json.load(open(order_path)), raw_kernels(ncu_path)):
        us = k["gpu__time_duration.sum"][0] / 1e3
        pct = sorted(((k.get(f"lts__{u}.avg.pct_of_peak_sustained_elapsed", (0, ""))[0], u) for u in units),
                     reverse=True)[:2]
        mb = [k[f"lts__t_sectors_srcunit_{s}.sum"][0] * 32 / 1e6 for s in ("tex_lookup_hit", "tex_lookup_miss",
                                                                           "ltcfabric")]
        tile = "/".join(str(o["config"][n]) for n in NAMES)
        busiest = "  ".join(f"{u} {v:.0f}" for v, u in pct)
        print(f"{o['M']}x{o['N']}x{o['K']:<7} {tile:14} {us:6.1f}  {busiest:50} {mb[0]:6.0f} {mb[1]:8.0f} "
              f"{mb[2]:10.0f} {k['smsp__issue_active.avg.pct_of_peak_sustained_active'][0]:7.1f}")


def main():
    if sys.argv[1:2] == ["--summarize"]:
        summarize(*sys.argv[2:5])
        return
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--budget-s", type=float, default=120)
    args = p.parse_args()
    import torch
    import triton
    from sweep_workloads import bench, launch_matmul, smi
    start = time.time()
    result = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
              "device": torch.cuda.get_device_name(0), "torch": torch.__version__, "triton": triton.__version__,
              "driver": smi(), "timing": {"mode": "burst", "stat": "median"}, "timings": []}
    for M, N, K in SHAPES:
        b = torch.randn(K, N, device="cuda", dtype=torch.float16)
        for tile in TILES:
            cfg = dict(zip(NAMES, tile))
            for rows in (M, max(M, cfg["BLOCK_M"])):
                if time.time() - start > args.budget_s:
                    break
                a = torch.randn(rows, K, device="cuda", dtype=torch.float16)
                c = torch.empty(rows, N, device="cuda", dtype=torch.float16)
                ms = bench(lambda: launch_matmul(a, b, c, cfg))
                result["timings"].append({"M": M, "N": N, "K": K, "a_rows": rows, "config": cfg, "ms": ms})
                print(M, N, K, rows, tile, f"{ms * 1000:.1f} us", flush=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
