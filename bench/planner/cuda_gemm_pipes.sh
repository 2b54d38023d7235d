#!/bin/bash
# Nsight Compute on key tiles of the CUDA backend's GEMM at 1-4 blocks per SM: issue activity,
# FMA sub-pipe instruction counts and stall reasons per issued instruction, to see why the FFMA
# issue cost falls as warps per scheduler rise (docs/validation/planner-h100.md, "Issue efficiency against
# warps per scheduler"). Tabulate with cuda_gemm_pipes_table.py.
# usage (on the GPU machine, with ncu): bench/planner/cuda_gemm_pipes.sh SCRATCHSIM_CUDA OUTDIR
set -u
BIN=$1
OUT_DIR=$2
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; ncu --version | tail -1
ncu --query-metrics --chip gh100 > "$OUT_DIR/query_metrics.txt" 2>&1
WANTED=""
for m in smsp__issue_active smsp__inst_executed smsp__inst_executed_pipe_fma smsp__inst_executed_pipe_fmaheavy \
         smsp__inst_executed_pipe_fmalite smsp__inst_executed_pipe_alu smsp__inst_executed_pipe_lsu \
         smsp__pipe_fma_cycles_active smsp__pipe_fmaheavy_cycles_active smsp__pipe_fmalite_cycles_active \
         sm__warps_active smsp__cycles_active; do
  if grep -q "^$m " "$OUT_DIR/query_metrics.txt"; then WANTED="$WANTED,$m"; fi
done
METRICS="${WANTED#,}"
METRICS=$(echo "$METRICS" | sed -e 's/smsp__issue_active/smsp__issue_active.avg.pct_of_peak_sustained_active/' \
  -e 's/smsp__inst_executed\b/smsp__inst_executed.sum/' -e 's/\(smsp__inst_executed_pipe_[a-z]*\)/\1.sum/g' \
  -e 's/\(smsp__pipe_[a-z]*_cycles_active\)/\1.avg.pct_of_peak_sustained_active/g' \
  -e 's/sm__warps_active/sm__warps_active.avg.per_cycle_active/' -e 's/smsp__cycles_active/smsp__cycles_active.avg/')
echo "metrics: $METRICS"
TILES='TiledGemmKernel<(float|__half), [^,]*(64, [^,]*64|128, [^,]*128|64, [^,]*128|32, [^,]*128), [^,]*32, [^,]*[48],'
timeout 540 ncu --clock-control none --csv --kernel-name-base demangled --kernel-name "regex:$TILES" \
  --metrics "$METRICS,regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio" \
  "$BIN" gemm-timing --shapes 2048x4096x1024 --stages 2:2 --launches 1 --blocks-per-sm 1,2,3,4 \
  --out "$OUT_DIR/pipes_order.json" > "$OUT_DIR/pipes.csv" 2> "$OUT_DIR/pipes.err"
echo "ncu rc=$?"; tail -3 "$OUT_DIR/pipes.err"; wc -l "$OUT_DIR/pipes.csv"
date -u
