#!/bin/bash
# Nsight Compute on decode-shaped Triton matmuls (docs/planner.md, "Latency bound and overlap"):
# each launch's duration, DRAM bytes read and DRAM throughput, to set beside the model's latency
# chain and DRAM time, with the achieved occupancy and the waves. usage (GPU machine, with ncu,
# Triton and PyTorch): bench/planner/decode_ncu.sh OUTDIR [SET] (SET: decode_ncu.py's, fit by
# default) writes OUTDIR/decode_ncu.csv, decode_order.json, decode_ncu.err. NCU_METRICS replaces
# the metrics list (the set "unaligned" adds instructions and stall reasons); NCU_TIMEOUT the
# seconds ncu may run (240).
set -u
OUT_DIR=$1
SET=${2:-fit}
HERE=$(cd "$(dirname "$0")" && pwd)
export PYTHONUNBUFFERED=1 TRITON_CACHE_DIR=/tmp/scratchsim_triton_cache
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; ncu --version | tail -1
METRICS=${NCU_METRICS:-gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__cycles_active.avg,sm__warps_active.avg.pct_of_peak_sustained_active,launch__waves_per_multiprocessor}
# Metrics this GPU does not know are dropped (and named) rather than ending the run.
ncu --query-metrics > "$OUT_DIR/ncu_query.txt" 2>&1 && METRICS=$(python3 "$HERE/ncu_metrics_known.py" "$METRICS" "$OUT_DIR/ncu_query.txt")
timeout "${NCU_TIMEOUT:-240}" ncu --clock-control none --csv --kernel-name regex:matmul_kernel \
  --metrics "$METRICS" \
  python3 "$HERE/decode_ncu.py" "$OUT_DIR/decode_order.json" "$SET" > "$OUT_DIR/decode_ncu.csv" 2> "$OUT_DIR/decode_ncu.err"
echo "ncu rc=$?"; tail -3 "$OUT_DIR/decode_ncu.err"
date -u
