#!/usr/bin/env bash
# Lessons 03 and 05 (--quick) with the default threads and with --threads 1, first on the machine
# as it is, then beside two busy processes of our own: what a learner's laptop does to a run when a
# browser is busy. Target: the default is never more than 1.3x slower than --threads 1.
# Run it through `./ladder bench busy` (which builds the lessons first) on an otherwise idle machine.
set -euo pipefail

LESSONS_DIR="${1:?usage: busy_machine.sh BUILD/lessons}"
out="$(mktemp -d)"
busy_pids=()
stop_busy() {
  ((${#busy_pids[@]} == 0)) || kill "${busy_pids[@]}" 2>/dev/null || true
  wait 2>/dev/null || true
  busy_pids=()
}
trap 'stop_busy; rm -rf "$out"' EXIT

seconds_of() {  # seconds_of CMD...: wall time of one run, its output discarded
  local start end
  start=$(date +%s.%N)
  "$@" --out "$out/run" >/dev/null
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { print b - a }' 
}

measure() {  # measure LABEL: both lessons, both thread settings
  local label="$1" lesson default single
  for lesson in 03_mlp 05_rnn; do
    default=$(seconds_of "$LESSONS_DIR/lesson_$lesson" --quick)
    single=$(seconds_of "$LESSONS_DIR/lesson_$lesson" --quick --threads 1)
    printf '%-22s lesson_%-8s default_s=%6.2f threads1_s=%6.2f ratio=%.2f  (target <= 1.30)\n' \
      "$label" "$lesson" "$default" "$single" "$(awk -v a="$default" -v b="$single" 'BEGIN { print a / b }')"
  done
}

echo "cores: $(nproc)   load now: $(cut -d' ' -f1-4 /proc/loadavg)   OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-(unset)}"
measure "as_is"
for _ in 1 2; do  # two busy processes, bounded to 10 minutes in case we are killed first
  timeout 600 bash -c 'while :; do :; done' &
  busy_pids+=($!)
done
sleep 1
measure "beside_2_busy"
stop_busy
