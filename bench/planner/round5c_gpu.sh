#!/bin/bash
# Round 5c of docs/validation/planner-h100.md in one GPU call: Nsight Compute on full-size launches
# (duration, SM clock, DRAM and L2 bytes: ncu_full_size.py), then the SM clock and power under
# back-to-back load (clock_under_load.py). usage: round5c_gpu.sh OUTDIR
set -u
OUT_DIR=$1
HERE=$(cd "$(dirname "$0")" && pwd)
export PYTHONUNBUFFERED=1 TRITON_CACHE_DIR=/tmp/scratchsim_triton_cache
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader; ncu --version | tail -1
timeout 300 ncu --clock-control none --csv --kernel-name regex:matmul_kernel \
  --metrics "$(python3 "$HERE/ncu_full_size.py" x --metrics)" \
  python3 "$HERE/ncu_full_size.py" "$OUT_DIR/full_order.json" > "$OUT_DIR/full.csv" 2> "$OUT_DIR/full.err"
echo "ncu rc=$?"; tail -3 "$OUT_DIR/full.err"
python3 "$HERE/ncu_full_size.py" --summarize "$OUT_DIR/full_order.json" "$OUT_DIR/full.csv" --json "$OUT_DIR/full_summary.json"
timeout 120 python3 "$HERE/clock_under_load.py" "$OUT_DIR/clock.json"
date -u
