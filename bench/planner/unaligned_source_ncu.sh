#!/bin/bash
# Nsight Compute's per-instruction warp stalls (SourceCounters) on the "unaligned_source" launches
# of decode_ncu.py: where a synchronously loaded B's K step spends its time away from the L1
# (docs/validation/planner-h200-workloads.md, "Synchronous steps"). usage (GPU machine, with ncu,
# Triton and PyTorch): bench/planner/unaligned_source_ncu.sh OUTDIR writes OUTDIR/source.ncu-rep,
# OUTDIR/source_sass.csv (the SASS source page of every launch, in decode_order.json's order) and
# OUTDIR/warp_states.csv (each launch's WarpStateStats).
set -u
OUT_DIR=$1
HERE=$(cd "$(dirname "$0")" && pwd)
export PYTHONUNBUFFERED=1 TRITON_CACHE_DIR=/tmp/scratchsim_triton_cache
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; ncu --version | tail -1
timeout "${NCU_TIMEOUT:-300}" ncu --clock-control none --kernel-name regex:matmul_kernel \
  --section SourceCounters --section WarpStateStats -f -o "$OUT_DIR/source" \
  python3 "$HERE/decode_ncu.py" "$OUT_DIR/decode_order.json" unaligned_source > "$OUT_DIR/ncu.log" 2>&1
echo "ncu rc=$?"; tail -3 "$OUT_DIR/ncu.log"
ncu --import "$OUT_DIR/source.ncu-rep" --page source --csv --print-source sass > "$OUT_DIR/source_sass.csv" 2> "$OUT_DIR/export.err"
echo "source export rc=$?"; head -c 300 "$OUT_DIR/export.err"
ncu --import "$OUT_DIR/source.ncu-rep" --page details --csv --section WarpStateStats > "$OUT_DIR/warp_states.csv" 2>> "$OUT_DIR/export.err"
echo "details export rc=$?"
date -u
