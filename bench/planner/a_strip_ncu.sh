#!/bin/bash
# Nsight Compute on decode_ncu.py's "a_strip" set: per launch the duration, the L2's throughput
# broken down into its units (which one sets the pace), the SMs' L2 sectors by hit and miss, the
# fabric between the L2's partitions and DRAM. usage (GPU machine, with ncu, Triton and PyTorch):
# bench/planner/a_strip_ncu.sh OUTDIR -> OUTDIR/a_strip_order.json, a_strip_ncu.csv (--page raw).
set -u
OUT_DIR=$1
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/ncu_common.sh"
METRICS="gpu__time_duration.sum,breakdown:lts__throughput.avg.pct_of_peak_sustained_elapsed,\
lts__t_sectors_srcunit_tex_lookup_hit.sum,lts__t_sectors_srcunit_tex_lookup_miss.sum,\
lts__t_requests_srcunit_tex.sum,lts__t_sectors_srcunit_ltcfabric.sum,dram__bytes_read.sum,\
l1tex__m_xbar2l1tex_read_bytes.sum,smsp__issue_active.avg.pct_of_peak_sustained_active$STALLS"
timeout 300 ncu --clock-control none --csv --page raw --kernel-name regex:matmul_kernel --metrics "$METRICS" \
  python3 "$HERE/decode_ncu.py" "$OUT_DIR/a_strip_order.json" a_strip > "$OUT_DIR/a_strip_ncu.csv" \
  2> "$OUT_DIR/a_strip_ncu.err"
echo "ncu rc=$?"; tail -3 "$OUT_DIR/a_strip_ncu.err"
date -u
