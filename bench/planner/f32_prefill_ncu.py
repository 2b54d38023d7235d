"""Launches the Triton matmul in f32 (TF32 dots) once per (shape, configuration) of the f32 prefill
check, for Nsight Compute (bench/planner/f32_prefill_ncu.sh): fit-part prefill rows of the workload
suite, the wgmma tiles the model ranks first (BLOCK_M >= 64) beside the mma.sync tiles (BLOCK_M =
32) that measure fastest, so that each loop's limiter (tensor pipe, shared-memory wavefronts,
stall reasons, registers) can be read per launch (docs/validation/planner-h200-workloads.md,
"The f32 prefill loop under Nsight Compute").

    NCU_SET=f32_prefill|f16_block_k|f32_l2|f32_k_loop|f32_stages python3 f32_prefill_ncu.py ORDER.json   # launches (under ncu)
    python3 f32_prefill_ncu.py --summarize ORDER.json NCU.csv[.gz] OPS.csv[.gz]   # the table, per launch
    python3 f32_prefill_ncu.py --summarize-waves ORDER.json NCU.csv[.gz]        # f16_block_k's and f32_stages' table
    python3 f32_prefill_ncu.py --summarize-l2 ORDER.json NCU.csv[.gz]           # f32_l2's table
    python3 f32_prefill_ncu.py --summarize-k-loop ORDER.json NCU.csv[.gz]       # f32_k_loop's table
"""
import json
import os
import sys

