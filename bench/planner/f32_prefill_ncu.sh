#!/bin/bash
# Nsight Compute on f32 prefill Triton matmuls (bench/planner/f32_prefill_ncu.py): per launch the
# duration, the tensor pipe's active cycles, shared-memory wavefronts and bank conflicts, the
# warps' stall reasons, registers and occupancy. usage (GPU machine, with ncu, Triton and
# PyTorch): bench/planner/f32_prefill_ncu.sh OUTDIR -> OUTDIR/f32_prefill_ncu.csv (--page raw),
# f32_prefill_order.json, f32_prefill_ncu.err; then a second pass with every shared-memory wavefront,
# bank-conflict, LDGSTS and shared-instruction metric the GPU offers, split by op (ld, st, gmma,
# ldgsts cache-access and bypass): OUTDIR/f32_prefill_ops_ncu.csv. NCU_SET picks the launches
# (f32_prefill_ncu.py's SETS; default f32_prefill); f32_l2 adds OUTDIR/f32_l2_ncu.csv (L2 traffic).
set -u
OUT_DIR=$1
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/ncu_common.sh"
METRICS="gpu__time_duration.sum,sm__cycles_active.avg,sm__pipe_tensor_op_hmma_cycles_active.avg,\
sm__pipe_tensor_op_gmma_cycles_active.avg,sm__inst_executed_pipe_tensor_op_gmma.sum,\
l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,\
smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.per_cycle_active,\
launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,\
launch__grid_size,dram__bytes_read.sum,lts__t_bytes.sum,sm__cycles_elapsed.avg,sm__cycles_active.max,sm__cycles_active.min,\
sm__ctas_launched.max,sm__ctas_launched.min,gpc__cycles_elapsed.max,sm__cycles_elapsed.avg.per_second,\
lts__t_sector_hit_rate.pct,dram__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__m_xbar2l1tex_read_bytes.sum$STALLS"
timeout 420 ncu --clock-control none --csv --page raw --kernel-name regex:matmul_kernel --metrics "$METRICS" \
  python3 "$HERE/f32_prefill_ncu.py" "$OUT_DIR/f32_prefill_order.json" > "$OUT_DIR/f32_prefill_ncu.csv" 2> "$OUT_DIR/f32_prefill_ncu.err"
echo "ncu rc=$?"; tail -3 "$OUT_DIR/f32_prefill_ncu.err"
ncu --query-metrics --chip gh100 > "$OUT_DIR/metrics.txt" 2>&1
# The f32_l2 set's second pass: the bytes the SMs receive from L2, the L2 sectors by source unit
# (the SMs, the fabric between the L2's two partitions) and their hits, DRAM reads.
if [ "${NCU_SET:-f32_prefill}" = f32_l2 ]; then
  L2=$(grep -oE "^(lts__t_sectors_srcunit_(tex|ltcfabric)(_lookup_(hit|miss))?|lts__t_requests_srcunit_tex|\
l1tex__m_xbar2l1tex_read_bytes)\b" "$OUT_DIR/metrics.txt" | sort -u | sed 's/$/.sum/' | paste -sd, -)
  timeout 400 ncu --clock-control none --csv --page raw --kernel-name regex:matmul_kernel \
    --metrics "gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__cycles_active.avg,lts__t_bytes.sum,\
dram__bytes_read.sum,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,$L2" \
    python3 "$HERE/f32_prefill_ncu.py" "$OUT_DIR/f32_prefill_order.json" > "$OUT_DIR/f32_l2_ncu.csv" 2>> "$OUT_DIR/f32_prefill_ncu.err"
  echo "ncu (L2) rc=$?"
fi
# The per-op pass is the f32 set's question (its bank counts); other sets stop here.
[ "${NCU_SET:-f32_prefill}" = f32_prefill ] || { date -u; exit 0; }
OPS=$(grep -oE "^(l1tex__data_pipe_lsu_wavefronts_mem_shared[a-z_]*|l1tex__data_bank_conflicts_pipe_lsu_mem_shared[a-z_]*|\
smsp__inst_executed_op_[a-z_]*shared[a-z_]*|smsp__inst_executed_op_ldsm|smsp__inst_executed_op_ldgsts[a-z_]*|\
l1tex__m_xbar2l1tex_read_bytes[a-z_]*|smsp__sass_inst_executed_op_ldgsts[a-z_]*|smsp__sass_inst_executed_op_shared[a-z_]*|\
smsp__sass_inst_executed_op_ldsm|l1tex__data_pipe_lsu_wavefronts)\b" "$OUT_DIR/metrics.txt" | sort -u | sed 's/$/.sum/' | paste -sd, -)
timeout 400 ncu --clock-control none --csv --page raw --kernel-name regex:matmul_kernel \
  --metrics "gpu__time_duration.sum,sm__cycles_active.avg,$OPS" \
  python3 "$HERE/f32_prefill_ncu.py" "$OUT_DIR/f32_prefill_order.json" > "$OUT_DIR/f32_prefill_ops_ncu.csv" 2>> "$OUT_DIR/f32_prefill_ncu.err"
echo "ncu (ops) rc=$?"
date -u
