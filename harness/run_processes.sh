#!/usr/bin/env bash
# run_processes.sh N PROGRAM [ARGS...]: lesson 16's N processes on this machine, started by mpirun
# (./ladder lesson 16 and the tests start them here). Its exit status is the run's: 128 + the
# signal's number after a stop signal (130 after Ctrl-C, 143 after SIGTERM), else mpirun's.
#
# mpirun alone would turn Ctrl-C into SIGTERM for the processes only after a grace second, and
# SIGKILL them a second later (Open MPI's odls_base_sigkill_timeout), too soon for a step to end.
# So mpirun runs in a process group of its own (set -m), out of reach of the terminal's Ctrl-C,
# and a signal that comes here goes straight to the processes (mpirun's children), which stop
# together at their next step; rank 0 writes summary.json and removes the lock. A second one ends
# them at once.
set -uo pipefail
(($# >= 2)) || { echo "usage: run_processes.sh N PROGRAM [ARGS...]" >&2; exit 2; }
procs="$1"
shift
# mpirun refuses to run as root without these two (CI runs as root); --oversubscribe allows more
# processes than cores; -q leaves out mpirun's own notices when a process stops with an error.
if [[ "$(id -u)" -eq 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
# When a process dies (kill -9, out of memory) mpirun sends the others SIGTERM, then SIGKILL a
# second later: rank 0 may still be inside a step, before the wait that finds which process is gone
# and writes a failed summary.json naming it. Two seconds, unless the caller set one; mpirun itself
# ends about twice that after the loss (4 s; 2 s at one second, 19 s at ten).
export OMPI_MCA_odls_base_sigkill_timeout="${OMPI_MCA_odls_base_sigkill_timeout:-2}"
# mpirun gives the processes a pseudo-terminal even when this script's output goes to a file: the
# progress line is redrawn in place only when LADDER_TERMINAL says the output is a terminal.
if [[ -t 1 ]]; then export LADDER_TERMINAL=1; else export LADDER_TERMINAL=0; fi
set -m
mpirun -q --oversubscribe -np "$procs" "$@" </dev/null &
mpirun_pid=$!
set +m
stopped_by=0
pass_on() {
  stopped_by=$((128 + $2))
  pkill "-$1" -P "$mpirun_pid" || true
}
# The stop signals of harness/stop_signals.h, each with its number.
for signal in INT:2 TERM:15 HUP:1 QUIT:3 USR1:10 USR2:12; do
  trap "pass_on ${signal%:*} ${signal#*:}" "${signal%:*}"
done
status=0
while :; do
  wait "$mpirun_pid"
  status=$?
  kill -0 "$mpirun_pid" 2>/dev/null || break  # wait returned for a signal: mpirun still runs
done
((stopped_by)) && exit "$stopped_by"
exit "$status"
