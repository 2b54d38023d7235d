"""Launches a few Triton matmul configurations once each, for Nsight Compute to count what one
block's K loop costs: shared-memory wavefronts and bank conflicts (ld, st and the cp.async/LDGSTS
writes), instructions, tensor-pipe and SM cycles (docs/validation/planner-h100.md, "The Triton
matmul's K loop (Nsight Compute)").

Each configuration runs at two K (same M, N): the difference of the counters between them is the
K loop alone (the epilogue, which also goes through shared memory, cancels). The configurations
are one of CONFIG_SETS, chosen by the environment variable NCU_CONFIG_SET:
  transpose_copy (default) f32 wgmma tiles, f16 twins and an mma.sync tile at M = N = 1024: is
                           there an ld.shared/st.shared copy of B in the f32 wgmma loop?
  families                 one or more tiles of every kernel family, 128 blocks (at most one per SM)
  narrow_b                 narrow f32 B tiles, two-stage pipelines, 8-warp mma.sync, 128 blocks
triton_ldst_ncu_and_sweep.sh and triton_k_loop_ncu.sh run it under ncu with their metric lists.

usage (on the GPU):
  ncu --clock-control none --csv --kernel-name regex:matmul_kernel --metrics ... \
      python3 ncu_smem_conflicts.py ORDER.json
  python3 ncu_smem_conflicts.py --summarize ORDER.json NCU.csv   (anywhere: the derived figures)

ORDER.json records the launch order, which is the order of ncu's kernel rows.
"""
import argparse
import json
import os
import sys

import ncu_csv

M0 = N0 = 1024
KS = (1024, 4096)
# (dtype, BLOCK_M, BLOCK_N, BLOCK_K, NUM_STAGES, NUM_WARPS)
CONFIG_SETS = {
    # is there an ld.shared/st.shared transposing copy of B in the f32 wgmma loop?
    "transpose_copy": [
        ("f32", 256, 128, 32, 4, 8), ("f32", 128, 128, 32, 3, 4), ("f32", 128, 256, 32, 3, 8),
        ("f32", 64, 128, 64, 3, 4), ("f32", 128, 64, 64, 3, 4), ("f32", 32, 256, 64, 4, 4),
        ("f16", 256, 128, 32, 4, 8), ("f16", 128, 128, 32, 3, 4), ("f16", 32, 256, 64, 4, 4),
    ],
    # cp.async (LDGSTS) shared-memory wavefronts and the K loop's cycles, per kernel family
    "families": [
        ("f32", 256, 128, 32, 4, 8), ("f32", 256, 64, 32, 4, 8), ("f32", 128, 128, 32, 3, 4),
        ("f32", 128, 256, 32, 3, 8), ("f32", 64, 128, 64, 3, 4), ("f32", 64, 256, 32, 3, 4),
        ("f32", 32, 256, 64, 4, 4), ("f32", 32, 256, 32, 4, 4), ("f32", 32, 128, 64, 4, 4),
        ("f32", 32, 64, 32, 3, 4),
        ("f16", 128, 256, 64, 3, 8), ("f16", 128, 256, 32, 4, 8), ("f16", 256, 128, 64, 3, 8),
        ("f16", 128, 128, 64, 4, 4), ("f16", 64, 256, 64, 3, 4), ("f16", 32, 256, 64, 4, 4),
        ("f16", 32, 128, 64, 4, 4),
    ],
    # the f32 B-copy conflict at narrow BLOCK_N, two-stage pipelines, 8-warp mma.sync
    "narrow_b": [
        ("f32", 256, 32, 32, 4, 4), ("f32", 256, 32, 32, 4, 8), ("f32", 256, 64, 32, 4, 4),
        ("f32", 128, 64, 32, 4, 4), ("f32", 128, 32, 64, 3, 4), ("f32", 64, 64, 64, 3, 4),
        ("f32", 256, 128, 32, 2, 8), ("f32", 128, 128, 32, 2, 4),
        ("f32", 32, 256, 64, 4, 8), ("f32", 32, 128, 64, 3, 8), ("f32", 32, 64, 64, 3, 4),
        ("f32", 32, 128, 32, 2, 4),
        ("f16", 128, 256, 64, 2, 8), ("f16", 128, 256, 32, 2, 8), ("f16", 128, 256, 32, 3, 8),
        ("f16", 64, 128, 64, 3, 4), ("f16", 128, 64, 64, 4, 4), ("f16", 32, 256, 32, 4, 4),
        ("f16", 32, 128, 64, 3, 8),
    ],
}
CONFIGS = CONFIG_SETS[os.environ.get("NCU_CONFIG_SET", "transpose_copy")]
NAMES = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "NUM_STAGES", "NUM_WARPS")
METRICS = [
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "smsp__sass_inst_executed_op_shared_st.sum",
    "smsp__sass_inst_executed_op_shared_ld.sum",
]


