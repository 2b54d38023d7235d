#!/bin/bash
# Round 4 of docs/validation/planner-h100.md in one GPU call: Nsight Compute counts the shared-memory
# bank conflicts of a few Triton matmul configurations (ncu_smem_conflicts.py), then the sweep times
# the whole space on never-measured shapes and on round 3's fresh shapes. usage: round4_gpu.sh OUTDIR
set -u
OUT_DIR=$1
HERE=$(cd "$(dirname "$0")" && pwd)
export PYTHONUNBUFFERED=1 TRITON_CACHE_DIR=/tmp/scratchsim_triton_cache
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; which ncu; ncu --version | tail -1
METRICS=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__sass_inst_executed_op_shared_st.sum,smsp__sass_inst_executed_op_shared_ld.sum
timeout 100 ncu --clock-control none --csv --kernel-name regex:matmul_kernel --metrics "$METRICS" \
  python3 "$HERE/ncu_smem_conflicts.py" "$OUT_DIR/ncu_order.json" > "$OUT_DIR/ncu.csv" 2> "$OUT_DIR/ncu.err"
echo "ncu rc=$?"; tail -3 "$OUT_DIR/ncu.err"
python3 "$HERE/ncu_smem_conflicts.py" --summarize "$OUT_DIR/ncu_order.json" "$OUT_DIR/ncu.csv"
date -u
# New (never-measured) shapes first, then round 3's fresh shapes.
python3 "$HERE/sweep_triton_matmul.py" "$OUT_DIR/sweep4.json" --budget-s "${SWEEP_BUDGET:-185}" \
  --shapes 4608x4608x3072,2048x7168x5120,6656x1792x6144,5120x5120x2048,1536x6144x6144,7168x3584x2560,2560x2560x10240
date -u
