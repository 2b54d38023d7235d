#!/usr/bin/env bash
# The GPU half of the planner's transfer test (issue 19; docs/validation/planner-h200-transfer.md).
# Times the Triton matmul and the CUDA backend's GEMM on the shapes of a plan file committed
# BEFORE this run (bench/planner/make_transfer_plans.py), probes the device, and compares.
#
# On the GPU machine, from the repository root, with build-gpu/scratchsim_cuda carried (static,
# docs/gpu-validation.md "Build"); needs Python 3 with torch and triton; no network:
#
#   OUT=/some/dir [PLAN_SET=transfer2] [STEADY=1] [STEPS=...] bash bench/planner/h200_transfer_gpu.sh [PLANS.json]
#
# STEPS (comma-separated; default probe,triton,gemm,compare,clock, plus steady with STEADY=1) picks
# the steps, so that a run longer than one call of the GPU machine can be split over several into
# the same $OUT; STEADY_DTYPES (default f32) the dtypes of the steady-state sweep, whose file is
# triton-steady-DTYPES.json (the third run: STEPS=steady STEADY_DTYPES=f16, then =f32).
#
# PLAN_SET picks the plan files tests/data/planner/planner-DEVICE-PLAN_SET-plans-DATE.json
# (default "transfer", the first run's; "transfer2" the second's, on other fresh shapes).
# Writes into $OUT/h200-transfer/ (each step's own file, so a step that fails or runs out of time leaves the
# others): nvidia-smi.csv, probe.textproto + probe.txt (`scratchsim_cuda probe --measure-memory
# --compare h200`: the inherited h200 model against the device), triton-sweep.json
# (sweep_triton_matmul.py), cuda-gemm-timing.json (`gemm-timing --stages 2:4`), comparison.md and
# comparison.json (compare_transfer.py against the plans for the device the machine has),
# clock-under-load.json (clock_under_load.py: the SM clock, power and throttle reasons while the
# leading f32 and f16 configurations run back to back on the first Triton shape), run.log.
# Budget: about 6 minutes (probe < 0.5, Triton sweep <= 3.3 with its own deadline, gemm-timing
# <= 4 by timeout, clocks <= 1.5; each step is cut by `timeout`).
set -u
cd "$(dirname "$0")/../.."
# Results go to $OUT/h200-transfer/ and, archived, to $OUT/h200-transfer-DATE.tar.gz.
OUT=${OUT:-/tmp}/h200-transfer
mkdir -p "$OUT"
export SCRATCHSIM_MODELS=$PWD/models/devices
start=$(date +%s)
log() { echo "[$(( $(date +%s) - start )) s] $*" | tee -a "$OUT/run.log"; }
STEPS=${STEPS:-probe,triton,gemm,compare,clock$([ "${STEADY:-0}" = 1 ] && echo ,steady)}
want() { [[ ",$STEPS," == *",$1,"* ]]; }
log "steps: $STEPS"

nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,power.limit,memory.total \
    --format=csv > "$OUT/nvidia-smi.csv" 2>&1
gpu=$(tail -n +2 "$OUT/nvidia-smi.csv" | head -1)
log "GPU: $gpu"
# The plans for the device this machine has (H200 normally; an H100 gets the H100 plans).
case "$gpu" in
  *H200*) device=h200 ;;
  *H100*) device=h100 ;;
  *) device=h200 ;;
esac
PLAN_SET=${PLAN_SET:-transfer}
PLANS=${1:-$(ls tests/data/planner/planner-${device}-${PLAN_SET}-plans-*.json 2>/dev/null | grep -v calibrated | sort | tail -1)}
if [ ! -f "$PLANS" ]; then log "no plan file for $device"; exit 2; fi
log "plans: $PLANS (device $device)"
shapes() {
  python3 -c "import json, sys; print(','.join('x'.join(map(str, s)) for s in json.load(open(sys.argv[1]))['shapes'][sys.argv[2]]))" \
      "$PLANS" "$1"
}
TRITON_SHAPES=$(shapes triton)
GEMM_SHAPES=$(shapes cuda_gemm)
log "triton shapes $TRITON_SHAPES; cuda gemm shapes $GEMM_SHAPES"

# 1. The device as the probe reads it, compared field by field with the shipped h200 model
#    (which inherits h100's on-chip terms): what the inheritance assumed, now measured.
if want probe; then
  timeout 90 build-gpu/scratchsim_cuda probe --measure-memory --compare "$device" --out "$OUT/probe.textproto" \
      > "$OUT/probe.txt" 2>&1
  log "probe exit $? (1: the model differs somewhere; see probe.txt)"
