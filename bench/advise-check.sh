#!/usr/bin/env bash
# bench/advise-check.sh: does `faro advise` rank jobs as measurement does? Runs Spark jobs of
# chosen shapes with the built-in shuffle and with Faro (bench/spark-compare.sh: interleaved runs,
# medians), then `faro advise` on the built-in runs' event logs, and prints, per job, advise's
# estimate beside the measured difference: the median job time, and the median of the task time
# summed over the job's stages (from each run's event log), built-in minus Faro.
#
# Usage: bench/advise-check.sh [options]
#   --shapes LIST   MAPSxREDUCERS:BYTES jobs as spark-compare.sh takes them
#                   (default 200x1000:20m,100x1000:5m,4x4:40m: many small blocks to large ones)
#   --reps N        runs of each job in each mode (default 3)
#   --work-dir DIR  default /tmp/faro-advise-check
#   --no-build      use the jars already built
#   --no-run        run no job: rank again the runs already in --work-dir (after a change to
#                   advise's model; builds the CLI unless --no-build)
#   -h, --help      this text
#
# Exit code 0 when advise's order of the jobs is the order of their measured task-time
# differences, 3 when it is not (the table says where), other codes on failure. Loopback only;
# needs jq (as spark-compare.sh).
set -euo pipefail
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SHAPES=200x1000:20m,100x1000:5m,4x4:40m
REPS=3
WORK=/tmp/faro-advise-check
BUILD=()
RUN=1
while [ $# -gt 0 ]; do
  case "$1" in
    --shapes) SHAPES=$2; shift ;;
    --reps) REPS=$2; shift ;;
    --work-dir) WORK=$2; shift ;;
    --no-build) BUILD=(--no-build) ;;
    --no-run) RUN=0 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "advise-check: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
if [ "$RUN" = 1 ]; then
  "$REPO/bench/spark-compare.sh" --shapes "$SHAPES" --reps "$REPS" --work-dir "$WORK/compare" \
    --json "$WORK/compare.json" "${BUILD[@]}"
else
  [ -f "$WORK/compare.json" ] || { echo "advise-check: no earlier runs in $WORK" >&2; exit 2; }
  if [ ${#BUILD[@]} -eq 0 ]; then
    (cd "$REPO" && mvn -B -q -DskipTests package -pl dist -am)
  fi
fi

# Each built-in run's event log, named by its job and run, for advise; and each run's task time.
LOGS="$WORK/builtin-logs"
rm -rf "$LOGS" && mkdir -p "$LOGS"
TASKS="$WORK/task-millis.tsv"
: >"$TASKS"
for events in "$WORK"/compare/runs/*.1.events; do
  run=$(basename "$events" .1.events)   # JOB-MODE-REP
  for log in "$events"/*; do
    [ -f "$log" ] || continue
    if [[ "$run" == *-builtin-1 ]]; then cp "$log" "$LOGS/$run"; fi
    millis=$(grep '"Event":"SparkListenerTaskEnd"' "$log" \
      | jq -s '[.[] | .["Task Metrics"]["Executor Run Time"] // 0] | add // 0')
    printf '%s\t%s\n' "$run" "$millis" >>"$TASKS"
  done
done
FARO="$WORK/compare/faro/bin/faro"
[ "$RUN" = 1 ] && [ -x "$FARO" ] || FARO="$REPO/bin/faro"
"$FARO" advise --event-logs "$LOGS" --json "$WORK/advise.json" >"$WORK/advise.md"

# Per job: advise's estimate (from its first built-in run) and the measured medians.
jq -r -n --slurpfile compare "$WORK/compare.json" --slurpfile advise "$WORK/advise.json" \
  --rawfile tasks "$TASKS" '
  def median: sort | if length == 0 then null
    elif length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
  ($tasks | split("\n") | map(select(length > 0) | split("\t") | {run: .[0], millis: (.[1] | tonumber)})) as $t
  | [ $compare[0].jobs[] as $j
      | ($advise[0].applications[] | select(.log == ($j.job + "-builtin-1"))) as $a
      | ([$t[] | select(.run | startswith($j.job + "-builtin-")) | .millis] | median) as $bt
      | ([$t[] | select(.run | startswith($j.job + "-faro-")) | .millis] | median) as $ft
      | {job: $j.job, advise_rank: null, estimate_millis: $a.saved_task_millis, verdict: $a.verdict,
         job_saved_millis: ($j.builtin_median_millis - $j.faro_median_millis),
         task_saved_millis: ($bt - $ft)} ]
  | sort_by(-.estimate_millis) | to_entries | map(.value + {advise_rank: (.key + 1)})
  | sort_by(-.task_saved_millis) | to_entries | map(.value + {measured_rank: (.key + 1)})
  | sort_by(.advise_rank)' >"$WORK/check.json"
printf '%-26s %6s %8s %14s %18s %18s  %s\n' job advise measured "estimate ms" "task time saved" "job time saved" verdict
jq -r '.[] | [.job, .advise_rank, .measured_rank, .estimate_millis, .task_saved_millis, .job_saved_millis, .verdict] | @tsv' \
  "$WORK/check.json" | while IFS=$'\t' read -r job ar mr est tsaved jsaved verdict; do
  printf '%-26s %6s %8s %14s %18s %18s  %s\n' "$job" "$ar" "$mr" "$est" "$tsaved" "$jsaved" "$verdict"
done
if [ "$RUN" = 1 ]; then RUNS="$REPS run(s)"; else RUNS="the runs in $WORK/compare"; fi
echo "Medians of $RUNS per mode; the advise report: $WORK/advise.md; JSON: $WORK/check.json"
if jq -e 'all(.advise_rank == .measured_rank)' "$WORK/check.json" >/dev/null; then
  echo "advise ranks the jobs as the measured task-time differences do"
else
  echo "advise's order differs from the measured one" >&2
  exit 3
fi
