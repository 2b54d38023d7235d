#!/bin/bash
# Rebuilds tests/data/occupancy/h200_carveout.csv, the table sim/occupancy_test.cc holds the
# launch carve-out rule against, from the raw Nsight Compute files beside it and the planner's
# earlier Triton profiles (docs/validation/carveout.md). usage: bench/cuda/carveout_fixture.sh
# (no GPU needed; python3 only). The raw files come from bench/cuda/carveout_probe.sh and
# bench/planner/decode_ncu.sh with the launch__ metrics (tests/data/occupancy/README.md).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RAW=$ROOT/tests/data/occupancy/h200-carveout-ncu-2026-12-03
PLANNER=$ROOT/docs/validation/data/planner
TABLE="python3 $ROOT/bench/cuda/carveout_table.py"
{
  $TABLE probe "$RAW/probe_fit_launches.csv" <(gzip -dc "$RAW/probe_fit_ncu.csv.gz") probe_fit --header
  $TABLE probe "$RAW/probe_heldout_launches.csv" <(gzip -dc "$RAW/probe_heldout_ncu.csv.gz") probe_heldout
  $TABLE probe "$RAW/probe_heldout2_launches.csv" <(gzip -dc "$RAW/probe_heldout2_ncu.csv.gz") probe_heldout2
  $TABLE probe "$RAW/probe_large_blocks_launches.csv" <(gzip -dc "$RAW/probe_large_blocks_ncu.csv.gz") probe_large_blocks
  for s in fit unaligned_l1 wide; do $TABLE triton "$RAW/triton_${s}_ncu.csv.gz" "triton_decode_$s"; done
  # The unaligned lm_heads of the reuse-window check, profiled after the rule (blind for it too).
  $TABLE triton "$ROOT/tests/data/planner/h200-l1-window-blind-2026-12-03/decode_ncu.csv.gz" triton_window
  # Triton launches profiled before the rule was read (planner runs of 2026-11-29 and -30).
  for f in h200-attention-lone-chain-2026-11-30/ncu-per-sm.csv.gz h200-attention-short-ncu-2026-11-30/attention_ncu.csv.gz \
           h200-f16-block-k-ncu-2026-11-30/f32_prefill_ncu.csv.gz h200-f32-l2-ncu-2026-11-30/f32_k_loop_ncu.csv.gz \
           h200-f32-l2-ncu-2026-11-30/f32_l2_ncu.csv.gz h200-f32-prefill-ncu-2026-11-30/f32_prefill_ncu.csv.gz \
           h200-f32-prefill-ncu-2026-11-30/f32_prefill_ops_ncu.csv.gz h200-workloads-2026-11-29/attention_ncu.csv.gz; do
    $TABLE triton "$PLANNER/$f" "triton_earlier"
  done
} > "$ROOT/tests/data/occupancy/h200_carveout.csv"
wc -l "$ROOT/tests/data/occupancy/h200_carveout.csv"
