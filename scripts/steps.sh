# The step table of scripts/test.sh: each step's wall time, so the test command's budget (45
# minutes on a clean machine, 25 on a warm one; docs/testing.md) is visible in every CI log.
# Sourced, not run, by test.sh and the scripts it calls (test_in_root.sh, test_packages.sh,
# test_cross_version.sh, fuzz.sh); they all append to one log, $VIN_STEP_LOG, which the outermost
# script creates and prints as a table when it exits, whether the run passed or not.
#
#   steps_begin                 at the top of each such script (after set -e): the outermost one
#                               makes the log and prints the table at exit; in every one a step
#                               that fails is recorded as failed before the script exits
#   step NAME COMMAND...        run COMMAND, record its wall time under NAME
#   ctest_step NAME COMMAND...  the same for a CTest run, also recording its slowest tests
#                               (COMMAND's output is shown as it comes and kept for that)
#   step_note NAME SECONDS NOTE record a time measured some other way (a background job)
#   zoo_step_note FILE          the zoo's own account of a CTest run's time (run_zoo.py --times
#                               FILE): its wall time and seconds by phase, as a line of the table
#   steps_at_exit COMMAND       run COMMAND (a string, eval'd) at exit too: the EXIT trap is the
#                               table's, so a script adds its clean-up here instead of trapping
#
# A failing COMMAND fails the script as set -e would (the step is not run under `||`, which would
# switch set -e off inside shell functions such as make_root).

_step_name="" _step_start="" _step_output="" _steps_cleanup=""

steps_begin() {
  _steps_owner=0
  if [[ -z ${VIN_STEP_LOG:-} ]]; then
    VIN_STEP_LOG=$(mktemp /tmp/vin-steps.XXXXXX)
    export VIN_STEP_LOG
    _steps_owner=1
    _steps_start=$EPOCHREALTIME
  fi
  trap '_steps_exit $?' EXIT
}

steps_at_exit() { _steps_cleanup+="$1"$'\n'; }

_steps_exit() {
  local status=$1
  eval "$_steps_cleanup" || true
  if [[ -n $_step_name ]]; then _step_end "$status"; fi
  if ((_steps_owner)); then
    _step_table
    rm -f "$VIN_STEP_LOG"
  fi
  exit "$status"
}

# seconds since $1 (an $EPOCHREALTIME), one decimal
_steps_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }

_step_record() {  # NAME SECONDS STATUS NOTE
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$VIN_STEP_LOG"
}

_step_end() {
  local note=""
  if [[ -n $_step_output ]]; then
    note="slowest: $(_ctest_slowest "$_step_output")"
    rm -f "$_step_output"
  fi
  _step_record "$_step_name" "$(_steps_since "$_step_start")" "$1" "$note"
  _step_name="" _step_output=""
}

step() {
  _step_name=$1 _step_start=$EPOCHREALTIME
  shift
  "$@"
  _step_end 0
}

ctest_step() {
  _step_name=$1 _step_start=$EPOCHREALTIME
  shift
  _step_output=$(mktemp /tmp/vin-ctest.XXXXXX)
  "$@" 2>&1 | tee "$_step_output"
  _step_end 0
}

step_note() { _step_record "$1" "$2" 0 "${3:-}"; }

zoo_step_note() {
  [[ -s $1 ]] || return 0
  local seconds note
  IFS=$'\t' read -r seconds note <"$1"
  step_note "  of which the zoo" "$seconds" "$note"
}

# CTest prints "12/26 Test  #4: cli_capture ...   Passed   53.51 sec": the three slowest, "name N s"
_ctest_slowest() {
  sed -nE 's/.*Test +#[0-9]+: ([^ ]+) [ .]*[^0-9]*([0-9]+\.[0-9]+) sec.*/\2 \1/p' "$1" |
    sort -rn | head -3 | awk '{ printf "%s%s %.0f s", (NR > 1 ? ", " : ""), $2, $1 }'
}

_step_table() {
  [[ -s $VIN_STEP_LOG ]] || return 0
  echo
  echo "== scripts/test.sh: steps and their wall times =="
  awk -F'\t' -v total="$(_steps_since "$_steps_start")" '
    function clock(s) { return sprintf("%d:%02d", int(s / 60), int(s % 60)) }
    {
      state = ($3 == 0 ? "ok" : "FAILED (" $3 ")")
      printf "%-48s %6s  %-11s %s\n", $1, clock($2), state, $4
    }
    END { printf "%-48s %6s\n", "total (wall, min:s)", clock(total) }' "$VIN_STEP_LOG"
}
