# Sourced by the Nsight Compute scripts here: the environment their launches share, a header of the
# date, GPU, driver and ncu version on stdout, and STALLS, the warps' stall reasons per issued
# instruction as a comma-led list of ncu metric names to append to a --metrics list.
export PYTHONUNBUFFERED=1 TRITON_CACHE_DIR=/tmp/scratchsim_triton_cache
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; ncu --version | tail -1
STALLS=""
for r in barrier long_scoreboard short_scoreboard wait math_pipe_throttle mio_throttle lg_throttle dispatch_stall \
         no_instruction not_selected selected sleeping membar drain branch_resolving tex_throttle misc; do
  STALLS="$STALLS,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"
done
