#!/bin/bash
# Nsight Compute on Triton attention launches of the workload suite's fit part (attention_ncu.py):
# per launch the Speed of Light, compute workload (pipe utilization), warp state (stall reasons)
# occupancy and launch sections (ATTN_NCU_SET=short: the short-sequence set). usage (GPU machine, with ncu, Triton and PyTorch):
#   bench/planner/attention_ncu.sh OUTDIR   -> OUTDIR/attention_ncu.csv, attention_order.json, attention_ncu.err
set -u
OUT_DIR=$1
HERE=$(cd "$(dirname "$0")" && pwd)
export PYTHONUNBUFFERED=1 TRITON_CACHE_DIR=/tmp/scratchsim_triton_cache
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; ncu --version | tail -1
# Each configuration launches twice (the first compiles); both are profiled, the second is read.
cd "$HERE" && timeout 400 ncu --clock-control none --csv --page raw --kernel-name regex:attn_fwd \
  --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats \
  python3 attention_ncu.py "$OUT_DIR/attention_order.json" > "$OUT_DIR/attention_ncu.csv" 2> "$OUT_DIR/attention_ncu.err"
echo "ncu rc=$?"; tail -3 "$OUT_DIR/attention_ncu.err"
date -u
