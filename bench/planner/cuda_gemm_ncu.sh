#!/bin/bash
# Nsight Compute on the CUDA backend's GEMM (scratchsim_cuda gemm-timing): per K element of the
# loop, the shared-memory wavefronts (ld.shared and cp.async), the FMA-pipe and SM cycles of every
# compiled timing tile at two K (docs/validation/planner-h100.md, "The CUDA GEMM's K loop (Nsight Compute)").
# Summarize with cuda_gemm_ncu_summary.py OUTDIR/gemm_ncu_order.json OUTDIR/gemm_ncu.csv.
# usage (on the GPU machine, with ncu): bench/planner/cuda_gemm_ncu.sh SCRATCHSIM_CUDA OUTDIR
set -u
BIN=$1
OUT_DIR=$2
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; ncu --version | tail -1
METRICS=l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed.sum,sm__cycles_active.avg,sm__pipe_fma_cycles_active.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum
timeout 420 ncu --clock-control none --csv --kernel-name regex:TiledGemmKernel --metrics "$METRICS" \
  "$BIN" gemm-timing --shapes 1024x1024x1024,1024x1024x2048 --stages 2:2 --launches 1 \
  --out "$OUT_DIR/gemm_ncu_order.json" > "$OUT_DIR/gemm_ncu.csv" 2> "$OUT_DIR/gemm_ncu.err"
echo "ncu rc=$?"; tail -2 "$OUT_DIR/gemm_ncu.err"; wc -l "$OUT_DIR/gemm_ncu.csv"
date -u
