"""Per K element of the loop of every compiled timing tile of the CUDA backend's GEMM, from the
CSV and launch order (`gemm-timing --out` JSON) that cuda_gemm_ncu.sh writes
(docs/validation/planner-h100.md, "The CUDA GEMM's K loop (Nsight Compute)"). gemm-timing launches each
configuration twice (the checked launch, then the timed one) at two K; the timed launches differ
only in K, so their difference is the loop alone.

usage: python3 cuda_gemm_ncu_summary.py ORDER.json NCU.csv [--json OUT.json]
"""
import argparse
import json

import ncu_csv

# Nsight Compute's view of one block (M = N = 1024 in cuda_gemm_ncu.sh).
PROBLEM_MN = 1024
NUM_SMS = 132


def summarize(order_path, csv_path):
    order = ncu_csv.attach(json.load(open(order_path))["timings"], csv_path, order_path, per_entry=2)
    rows = []
    for lo, hi in zip(order[::2], order[1::2]):
        assert lo["config"] == hi["config"] and lo["K"] < hi["K"], (lo, hi)
        c = lo["config"]
        grid = (PROBLEM_MN // c["BLOCK_M"]) * (PROBLEM_MN // c["BLOCK_N"])
        per_block, per_k = ncu_csv.k_loop(lo, hi, grid)
        rows.append({"dtype": lo["dtype"], "config": c, "grid": grid, "per_k_elt_per_block": per_block,
                     "sm_cycles_per_k_elt": per_k["sm__cycles_active.avg"]})
    print("dtype BM BN BK W grid | ld wavefronts, ld conflicts, ld instr, cp.async wavefronts | FFMA warp instr | "
          "SM cycles per K elt (avg over SMs), blocks per SM")
    for r in rows:
        c, d = r["config"], r["per_k_elt_per_block"]
        print(f"{r['dtype']} {c['BLOCK_M']} {c['BLOCK_N']} {c['BLOCK_K']} {c['NUM_WARPS']} {r['grid']} | "
              f"{d['l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum']:.1f} "
              f"{d['l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum']:.1f} "
              f"{d['smsp__inst_executed_op_shared_ld.sum']:.2f} "
              f"{d['smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum']:.2f} | "
              f"{d['smsp__sass_thread_inst_executed_op_ffma_pred_on.sum'] / 32:.1f} | "
              f"{r['sm_cycles_per_k_elt']:.1f} {r['grid'] / NUM_SMS:.2f}")
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("order")
    parser.add_argument("csv")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    rows = summarize(args.order, args.csv)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
