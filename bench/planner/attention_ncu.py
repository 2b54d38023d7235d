"""Launches Triton attention configurations of the workload suite's fit part once each, for Nsight
Compute (bench/planner/attention_ncu.sh): what the tensor pipe, the softmax's pipes and the warps
do when a block runs alone on an SM against two co-resident blocks or two warpgroups
(docs/validation/planner-h200-workloads.md, "Attention: one chain or several").

    python3 bench/planner/attention_ncu.py ORDER.json                  # under ncu, on the GPU machine
    python3 bench/planner/attention_ncu.py --summarize ORDER.json NCU.csv[.gz]   # anywhere: the table

ORDER.json lists the launches in order (row, configuration), so the profile's rows can be matched;
each configuration launches twice (the first compiles) and the summary reads the second.
"""
import json
import sys

from ncu_csv import raw_kernels, values

# Fit-part rows only: (batch, heads, N_CTX, HEAD_DIM) and (BLOCK_M, BLOCK_N, NUM_STAGES, NUM_WARPS).
LAUNCHES = [
    ((1, 32, 8192, 64), (128, 128, 4, 4)),   # one block per SM (147,456 B), one warpgroup
    ((1, 32, 8192, 64), (128, 128, 3, 4)),   # two blocks per SM (114,688 B each)
    ((1, 32, 8192, 64), (128, 128, 4, 8)),   # one block, two warpgroups
    ((1, 32, 8192, 64), (128, 64, 3, 8)),    # the row's measured best
    ((1, 32, 2048, 128), (128, 32, 4, 4)),   # BLOCK_N 32: two blocks per SM
    ((1, 32, 2048, 128), (128, 128, 3, 8)),  # one block, two warpgroups
    ((1, 32, 2048, 128), (128, 64, 2, 4)),
]


# The summary's columns: (title, raw metric, scale).
COLUMNS = [
    ("us", "gpu__time_duration.sum", 1e-3),
    ("tensor%", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", 1),
    ("xu%", "sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active", 1),
    ("fma%", "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", 1),
    ("alu%", "sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active", 1),
    ("issue%", "sm__issue_active.avg.pct_of_peak_sustained_elapsed", 1),
    ("warps", "sm__warps_active.avg.per_cycle_active", 1),
    ("barrier", "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio", 1),
    ("wait", "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio", 1),
    ("long_sb", "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio", 1),
]


def summarize(order_path, csv_path):
    with open(order_path) as f:
        order = json.load(f)
    profiled = [values(k) for k in raw_kernels(csv_path)]
    print(f"{'row / BLOCK_M,BLOCK_N,stages,warps':36}" + "".join(f"{t:>9}" for t, _, _ in COLUMNS))
    for i, launch in enumerate(order):
        metrics = profiled[2 * i + 1]
        c = launch["config"]
        name = (f"{launch['BATCH_HEADS']}x{launch['N_CTX']}x{launch['HEAD_DIM']} / "
                f"{c['BLOCK_M']},{c['BLOCK_N']},{c['NUM_STAGES']},{c['NUM_WARPS']}")
        cells = [metrics[metric] * scale for _, metric, scale in COLUMNS]
        print(f"{name:36}" + "".join(f"{v:9.2f}" for v in cells))


def main():
    if sys.argv[1] == "--summarize":
        return summarize(sys.argv[2], sys.argv[3])
    import torch
    from sweep_workloads import attn_tensors, launch_attn
    order = []
    for (z, h, n, d), (bm, bn, stages, warps) in LAUNCHES:
        q, k, v, o = attn_tensors(z, h, n, d)
        cfg = {"BLOCK_M": bm, "BLOCK_N": bn, "NUM_STAGES": stages, "NUM_WARPS": warps}
        launch_attn(q, k, v, o, cfg)  # compiles (not profiled: ncu's filter takes the second launch)
        torch.cuda.synchronize()
        launch_attn(q, k, v, o, cfg)
        torch.cuda.synchronize()
        order.append({"BATCH_HEADS": z * h, "N_CTX": n, "HEAD_DIM": d, "config": cfg})
    with open(sys.argv[1], "w") as f:
        json.dump(order, f, indent=1)


if __name__ == "__main__":
    main()
