#!/bin/bash
# One GPU call, two parts. (1) Nsight Compute counts the ld.shared/st.shared wavefronts, bank
# conflicts and instructions of the Triton matmul configurations of ncu_smem_conflicts.py's
# `transpose_copy` set at two K (the K loop alone: is there a transposing copy of B in the f32 wgmma
# loop?). (2) sweep_triton_matmul.py times the whole configuration space on $SHAPES (default: the
# shapes of tests/data/planner/planner-h100-triton-sweep-4.json.gz). docs/validation/planner-h100.md,
# "The Triton matmul's K loop (Nsight Compute)".
# usage (on the GPU machine, with ncu, Triton and PyTorch): [SHAPES=MxNxK,...] [SWEEP_BUDGET=185] \
#   bench/planner/triton_ldst_ncu_and_sweep.sh OUTDIR
# writes OUTDIR/ncu.csv, ncu_order.json, ncu.err (summary on stdout) and OUTDIR/sweep.json.
set -u
OUT_DIR=$1
HERE=$(cd "$(dirname "$0")" && pwd)
export PYTHONUNBUFFERED=1 TRITON_CACHE_DIR=/tmp/scratchsim_triton_cache NCU_CONFIG_SET=transpose_copy
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; which ncu; ncu --version | tail -1
METRICS=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__sass_inst_executed_op_shared_st.sum,smsp__sass_inst_executed_op_shared_ld.sum
timeout 100 ncu --clock-control none --csv --kernel-name regex:matmul_kernel --metrics "$METRICS" \
  python3 "$HERE/ncu_smem_conflicts.py" "$OUT_DIR/ncu_order.json" > "$OUT_DIR/ncu.csv" 2> "$OUT_DIR/ncu.err"
echo "ncu rc=$?"; tail -3 "$OUT_DIR/ncu.err"
python3 "$HERE/ncu_smem_conflicts.py" --summarize "$OUT_DIR/ncu_order.json" "$OUT_DIR/ncu.csv"
date -u
SHAPES=${SHAPES:-4608x4608x3072,2048x7168x5120,6656x1792x6144,5120x5120x2048,1536x6144x6144,7168x3584x2560,2560x2560x10240}
python3 "$HERE/sweep_triton_matmul.py" "$OUT_DIR/sweep.json" --budget-s "${SWEEP_BUDGET:-185}" --shapes "$SHAPES"
date -u
