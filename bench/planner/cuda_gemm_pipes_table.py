"""Tabulates cuda_gemm_pipes.sh's Nsight Compute run: per tile and blocks per SM, issue activity,
warp instructions per warp and K element by pipe, and the main stall reasons per issued
instruction (docs/validation/planner-h100.md, "Issue efficiency against warps per scheduler").

usage: python3 cuda_gemm_pipes_table.py PIPES.csv PIPES_ORDER.json
"""
import collections
import json
import re
import sys

from ncu_csv import named_kernels

STALLS = ["wait", "short_scoreboard", "dispatch_stall", "math_pipe_throttle", "not_selected"]


def main():
    rows = named_kernels(sys.argv[1])
    order = json.load(open(sys.argv[2]))
    caps = collections.defaultdict(list)
    for t in order["timings"]:
        c = t["config"]
        caps[(t["dtype"], c["BLOCK_M"], c["BLOCK_N"], c["BLOCK_K"], c["NUM_WARPS"])].append(t["blocks_per_sm"])
    launches = collections.defaultdict(list)
    for name, kernel in rows:
        m = re.search(r"TiledGemmKernel<(\w+), (\d+), (\d+), (\d+), (\d+), 0>", name)
        dtype = "f32" if m.group(1) == "float" else "f16"
        launches[(dtype,) + tuple(int(x) for x in m.groups()[1:])].append(kernel)
    m_, n_, k_ = order["shapes"][0]
    print("| tile (BM/BN/BK/warps) | blocks/SM | warps per scheduler | issue active | inst per warp per K | FMA pipe (heavy / lite) |"
          + " " + " | ".join(s.replace("_", " ") for s in STALLS) + " |")
    print("|---|---|---|---|---|---|" + "---|" * len(STALLS))
    for key in sorted(launches):
        dtype, bm, bn, bk, warps = key
        # gemm-timing launches each configuration twice (check, then timing); the second is taken.
        for j, cap in enumerate(caps[key]):
            k = launches[key][2 * j + 1]
            per = lambda name: k[name] / ((m_ // bm) * (n_ // bn) * warps * k_)  # noqa: E731
            stalls = " | ".join("%.2f" % k["smsp__average_warps_issue_stalled_%s_per_issue_active.ratio" % s] for s in STALLS)
            print(f"| {dtype} {bm}/{bn}/{bk}/{warps} | {cap} | {warps * cap / 4:g} | "
                  f"{k['smsp__issue_active.avg.pct_of_peak_sustained_active']:.0f}% | {per('smsp__inst_executed.sum'):.1f} | "
                  f"{per('smsp__inst_executed_pipe_fma.sum'):.1f} ({per('smsp__inst_executed_pipe_fmaheavy.sum'):.1f} / "
                  f"{per('smsp__inst_executed_pipe_fmalite.sum'):.1f}) | {stalls} |")


if __name__ == "__main__":
    main()
