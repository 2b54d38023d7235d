#!/usr/bin/env bash
# Runs the libFuzzer targets of tests/fuzz for a while each and prints, per target, the
# executions, coverage (libFuzzer's cov/ft) and the verdict; exit 1 when a target found a crash.
#   tests/fuzz/run.sh [--build DIR] [--seconds N] [--parallel P] [--jobs J] [TARGET ...]
# DIR is a build configured with -DSCRATCHSIM_FUZZ=ON (default build-fuzz); N seconds per target
# (default 60); P targets at once (default 1); J processes per target on one shared corpus
# (default 1; on a many-core machine P x J up to the core count). The corpus each run grows is kept in
# DIR/fuzz/corpus/TARGET, crashes in DIR/fuzz/artifacts/TARGET, logs in DIR/fuzz/logs.
# For hours: tests/fuzz/run.sh --seconds 3600 --parallel "$(nproc)".
set -uo pipefail
src="$(cd "$(dirname "$0")/../.." && pwd)"
build="$src/build-fuzz"
seconds=60
parallel=1
jobs=1
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$(cd "$2" && pwd)"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --parallel) parallel="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -eq 0 ] && targets=(graph_loader device_loader expr ttgir planner simulate calibrate device_inherit output_paths)
fuzz="$build/fuzz"
mkdir -p "$fuzz/seeds" "$fuzz/logs"

# Seeds: the shipped graphs (text, JSON, binary), devices, expressions and planner specs, and
# the Triton fixtures CMake unpacked into the build.
"$build/tests/fuzz/make_seeds" "$src" "$fuzz/seeds" || exit 2
mkdir -p "$fuzz/seeds/ttgir"
cp -n "$build"/triton_fixtures/*.ttgir "$fuzz/seeds/ttgir/" 2>/dev/null || true

dict_of() {
  case "$1" in
    graph_loader|simulate) echo graph ;;
    device_loader|device_inherit) echo device ;;
    *) echo "$1" ;;
  esac
}

run_one() {
  local target="$1" binary="$build/tests/fuzz/${1}_fuzzer"
  local corpus="$fuzz/corpus/$target" artifacts="$fuzz/artifacts/$target/" log="$fuzz/logs/$target.log"
  mkdir -p "$corpus" "$artifacts"
  if [ ! -x "$binary" ]; then
    echo "$target: not built ($binary)" > "$log"
    return 2
  fi
  local max_len=8192
  [ "$target" = ttgir ] && max_len=65536
  local start=$SECONDS rc=0 j
  local -a job_pids=()
  # J processes grow one corpus: each writes what it finds there (and reads it at start).
  for ((j = 0; j < jobs; j++)); do
    ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      "$binary" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2560 -max_len="$max_len" \
      -dict="$src/tests/fuzz/$(dict_of "$target").dict" -artifact_prefix="$artifacts" -print_final_stats=1 \
      "$corpus" "$fuzz/seeds/$target" > "$log.$j" 2>&1 &
    job_pids+=($!)
  done
  for j in "${!job_pids[@]}"; do wait "${job_pids[$j]}" || rc=$?; done
  cat "$log".* > "$log" && rm -f "$log".*
  echo "elapsed_seconds: $((SECONDS - start))" >> "$log"
  return $rc
}

summary() {
  local target="$1" rc="$2" log="$fuzz/logs/$1.log"
  local execs cov ft secs
  # Executions summed over the target's processes; coverage the highest any of them reached.
  execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | awk '{s += $2} END {print s}')
  cov=$(grep -oE 'cov: [0-9]+' "$log" | awk '$2 > m {m = $2} END {print m}')
  ft=$(grep -oE 'ft: [0-9]+' "$log" | awk '$2 > m {m = $2} END {print m}')
  secs=$(grep -o 'elapsed_seconds: [0-9]*' "$log" | awk '{print $2}')
  printf '%-14s %12s execs %6s cov %7s ft %5ss  %s\n' "$target" "${execs:-?}" "${cov:-?}" "${ft:-?}" "${secs:-?}" \
    "$([ "$rc" -eq 0 ] && echo ok || echo "FAILED (rc $rc, see $log)")"
}

status=0
pids=()
names=()
for target in "${targets[@]}"; do
  run_one "$target" &
  pids+=($!)
  names+=("$target")
  while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do sleep 1; done
done
echo "fuzz: ${seconds}s per target, corpus and logs in $fuzz"
for i in "${!pids[@]}"; do
  wait "${pids[$i]}"
  rc=$?
  summary "${names[$i]}" "$rc"
  [ "$rc" -ne 0 ] && status=1
done
if [ $status -ne 0 ]; then
  for target in "${names[@]}"; do
    grep -E "ERROR: |runtime error|invariant broken|SUMMARY" "$fuzz/logs/$target.log" | head -5 | sed "s/^/$target: /"
  done
fi
exit $status
