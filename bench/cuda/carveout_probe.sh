#!/bin/bash
# The shared-memory carve-out the driver picks, read by Nsight Compute over carveout_probe.cu's
# sweeps (docs/validation/carveout.md). usage (GPU machine, with nvcc and ncu):
# bench/cuda/carveout_probe.sh OUTDIR writes, for each SET of $SETS (fit heldout heldout2
# large_blocks by default), OUTDIR/SET_launches.csv (what each launch asked for, in order) and
# OUTDIR/SET_ncu.csv (ncu's launch attributes, same order), with SET_ncu.err and nvidia-smi.csv;
# bench/cuda/carveout_table.py joins them.
set -u
OUT_DIR=$1
HERE=$(cd "$(dirname "$0")" && pwd)
date -u
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$OUT_DIR/nvidia-smi.csv"
ncu --version | tail -1
nvcc --version | tail -1
nvcc -std=c++20 -arch=sm_90a -O2 -o /tmp/carveout_probe "$HERE/carveout_probe.cu" || exit 1
METRICS=launch__shared_mem_config_size,launch__shared_mem_per_block_dynamic,launch__shared_mem_per_block_static,launch__registers_per_thread,launch__block_size,launch__grid_size,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__occupancy_limit_warps,launch__occupancy_limit_blocks
for SET in ${SETS:-fit heldout heldout2 large_blocks}; do
  timeout "${NCU_TIMEOUT:-400}" ncu --clock-control none --csv --metrics "$METRICS" \
    /tmp/carveout_probe "$SET" > "$OUT_DIR/$SET.raw" 2> "$OUT_DIR/${SET}_ncu.err"
  echo "$SET: ncu rc=$?"
  # ncu's own lines and the program's CSV share stdout: split them.
  grep -v '^"' "$OUT_DIR/$SET.raw" | grep -v '^==' > "$OUT_DIR/${SET}_launches.csv"
  grep '^"' "$OUT_DIR/$SET.raw" > "$OUT_DIR/${SET}_ncu.csv"
  rm "$OUT_DIR/$SET.raw"
  wc -l "$OUT_DIR/${SET}_launches.csv" "$OUT_DIR/${SET}_ncu.csv"
done
date -u