def launch_all(order_path):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import torch
    import sweep_triton_matmul as sweep

    order = []
    for dtype_name, *values in CONFIGS:
        cfg = dict(zip(NAMES, values))
        dtype = sweep.DTYPES[dtype_name]
        # families / narrow_b time the K loop per block: 8 x 16 = 128 blocks, at most one per SM of the 132.
        M, N = (8 * cfg["BLOCK_M"], 16 * cfg["BLOCK_N"]) if CONFIGS is not CONFIG_SETS["transpose_copy"] else (M0, N0)
        for K in KS:
            a = torch.randn(M, K, device="cuda", dtype=dtype)
            b = torch.randn(K, N, device="cuda", dtype=dtype)
            c = torch.empty(M, N, device="cuda", dtype=dtype)
            try:
                kernel = sweep.launch(a, b, c, cfg)
                torch.cuda.synchronize()
            except Exception as e:  # noqa: BLE001 - a refused configuration launches nothing
                order.append({"dtype": dtype_name, "config": cfg, "K": K, "launched": False,
                              "error": type(e).__name__})
                continue
            sass = {}
            try:
                text = kernel.asm.get("sass", "") or ""
                for op in ("STS.128", "STS.64", "STS ", "LDS.128", "LDS.64", "LDS ", "LDSM", "LDGSTS", "HGMMA"):
                    sass[op.strip()] = text.count(op)
            except Exception as e:  # noqa: BLE001 - the counts are optional context
                sass["error"] = type(e).__name__
            order.append({"dtype": dtype_name, "config": cfg, "M": M, "N": N, "K": K,
                          "grid": sweep.triton.cdiv(M, cfg["BLOCK_M"]) * sweep.triton.cdiv(N, cfg["BLOCK_N"]),
                          "sass_counts": sass})
    with open(order_path, "w") as f:
        json.dump(order, f, indent=1)


def k_pairs(order_path, csv_path):
    """The launch records with their metrics, paired (K low, K high) per configuration."""
    order = ncu_csv.attach([o for o in json.load(open(order_path)) if o.get("launched", True)], csv_path, order_path)
    return [(lo, hi) for lo, hi in zip(order, order[1:])
            if lo["config"] == hi["config"] and lo["dtype"] == hi["dtype"] and lo["K"] < hi["K"]]


def summarize(order_path, csv_path):
    pairs = k_pairs(order_path, csv_path)
    print("| dtype | BM/BN/BK/stages/warps | st wavefronts / K elt / block | st conflicts share | "
          "ld wavefronts / K elt / block | ld conflicts share | STS instr / K elt / block | "
          "st bank bytes per B byte (4 B x BLOCK_N per K elt) | ld bank bytes per B byte |")
    print("|---|---|---|---|---|---|---|---|---|")
    out = []
    for lo, hi in pairs:
        dk = hi["K"] - lo["K"]
        blocks = lo["grid"]
        per_block, _ = ncu_csv.k_loop(lo, hi, blocks)
        d = {m: per_block[m] for m in METRICS if m in per_block}
        st_w = d.get(METRICS[2], float("nan"))
        ld_w = d.get(METRICS[3], float("nan"))
        st_c = d.get(METRICS[0], float("nan"))
        ld_c = d.get(METRICS[1], float("nan"))
        st_i = d.get(METRICS[4], float("nan"))
        bn = lo["config"]["BLOCK_N"]
        # Bank traffic per byte of B tile copied: wavefronts x 128 B against 4 B x BLOCK_N.
        st_deg = st_w * 128 / (4 * bn)
        ld_deg = ld_w * 128 / (4 * bn)
        cfg = "/".join(str(lo["config"][n]) for n in NAMES)
        # A share of a difference that is noise next to the epilogue's fixed count says nothing.
        def share(conflicts, wavefronts, metric):
            if wavefronts * dk * blocks < 0.01 * hi["metrics"].get(metric, 0) or not wavefronts:
                return "n/a"
            return f"{conflicts / wavefronts:.2f}"
        print(f"| {lo['dtype']} | {cfg} | {st_w:.2f} | {share(st_c, st_w, METRICS[2])} | {ld_w:.2f} | "
              f"{share(ld_c, ld_w, METRICS[3])} | {st_i:.2f} | {st_deg:.2f} | {ld_deg:.2f} |")
        out.append({"dtype": lo["dtype"], "config": lo["config"], "per_k_elt_per_block": d,
                    "st_bank_bytes_per_b_byte": st_deg, "ld_bank_bytes_per_b_byte": ld_deg,
                    "sass_counts": lo["sass_counts"]})
    return out


def summarize_all(order_path, csv_path):
    """Every metric in the CSV, per K element per block (the K loop alone), one row per config."""
    out = []
    for lo, hi in k_pairs(order_path, csv_path):
        blocks = lo["grid"]
        # Cycles are per SM, not summed over blocks: per K element of one block's loop.
        per_block, per_k = ncu_csv.k_loop(lo, hi, blocks)
        cfg = "/".join(str(lo["config"][n]) for n in NAMES)
        print(f"{lo['dtype']} {cfg} grid {blocks}")
        for m in sorted(per_block):
            v = per_k[m] if m in per_k else per_block[m]
            unit = "per K elt" if m in per_k else "per K elt per block"
            print(f"    {m:70s} {v:12.3f}  {unit}")
        out.append({"dtype": lo["dtype"], "config": lo["config"], "grid": blocks,
                    "per_k_elt_per_block": {m: per_block[m] for m in per_block if m not in per_k},
                    "cycles_per_k_elt": per_k, "sass_counts": lo["sass_counts"]})
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("order")
    parser.add_argument("csv", nargs="?")
    parser.add_argument("--summarize", action="store_true")
    parser.add_argument("--summarize-all", action="store_true", help="every metric in the CSV, as JSON to --json")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    if args.summarize_all:
        out = summarize_all(args.order, args.csv)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(out, f, indent=1)
    elif args.summarize:
        summarize(args.order, args.csv)
    else:
        launch_all(args.order)


if __name__ == "__main__":
    main()
