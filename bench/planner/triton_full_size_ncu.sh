#!/bin/bash
# One GPU call: Nsight Compute on full-size Triton matmul launches (ncu_full_size.py: duration, SM
# clock, DRAM bytes read, L2 read sectors, at 4096^3 and 3072^3), then the SM clock and power under
# back-to-back load (clock_under_load.py). Checks the planner's DRAM traffic per wave and the clock
# it assumes. docs/validation/planner-h100.md, "Full-size launches: DRAM traffic and clock".
# usage (on the GPU machine, with ncu, Triton and PyTorch): bench/planner/triton_full_size_ncu.sh OUTDIR
# writes OUTDIR/full.csv, full_order.json, full_summary.json and OUTDIR/clock.json.
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
