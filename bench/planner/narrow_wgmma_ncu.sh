#!/bin/bash
# Nsight Compute on the 64 x 32 wgmma tile (decode_ncu.py's "narrow_wgmma" set): per launch the
# duration, the tensor pipe's active cycles, shared-memory wavefronts and conflicts, L2 and DRAM
# bytes, issue activity and the warps' stall reasons. usage (GPU machine, with ncu, Triton and
# PyTorch): bench/planner/narrow_wgmma_ncu.sh OUTDIR -> OUTDIR/decode_ncu.csv (--page raw),
# decode_order.json, decode_ncu.err, and a second pass of L2 counters to narrow_l2_ncu.csv.
set -u
OUT_DIR=$1
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/ncu_common.sh"
METRICS="gpu__time_duration.sum,sm__cycles_active.avg,sm__cycles_elapsed.avg.per_second,\
sm__pipe_tensor_op_gmma_cycles_active.avg,sm__pipe_tensor_op_hmma_cycles_active.avg,sm__inst_executed_pipe_tensor_op_gmma.sum,\
l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,\
smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.per_cycle_active,\
launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__grid_size,\
launch__waves_per_multiprocessor,dram__bytes_read.sum,lts__t_bytes.sum,lts__t_sector_hit_rate.pct,\
l1tex__m_xbar2l1tex_read_bytes.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,\
dram__throughput.avg.pct_of_peak_sustained_elapsed$STALLS"
timeout 420 ncu --clock-control none --csv --page raw --kernel-name regex:matmul_kernel --metrics "$METRICS" \
  python3 "$HERE/decode_ncu.py" "$OUT_DIR/decode_order.json" narrow_wgmma > "$OUT_DIR/decode_ncu.csv" 2> "$OUT_DIR/decode_ncu.err"
echo "ncu rc=$?"; tail -3 "$OUT_DIR/decode_ncu.err"
# A second pass: the L2 sectors and requests by source unit (the SMs, the fabric between the L2's
# two partitions) with their hits and misses, to OUTDIR/narrow_l2_ncu.csv.
ncu --query-metrics --chip gh100 > "$OUT_DIR/metrics.txt" 2>&1
L2=$(grep -oE "^(lts__t_(sectors|requests)_srcunit_(tex|ltcfabric)(_op_read)?(_lookup_(hit|miss))?|lts__t_sectors_srcunit_ltcfabric|\
lts__t_sectors_op_(read|write))\b" "$OUT_DIR/metrics.txt" | sort -u | sed 's/$/.sum/' | paste -sd, -)
timeout 300 ncu --clock-control none --csv --page raw --kernel-name regex:matmul_kernel \
  --metrics "gpu__time_duration.sum,lts__t_bytes.sum,l1tex__m_xbar2l1tex_read_bytes.sum,dram__bytes_read.sum,$L2" \
  python3 "$HERE/decode_ncu.py" "$OUT_DIR/decode_order.json" narrow_wgmma > "$OUT_DIR/narrow_l2_ncu.csv" 2>> "$OUT_DIR/decode_ncu.err"
echo "ncu (L2) rc=$?"
date -u
