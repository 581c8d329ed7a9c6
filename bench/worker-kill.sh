#!/usr/bin/env bash
# Job time with one worker killed (SIGKILL) versus none, with and without replication, on a
# local cluster of 1 master and 3 workers: runs the `large` comparison job (bench/spark-compare.sh
# explains the jobs) four times, each on a fresh cluster:
#   replicated, nothing killed | replicated, worker-0 killed once it holds data
#   plain, nothing killed      | plain, worker-0 killed once it holds data (repaired by a stage retry)
# and prints one JSON line per run (CompareJobs' output plus "case") and the two ratios.
#
# Usage: bash bench/worker-kill.sh [--scale X] [--work-dir DIR]   (after mvn -DskipTests package)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
SCALE=0.1
WORK=/tmp/faro-worker-kill
while [ $# -gt 0 ]; do
  case "$1" in
    --scale) SCALE=$2; shift 2 ;;
    --work-dir) WORK=$2; shift 2 ;;
    *) echo "usage: $0 [--scale X] [--work-dir DIR]" >&2; exit 2 ;;
  esac
done
# shellcheck source=bench/spark-job-env.sh
. "$REPO/bench/spark-job-env.sh"
rm -rf "$WORK" && mkdir -p "$WORK"

run_case() {
  local name=$1 replicate=$2 kill=$3
  local cluster="$WORK/$name/cluster"
  "$FARO" local-cluster --workers 3 --work-dir "$cluster" --detach --master-port 0 >"$WORK/$name.cluster.out" 2>&1
  local master victim_pid victim_rpc
  master=$(jq -r '.spark["spark.faro.master.endpoints"]' "$cluster/cluster.json")
  victim_pid=$(jq -r '.workers[] | select(.name == "worker-0") | .pid' "$cluster/cluster.json")
  victim_rpc=$(jq -r '.workers[] | select(.name == "worker-0") | .rpcPort' "$cluster/cluster.json")
  java "${JVM_OPTS[@]}" -cp "$CP" io.faro.examples.CompareJobs --job large --mode faro --scale "$SCALE" \
    --master-endpoints "$master" --local-dir "$WORK/$name/spark" \
    --conf spark.faro.client.push.replicate.enabled="$replicate" >"$WORK/$name.out" 2>"$WORK/$name.log" &
  local job=$!
  if [ "$kill" = true ]; then
    # Once the victim holds pushed data: it then dies holding acknowledged batches.
    until "$FARO" admin worker-status --worker "127.0.0.1:$victim_rpc" --timeout 5s 2>/dev/null \
        | jq -e '.appended_bytes > 0' >/dev/null; do sleep 0.2; done
    kill -9 "$victim_pid"
  fi
  wait "$job"
  "$FARO" local-cluster --work-dir "$cluster" stop --work-dir "$cluster" >/dev/null 2>&1 || true
  grep '^{"job"' "$WORK/$name.out" | sed "s/^{/{\"case\":\"$name\",/"
}

run_case replicated-none true false | tee -a "$WORK/results.jsonl"
run_case replicated-killed true true | tee -a "$WORK/results.jsonl"
run_case plain-none false false | tee -a "$WORK/results.jsonl"
run_case plain-killed false true | tee -a "$WORK/results.jsonl"
jq -s -r 'map({(.case): .millis}) | add
  | "replicated: killed/none = \(.["replicated-killed"] / .["replicated-none"] * 100 | round / 100)\n"
  + "plain (stage retry): killed/none = \(.["plain-killed"] / .["plain-none"] * 100 | round / 100)"' "$WORK/results.jsonl"
