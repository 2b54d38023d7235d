"""Launches the Triton matmul in f32 (TF32 dots) once per (shape, configuration) of the f32 prefill
check, for Nsight Compute (bench/planner/f32_prefill_ncu.sh): fit-part prefill rows of the workload
suite, the wgmma tiles the model ranks first (BLOCK_M >= 64) beside the mma.sync tiles (BLOCK_M =
32) that measure fastest, so that each loop's limiter (tensor pipe, shared-memory wavefronts,
stall reasons, registers) can be read per launch (docs/validation/planner-h200-workloads.md,
"The f32 prefill loop under Nsight Compute").

    NCU_SET=f32_prefill|f16_block_k|f32_l2 python3 f32_prefill_ncu.py ORDER.json   # launches (under ncu)
    python3 f32_prefill_ncu.py --summarize ORDER.json NCU.csv[.gz] OPS.csv[.gz]   # the table, per launch
    python3 f32_prefill_ncu.py --summarize-waves ORDER.json NCU.csv[.gz]        # f16_block_k's table
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# The launch sets (NCU_SET): (shapes, configurations, dtype).
SETS = {
    # The f32 prefill rows: wgmma tiles the model ranks first beside the mma.sync tiles that win.
    "f32_prefill": ([(2000, 6144, 4096), (2000, 3072, 2048)],
                    [(256, 128, 32, 4, 8), (256, 128, 32, 3, 8), (128, 256, 32, 3, 8), (128, 128, 32, 4, 4),
                     (128, 128, 32, 3, 8), (64, 256, 32, 3, 4), (32, 256, 32, 3, 4), (32, 128, 32, 3, 4),
                     (32, 256, 64, 3, 4)], "f32"),
    # f16 wgmma 128x128 at BLOCK_K 32 and 64, which the model ties: BLOCK_K 32 measured 1.39x and
    # 1.42x slower on the first two shapes (384 and 128 blocks) and 0.86x on the third (1024).
    "f16_block_k": ([(2000, 3072, 23040), (2000, 960, 2560), (2000, 8192, 3696)],
                    [(128, 128, 32, 4, 4), (128, 128, 64, 4, 4), (128, 128, 32, 3, 4), (128, 128, 64, 3, 4)], "f16"),
    # f32 32-row mma.sync tiles at BLOCK_K 32 and 64 and 2-4 stages beside the wgmma tile: where
    # their L2 traffic goes (sectors by source unit, the L2 fabric between the two partitions).
    "f32_l2": ([(2000, 6144, 4096), (2000, 3072, 2048)],
               [(32, 256, 32, 2, 4), (32, 256, 32, 3, 4), (32, 256, 32, 4, 4), (32, 256, 64, 2, 4),
                (32, 256, 64, 3, 4), (32, 256, 64, 4, 4), (32, 128, 32, 4, 4), (32, 128, 64, 4, 4),
                (256, 128, 32, 4, 8), (256, 128, 64, 2, 8)], "f32"),
}


def launch_all(order_path):
    sys.path.insert(0, HERE)
    from sweep_workloads import launch_in_order
    launch_in_order(order_path, *SETS[os.environ.get("NCU_SET", "f32_prefill")])


def summarize(order_path, csv_path, ops_path):
    """Per launch: time, the LSU's shared-memory wavefronts per K element of one block (all, the
    wgmma operand reads, the rest: LDGSTS copies through L1 with their bank conflicts, and ld.shared),
    the LDGSTS instructions that bypass L1 (16-byte) and go through it (4-byte), and the L2 traffic
    and its rate."""
    sys.path.insert(0, HERE)
    from ncu_csv import metric as value
    from ncu_csv import raw_kernels

    order = json.load(open(order_path))
    print("shape       config             us    wf/K  gmma  other  conflicts  bypass    ca  L2_GB  L2_TB/s")
    for o, k, ops in zip(order, raw_kernels(csv_path), raw_kernels(ops_path)):
        c = o["config"]
        blocks = -(-o["M"] // c["BLOCK_M"]) * -(-o["N"] // c["BLOCK_N"])
        per = lambda name: value(ops, name) / blocks / o["K"]  # noqa: E731
        wf = per("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum")
        gmma = per("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum")
        conflicts = per("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum")
        ca = per("smsp__sass_inst_executed_op_ldgsts_cache_access.sum")
        bypass = per("smsp__sass_inst_executed_op_ldgsts_cache_bypass.sum")
        us = value(k, "gpu__time_duration.sum") / 1e3
        l2 = value(k, "lts__t_bytes.sum")
        cfg = "/".join(str(v) for v in c.values())
        print(f"{o['N']}x{o['K']:<6} {cfg:14} {us:7.1f} {wf:7.1f} {gmma:5.1f} {wf - gmma:6.1f} {conflicts:9.1f} "
              f"{bypass:6.2f} {ca:5.2f} {l2 / 1e9:6.2f} {l2 / us / 1e6:7.2f}")


def summarize_waves(order_path, csv_path):
    """Per launch (the f16_block_k set): time, SM clock, elapsed cycles against the least and most
    active SM, the blocks each SM ran (fewest, most), resident warps, registers and the stalls
    that tell a K step's fixed wait (barrier) from load latency (long scoreboard)."""
    sys.path.insert(0, HERE)
    from ncu_csv import metric, raw_kernels

    def value(k, name):
        return metric(k, name, float("nan"))

    stall = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"
    print("shape        config            us    GHz  elapsed  active min..max   blocks/SM  warps/SM regs  barrier long_sb")
    for o, k in zip(json.load(open(order_path)), raw_kernels(csv_path)):
        c = o["config"]
        cfg = "/".join(str(v) for v in c.values())
        print(f"{o['N']}x{o['K']:<6} {cfg:15} {value(k, 'gpu__time_duration.sum') / 1e3:7.1f} "
              f"{value(k, 'sm__cycles_elapsed.avg.per_second') / 1e9:5.2f} {value(k, 'sm__cycles_elapsed.avg'):8.0f} "
              f"{value(k, 'sm__cycles_active.min'):8.0f}..{value(k, 'sm__cycles_active.max'):<8.0f} "
              f"{value(k, 'sm__ctas_launched.min'):3.0f}..{value(k, 'sm__ctas_launched.max'):<3.0f} "
              f"{value(k, 'sm__warps_active.avg.per_cycle_active'):9.1f} {value(k, 'launch__registers_per_thread'):5.0f} "
              f"{value(k, stall.format('barrier')):8.2f} {value(k, stall.format('long_scoreboard')):7.2f}")


if __name__ == "__main__":
    if sys.argv[1] == "--summarize":
        summarize(*sys.argv[2:5])
    elif sys.argv[1] == "--summarize-waves":
        summarize_waves(*sys.argv[2:4])
    else:
        launch_all(sys.argv[1])