fi

# 2. The Triton matmul: every configuration of the 288-point space, f16 and f32 (tf32 dot), on the
#    plan's shapes. --budget-s stops it (keeping what it has) before the timeout would.
if want triton; then
  timeout 230 python3 bench/planner/sweep_triton_matmul.py "$OUT/triton-sweep.json" --shapes "$TRITON_SHAPES" \
      --budget-s 190 --workers 14 > "$OUT/triton-sweep.log" 2>&1
  log "triton sweep exit $?"
fi

# 3. The CUDA backend's GEMM: the 72 timing tiles at depths 2-4 (median of 5 launches each).
if want gemm; then
  timeout 240 build-gpu/scratchsim_cuda gemm-timing --shapes "$GEMM_SHAPES" --stages 2:4 --launches 5 \
      --out "$OUT/cuda-gemm-timing.json" > /dev/null 2> "$OUT/cuda-gemm-timing.log"
  log "gemm-timing exit $?"
fi

# 4. The comparison (seconds, CPU): plans made before this run against these timings.
args=()
[ -s "$OUT/triton-sweep.json" ] && args+=(--triton "$OUT/triton-sweep.json")
[ -s "$OUT/cuda-gemm-timing.json" ] && args+=(--cuda-gemm "$OUT/cuda-gemm-timing.json")
if want compare; then
  python3 bench/planner/compare_transfer.py "$PLANS" "${args[@]}" --tolerance 0.003 --json "$OUT/comparison.json" \
      > "$OUT/comparison.md" 2>&1
  log "compare exit $?"
  for p in tests/data/planner/planner-${device}-${PLAN_SET}-plans-*calibrated*.json; do
    [ -f "$p" ] || continue
    name=$(basename "$p" .json | sed 's/.*transfer-plans-//')  # calibrated-time-DATE, ...
    python3 bench/planner/compare_transfer.py "$p" "${args[@]}" --tolerance 0.003 \
        --json "$OUT/comparison-$name.json" > "$OUT/comparison-$name.md" 2>&1
    log "compare (calibrated plans $p) exit $?"
  done
  tail -3 "$OUT/comparison.md"
fi

# 4b. Optional (step steady, about 5.5 minutes per dtype): the Triton sweep again in the steady
#     state (each configuration back to back for 250 ms before do_bench), against the same plans;
#     the comparison joins every steady-state file in $OUT.
if want steady; then
  dtypes=${STEADY_DTYPES:-f32}
  timeout 575 python3 bench/planner/sweep_triton_matmul.py "$OUT/triton-steady-${dtypes//,/-}.json" \
      --shapes "$TRITON_SHAPES" --dtypes "$dtypes" --settle-ms 250 --rep-ms 100 --budget-s 545 --workers 14 \
      > "$OUT/triton-steady-${dtypes//,/-}.log" 2>&1
  log "steady-state $dtypes sweep exit $?"
  steady=()
  for f in "$OUT"/triton-steady-*.json; do [ -s "$f" ] && steady+=(--triton "$f"); done
  python3 bench/planner/compare_transfer.py "$PLANS" "${steady[@]}" --tolerance 0.003 \
      --json "$OUT/comparison-steady.json" > "$OUT/comparison-steady.md" 2>&1
  log "compare (steady state) exit $?"
fi

# 5. The clock under load (issue 19's open question: do the leading f32 kernels run at another
#    clock on this GPU than on the H100?): each configuration back to back for ~3 s on the first
#    Triton shape, nvidia-smi sampled every 0.25 s.
if want clock; then
  first=${TRITON_SHAPES%%,*}
  timeout 100 python3 bench/planner/clock_under_load.py "$OUT/clock-under-load.json" --shape "$first" \
      f32:32/256/64/4/4 f32:32/256/32/3/4 f32:32/256/32/4/4 f32:256/64/32/4/4 f32:256/128/32/4/8 \
      f16:128/256/64/3/8 f16:128/256/64/4/8 f16:32/256/64/4/4 > "$OUT/clock-under-load.log" 2>&1
  log "clock under load exit $?"
fi
log "done"
# The device tool brings back at most 8 files: everything in one archive as well.
tar czf "$OUT/../h200-transfer-$(date -u +%Y%m%dT%H%M%SZ).tar.gz" -C "$OUT" . && \
    log "archive: $(ls "$OUT"/../h200-transfer-*.tar.gz | tail -1)"
