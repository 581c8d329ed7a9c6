#!/usr/bin/env bash
# What a rolling restart of every worker costs a running job, on a local cluster of 1 master and
# 3 workers: runs the `large` comparison job (bench/spark-compare.sh explains the jobs) ROUNDS
# times in each of two cases, alternating, each run on a fresh cluster:
#   none     nothing restarted
#   rolling  once worker-0 holds pushed data, every worker restarted in turn with
#            `bin/faro local-cluster restart` (SIGTERM: a graceful stop, then the same id, ports
#            and disks), the next as soon as the previous serves again
# Prints one JSON line per run (CompareJobs' output plus "case", and for rolling runs each
# worker's time from SIGTERM to serving again), then the median and largest unavailability of a
# worker and the job time of rolling runs over that of undisturbed ones (medians).
#
# Usage: bash bench/rolling-restart.sh [--scale X] [--rounds N] [--work-dir DIR] [--conf K=V]...
#        (after mvn -DskipTests package; needs jq). --conf passes a Spark setting to the job, e.g.
#        --conf spark.faro.client.push.replicate.enabled=true
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
SCALE=0.2
ROUNDS=2
WORK=/tmp/faro-rolling-restart
JOB_CONF=()
while [ $# -gt 0 ]; do
  case "$1" in
    --scale) SCALE=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --work-dir) WORK=$2; shift 2 ;;
    --conf) JOB_CONF+=(--conf "$2"); shift 2 ;;
    *) echo "usage: $0 [--scale X] [--rounds N] [--work-dir DIR] [--conf K=V]..." >&2; exit 2 ;;
  esac
done
# shellcheck source=bench/spark-job-env.sh
. "$REPO/bench/spark-job-env.sh"
rm -rf "$WORK" && mkdir -p "$WORK"

run_case() {
  local name=$1 rolling=$2
  local cluster="$WORK/$name/cluster"
  "$FARO" local-cluster --workers 3 --work-dir "$cluster" --detach --master-port 0 >"$WORK/$name.cluster.out" 2>&1
  local master first_rpc
  master=$(jq -r '.spark["spark.faro.master.endpoints"]' "$cluster/cluster.json")
  first_rpc=$(jq -r '.workers[] | select(.name == "worker-0") | .rpcPort' "$cluster/cluster.json")
  java "${JVM_OPTS[@]}" -cp "$CP" io.faro.examples.CompareJobs --job large --mode faro --scale "$SCALE" \
    --master-endpoints "$master" --local-dir "$WORK/$name/spark" ${JOB_CONF[@]+"${JOB_CONF[@]}"} \
    >"$WORK/$name.out" 2>"$WORK/$name.log" &
  local job=$!
  local unavailable="[]" restarted_while_running=0
  if [ "$rolling" = true ]; then
    until "$FARO" admin worker-status --worker "127.0.0.1:$first_rpc" --timeout 5s 2>/dev/null \
        | jq -e '.appended_bytes > 0' >/dev/null; do sleep 0.2; done
    local ms=() stop_ms=()
    for w in worker-0 worker-1 worker-2; do
      if kill -0 "$job" 2>/dev/null; then restarted_while_running=$((restarted_while_running + 1)); fi
      out=$("$FARO" local-cluster restart --work-dir "$cluster" --member "$w")
      ms+=("$(sed -n 's/.*serving again \([0-9]*\) ms after.*/\1/p' <<<"$out")")
      stop_ms+=("$(sed -n 's/.*stopped in \([0-9]*\) ms.*/\1/p' <<<"$out")")
    done
    unavailable="[$(IFS=,; echo "${ms[*]}")],\"stopped_ms\":[$(IFS=,; echo "${stop_ms[*]}")]"
  fi
  wait "$job"
  "$FARO" local-cluster stop --work-dir "$cluster" >/dev/null 2>&1 || true
  grep '^{"job"' "$WORK/$name.out" | sed "s/^{/{\"case\":\"$name\",\"rolling\":$rolling,\"unavailable_ms\":$unavailable,\"restarted_while_running\":$restarted_while_running,/"
}

for round in $(seq 1 "$ROUNDS"); do
  run_case "none-$round" false | tee -a "$WORK/results.jsonl"
  run_case "rolling-$round" true | tee -a "$WORK/results.jsonl"
done
jq -s -r '
  def median: sort | if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
  (map(select(.rolling)) | map(.unavailable_ms) | add) as $u
  | (map(select(.rolling)) | map(.millis) | median) as $rolling
  | (map(select(.rolling | not)) | map(.millis) | median) as $none
  | "worker unavailable (SIGTERM to serving again): median \($u | median) ms, max \($u | max) ms over \($u | length) restarts\n"
  + "job time, rolling restart of every worker / none (medians): \($rolling / $none * 100 | round / 100)"
  + " (\($rolling) ms / \($none) ms); stage retries in rolling runs: \(map(select(.rolling)) | map(.stage_retries) | add)"' "$WORK/results.jsonl"