from ncu_csv import metric, raw_kernels

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
    # f32 32-row mma.sync tiles at BLOCK_K 32 and 64 beside the wgmma tile, on two fit rows: where
    # their L2 traffic goes (bytes the SMs receive, sectors the L2 slices serve, the fabric between
    # the L2's two partitions).
    "f32_l2": ([(2000, 6144, 4096), (2000, 3072, 2048)],
               [(32, 256, 32, 3, 4), (32, 256, 32, 4, 4), (32, 256, 64, 3, 4), (32, 256, 64, 4, 4),
                (32, 128, 32, 4, 4), (32, 128, 64, 4, 4), (256, 128, 32, 4, 8)], "f32"),
    # The same 32/256 loop at one block per SM (M = 256: 128 blocks) and at about three a core
    # (M = 768: 384 blocks), each at K = 1024 and 4096: the difference is the K loop alone.
    "f32_k_loop": ([(256, 4096, 1024), (256, 4096, 4096), (768, 4096, 1024), (768, 4096, 4096)],
                   [(32, 256, 32, 4, 4), (32, 256, 64, 4, 4), (32, 256, 32, 3, 4), (32, 256, 64, 3, 4)], "f32"),
    # The 32-row tiles at 3 and 4 stages where 3 measured 1.18-1.30x faster (grids of 149 to 1,008
    # blocks) beside a row where 4 measured 0.85x (112 blocks): what the deeper pipeline costs once
    # blocks share a core, or where they do not (149 blocks: 17 cores run two either way).
    "f32_stages": ([(2000, 3840, 2560), (2000, 4096, 2304), (64, 28672, 8192), (16, 38016, 8192), (64, 14336, 3584)],
                   [(32, 256, 32, 3, 4), (32, 256, 32, 4, 4), (32, 128, 32, 3, 4), (32, 128, 32, 4, 4)], "f32"),
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
    order = json.load(open(order_path))
    print("shape       config             us    wf/K  gmma  other  conflicts  bypass    ca  L2_GB  L2_TB/s")
    for o, k, ops in zip(order, raw_kernels(csv_path), raw_kernels(ops_path)):
        c = o["config"]
        blocks = -(-o["M"] // c["BLOCK_M"]) * -(-o["N"] // c["BLOCK_N"])
        per = lambda name: metric(ops, name) / blocks / o["K"]  # noqa: E731
        wf = per("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum")
        gmma = per("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum")
        conflicts = per("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum")
        ca = per("smsp__sass_inst_executed_op_ldgsts_cache_access.sum")
        bypass = per("smsp__sass_inst_executed_op_ldgsts_cache_bypass.sum")
        us = metric(k, "gpu__time_duration.sum") / 1e3
        l2 = metric(k, "lts__t_bytes.sum")
        cfg = "/".join(str(v) for v in c.values())
        print(f"{o['N']}x{o['K']:<6} {cfg:14} {us:7.1f} {wf:7.1f} {gmma:5.1f} {wf - gmma:6.1f} {conflicts:9.1f} "
              f"{bypass:6.2f} {ca:5.2f} {l2 / 1e9:6.2f} {l2 / us / 1e6:7.2f}")


def summarize_waves(order_path, csv_path):
    """Per launch (the f16_block_k set): time, SM clock, elapsed cycles against the least and most
    active SM, the blocks each SM ran (fewest, most), resident warps, registers and the stalls
    that tell a K step's fixed wait (barrier) from load latency (long scoreboard)."""

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


def summarize_l2(order_path, csv_path):
    """Per launch (the f32_l2 set): time and SM clock; the bytes the SMs received from L2
    (l1tex__m_xbar2l1tex_read_bytes) against the graph's global bytes (grid x (BLOCK_M + BLOCK_N) x K
    x 4) and their rate per second and per SM cycle; the sectors the L2 slices served the SMs, with
    their hit rate, and the fabric between the two partitions; DRAM reads."""

    print("shape       config            us   MHz  to_SMs_GB graph_GB  TB/s  B/clk/SM  slices_GB hit%  fabric_GB  dram_GB")
    for o, k in zip(json.load(open(order_path)), raw_kernels(csv_path)):
        c = o["config"]
        blocks = -(-o["M"] // c["BLOCK_M"]) * -(-o["N"] // c["BLOCK_N"])
        graph = blocks * (c["BLOCK_M"] + c["BLOCK_N"]) * o["K"] * 4
        us = metric(k, "gpu__time_duration.sum") / 1e3
        hz = metric(k, "sm__cycles_elapsed.avg.per_second")
        to_sms = metric(k, "l1tex__m_xbar2l1tex_read_bytes.sum")
        tex = metric(k, "lts__t_sectors_srcunit_tex.sum")
        hit = metric(k, "lts__t_sectors_srcunit_tex_lookup_hit.sum")
        fabric = metric(k, "lts__t_sectors_srcunit_ltcfabric.sum")
        cfg = "/".join(str(v) for v in c.values())
        print(f"{o['N']}x{o['K']:<6} {cfg:15} {us:7.1f} {hz / 1e6:5.0f} {to_sms / 1e9:9.2f} {graph / 1e9:8.2f} "
              f"{to_sms / us / 1e6:5.2f} {to_sms / (us * 1e-6 * hz * 132):9.1f} {tex * 32 / 1e9:10.2f} "
              f"{100 * hit / tex:4.0f} {fabric * 32 / 1e9:10.2f} {metric(k, 'dram__bytes_read.sum') / 1e9:8.2f}")


def summarize_k_loop(order_path, csv_path):
    """The f32_k_loop set: per configuration and grid, the K loop's cycles per K element on the
    busiest SM (K = 4096 minus K = 1024), per block on it (blocks / 132 rounded up), and the graph's
    L2 bytes per block and K element over them."""

    runs = {}
    for o, k in zip(json.load(open(order_path)), raw_kernels(csv_path)):
        runs[(o["M"], o["N"], tuple(o["config"].values()), o["K"])] = k
    print("M     config           blocks  cycles/K(busiest SM)  per block  L2 B/clk/SM  MHz")
    for (m, n, cfg, k_hi), hi in sorted(runs.items()):
        lo = runs.get((m, n, cfg, 1024))
        if k_hi == 1024 or lo is None:
            continue
        blocks = -(-m // cfg[0]) * -(-n // cfg[1])
        on_sm = -(-blocks // 132)
        per_k = (metric(hi, "sm__cycles_active.max") - metric(lo, "sm__cycles_active.max")) / (k_hi - 1024)
        print(f"{m:<5} {'/'.join(map(str, cfg)):16} {blocks:6} {per_k:20.1f} {per_k / on_sm:10.1f} "
              f"{(cfg[0] + cfg[1]) * 4 * on_sm / per_k:12.1f} {metric(hi, 'sm__cycles_elapsed.avg.per_second') / 1e6:5.0f}")


if __name__ == "__main__":
    if sys.argv[1] == "--summarize":
        summarize(*sys.argv[2:5])
    elif sys.argv[1] == "--summarize-waves":
        summarize_waves(*sys.argv[2:4])
    elif sys.argv[1] == "--summarize-l2":
        summarize_l2(*sys.argv[2:4])
    elif sys.argv[1] == "--summarize-k-loop":
        summarize_k_loop(*sys.argv[2:4])
    else:
        launch_all(sys.argv[1])
