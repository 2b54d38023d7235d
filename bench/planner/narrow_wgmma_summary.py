"""The table of bench/planner/narrow_wgmma_ncu.sh's profile: per launch the duration, the bytes the
SMs received from L2 (l1tex__m_xbar2l1tex_read_bytes) and their rate, the L2 slices' bytes and
throughput, DRAM reads, issue activity, warps a cycle, registers and the largest stall reasons;
with the second pass's L2 counters, per launch the SMs' requests and sectors at the L2, sectors a
request, their rates, the sectors from the fabric between the L2's partitions and the SMs' hit rate.

    python3 bench/planner/narrow_wgmma_summary.py ORDER.json NCU.csv[.gz] [L2.csv[.gz]]
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ncu_csv import TO_MB, TO_US, in_units, metric, raw_kernels  # noqa: E402


def launches_in_order(order, csv_path):
    """[(launch, its profiled metrics), ...]: ncu profiles the launches in the order's order."""
    launches = raw_kernels(csv_path)
    if len(order) != len(launches):
        sys.exit(f"{csv_path}: {len(launches)} profiled launches, the order names {len(order)}")
    return zip(order, launches)


def row_name(o):
    tile = "/".join(str(v) for v in o["config"].values())
    return f"{o['M']}x{o['N']}x{o['K']:<7} {tile:11}"


def profile_table(order, csv_path):
    print("shape             tile         us  to_SMs_MB  TB/s  L2_MB  L2_%  dram_MB  issue_%  warps  regs  stalls")
    for o, k in launches_in_order(order, csv_path):
        us = in_units(k, "gpu__time_duration.sum", TO_US)
        to_sms = in_units(k, "l1tex__m_xbar2l1tex_read_bytes.sum", TO_MB)
        stalls = {n.split("stalled_")[1].split("_per_")[0]: v for n, (v, _) in k.items() if "_issue_stalled_" in n}
        top = " ".join(f"{n} {v:.1f}" for n, v in sorted(stalls.items(), key=lambda s: -s[1])[:3])
        print(f"{row_name(o)} {us:6.1f} {to_sms:9.0f} {to_sms / us:5.1f} "
              f"{in_units(k, 'lts__t_bytes.sum', TO_MB):6.0f} "
              f"{metric(k, 'lts__throughput.avg.pct_of_peak_sustained_elapsed'):5.1f} "
              f"{in_units(k, 'dram__bytes_read.sum', TO_MB):8.0f} "
              f"{metric(k, 'smsp__issue_active.avg.pct_of_peak_sustained_active'):7.1f} "
              f"{metric(k, 'sm__warps_active.avg.per_cycle_active'):6.1f} "
              f"{metric(k, 'launch__registers_per_thread'):5.0f}  {top}")


def l2_table(order, csv_path):
    print("\nshape             tile         us  requests_M  sectors_M  sectors/request  requests/ns  sectors/ns  "
          "fabric_sectors_M  hit_%")
    for o, k in launches_in_order(order, csv_path):
        ns = in_units(k, "gpu__time_duration.sum", TO_US) * 1e3
        requests = metric(k, "lts__t_requests_srcunit_tex.sum")
        sectors = metric(k, "lts__t_sectors_srcunit_tex.sum")
        hits = metric(k, "lts__t_sectors_srcunit_tex_lookup_hit.sum")
        print(f"{row_name(o)} {ns / 1e3:6.1f} {requests / 1e6:11.2f} {sectors / 1e6:10.2f} "
              f"{sectors / requests:16.2f} {requests / ns:12.1f} {sectors / ns:11.1f} "
              f"{metric(k, 'lts__t_sectors_srcunit_ltcfabric.sum') / 1e6:17.2f} {100 * hits / sectors:6.1f}")


def main(order_path, csv_path, l2_csv_path=None):
    order = json.load(open(order_path))
    profile_table(order, csv_path)
    if l2_csv_path:
        l2_table(order, l2_csv_path)


if __name__ == "__main__":
    main(*sys.argv[1:4])
