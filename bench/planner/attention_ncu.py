"""Launches Triton attention configurations of the workload suite's fit part once each, for Nsight
Compute (bench/planner/attention_ncu.sh): what the tensor pipe, the softmax's pipes and the warps
do when a block runs alone on an SM against two co-resident blocks or two warpgroups
(docs/validation/planner-h200-workloads.md, "Attention: one chain or several").

    python3 bench/planner/attention_ncu.py ORDER.json                  # under ncu, on the GPU machine
    python3 bench/planner/attention_ncu.py --summarize ORDER.json NCU.csv[.gz]   # anywhere: the table
    python3 bench/planner/attention_ncu.py --time      # the same launches timed as the sweeps time them

ATTN_NCU_SET=short launches the short-sequence set instead: the same work (batch x heads x N_CTX^2)
at 1,024, 2,048 and 4,096 tokens, head dim 128, for the tiles whose measured order flips with the
sequence length (docs/validation/planner-h200-workloads.md, "Attention at short sequences").

ORDER.json lists the launches in order (row, configuration), so the profile's rows can be matched;
each configuration launches twice (the first compiles) and the summary reads the second.
"""
import json
import os
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

SHORT_TILES = [(128, 128, 3, 8), (64, 64, 3, 4), (128, 64, 3, 8)]
SHORT_LAUNCHES = [(shape, tile) for shape in [(1, 256, 1024, 128), (1, 64, 2048, 128), (1, 16, 4096, 128)]
                  for tile in SHORT_TILES]


def launches():
    return SHORT_LAUNCHES if os.environ.get("ATTN_NCU_SET") == "short" else LAUNCHES


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
    ("active%", "sm__cycles_active.avg", 1),  # scaled to a share of the elapsed cycles below
    ("waves", "launch__waves_per_multiprocessor", 1),
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
        cells = [metrics.get(metric, float("nan")) * scale for _, metric, scale in COLUMNS]
        if "gpc__cycles_elapsed.max" in metrics and "sm__cycles_active.avg" in metrics:
            cells[[t for t, _, _ in COLUMNS].index("active%")] = (
                100 * metrics["sm__cycles_active.avg"] / metrics["gpc__cycles_elapsed.max"])
        print(f"{name:36}" + "".join(f"{v:9.2f}" for v in cells))


def time_launches():
    """Each launch's do_bench median (sweep_workloads.bench: its warm-up and repetitions), outside ncu."""
    from sweep_workloads import attn_tensors, bench, launch_attn
    print("batch x heads x N_CTX x HEAD_DIM / BLOCK_M,BLOCK_N,stages,warps   us")
    for (z, h, n, d), (bm, bn, stages, warps) in launches():
        q, k, v, o = attn_tensors(z, h, n, d)
        cfg = {"BLOCK_M": bm, "BLOCK_N": bn, "NUM_STAGES": stages, "NUM_WARPS": warps}
        ms = bench(lambda: launch_attn(q, k, v, o, cfg))
        print(f"{z * h}x{n}x{d} / {bm},{bn},{stages},{warps}   {1000 * ms:.1f}")


def main():
    if sys.argv[1] == "--summarize":
        return summarize(sys.argv[2], sys.argv[3])
    if sys.argv[1] == "--time":
        return time_launches()
    import torch
    from sweep_workloads import attn_tensors, launch_attn
    order = []
    for (z, h, n, d), (bm, bn, stages, warps) in launches():
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
