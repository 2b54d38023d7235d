#!/bin/bash
# Nsight Compute on the Triton matmul's K loop: per K element of one block's loop, the
# shared-memory wavefronts and bank conflicts of every kind (ld, st and the cp.async/LDGSTS writes),
# the warp instructions, the tensor-pipe and the SM cycles, for the configurations of
# ncu_smem_conflicts.py's set $NCU_CONFIG_SET (default `families`: every kernel family; `narrow_b`:
# narrow f32 B tiles, two-stage pipelines, 8-warp mma.sync). Metric names are taken from this
# Nsight Compute's `--query-metrics`. docs/validation/planner-h100.md, "The Triton matmul's K loop (Nsight Compute)".
# usage (on the GPU machine, with ncu, Triton and PyTorch): [NCU_CONFIG_SET=narrow_b] \
#   bench/planner/triton_k_loop_ncu.sh OUTDIR
# writes OUTDIR/ncu.csv, ncu_order.json, ncu_summary.json (ncu_smem_conflicts.py --summarize-all), ncu_query.txt.
set -u
OUT_DIR=$1
HERE=$(cd "$(dirname "$0")" && pwd)
export PYTHONUNBUFFERED=1 TRITON_CACHE_DIR=/tmp/scratchsim_triton_cache NCU_CONFIG_SET=${NCU_CONFIG_SET:-families}
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; ncu --version | tail -1
ncu --query-metrics --chip gh100 > "$OUT_DIR/ncu_query.txt" 2>&1
# The metric names differ between Nsight Compute versions: take what this one lists.
WANT="l1tex__data_pipe_lsu_wavefronts_mem_shared l1tex__data_bank_conflicts_pipe_lsu_mem_shared
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st
l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st
smsp__inst_executed sm__cycles_active smsp__sass_inst_executed_op_shared_ld smsp__sass_inst_executed_op_shared_st
sm__pipe_tensor_op_hmma_cycles_active sm__pipe_tensor_op_gmma_cycles_active l1tex__t_requests_pipe_lsu_mem_global_op_ld"
LIST=""
for m in $WANT $(awk '{print $1}' "$OUT_DIR/ncu_query.txt" | grep -i ldgsts | sort -u); do
  if awk '{print $1}' "$OUT_DIR/ncu_query.txt" | grep -qx "$m"; then
    case $m in sm__cycles_active) LIST="$LIST,$m.max,$m.avg";; *) LIST="$LIST,$m.sum";; esac
  else echo "not listed: $m"; fi
done
LIST=${LIST#,}
echo "metrics: $LIST"
timeout 300 ncu --clock-control none --csv --kernel-name regex:matmul_kernel --metrics "$LIST" \
  python3 "$HERE/ncu_smem_conflicts.py" "$OUT_DIR/ncu_order.json" > "$OUT_DIR/ncu.csv" 2> "$OUT_DIR/ncu.err"
echo "ncu rc=$?"; tail -5 "$OUT_DIR/ncu.err"
python3 "$HERE/ncu_smem_conflicts.py" --summarize-all "$OUT_DIR/ncu_order.json" "$OUT_DIR/ncu.csv" --json "$OUT_DIR/ncu_summary.json"
date -u
