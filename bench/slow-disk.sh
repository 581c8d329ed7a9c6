#!/usr/bin/env bash
# What one slow disk costs a job, with disk-load-aware placement and with round-robin: on a local
# cluster of 1 master and 2 workers with 4 disks each (all ssd, `--worker-dirs ssd,ssd,ssd,ssd`),
# one disk of worker-0 is slowed down with faro.testing.slow.disk.delay.per.mib (DELAY per MiB
# written, while the file .faro-testing-slow is in its directory). That is the fault injection of
# the faro-testing module, which the distribution does not ship: the script puts this checkout's
# testing/target/faro-testing-VERSION.jar on bin/faro's class path with FARO_CLASSPATH (the workers
# local-cluster starts inherit it), building the jar first if it is missing. Runs the `large`
# comparison job (bench/spark-compare.sh explains the jobs) ROUNDS times per placement policy,
# alternating load_aware and round_robin, each round on a fresh cluster. In each cluster a smaller
# warm-up run of the same job goes first, unmeasured: it writes to every disk, so that the
# masters know the slow disk before the measured run is placed, as they would on a cluster that
# has been running.
# Prints one JSON line per measured run (CompareJobs' output plus "policy" and the bytes on each
# disk of worker-0 at the fullest moment of the run, from its status), then the job time of
# load_aware over round_robin (medians) and the share of worker-0's bytes on the slowed disk.
#
# Usage: bash bench/slow-disk.sh [--scale X] [--rounds N] [--delay D] [--work-dir DIR]
#        (after mvn -DskipTests package, which builds the faro-testing jar too; needs jq)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
SCALE=0.2
ROUNDS=2
DELAY=200ms
WORK=/tmp/faro-slow-disk
while [ $# -gt 0 ]; do
  case "$1" in
    --scale) SCALE=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --delay) DELAY=$2; shift 2 ;;
    --work-dir) WORK=$2; shift 2 ;;
    *) echo "usage: $0 [--scale X] [--rounds N] [--delay D] [--work-dir DIR]" >&2; exit 2 ;;
  esac
done
# shellcheck source=bench/spark-job-env.sh
. "$REPO/bench/spark-job-env.sh"
testing_jar() {
  ls "$REPO"/testing/target/faro-testing-*.jar 2>/dev/null | grep -v -e -tests -e -sources | head -1 || true
}
TESTING_JAR=$(testing_jar)
if [ -z "$TESTING_JAR" ]; then
  echo "No testing/target/faro-testing-*.jar: the disk is slowed by the faro-testing module, which" \
    "the distribution does not ship. Building it: mvn -B -q -DskipTests -pl testing -am package" >&2
  (cd "$REPO" && mvn -B -q -DskipTests -pl testing -am package)
  TESTING_JAR=$(testing_jar)
  if [ -z "$TESTING_JAR" ]; then
    echo "Building faro-testing left no testing/target/faro-testing-*.jar" >&2
    exit 1
  fi
fi
# Appended to the distribution's lib/ by bin/faro, for every $FARO command below.
export FARO_CLASSPATH="$TESTING_JAR${FARO_CLASSPATH:+:$FARO_CLASSPATH}"
rm -rf "$WORK" && mkdir -p "$WORK"
WARMUP_SCALE=$(awk -v s="$SCALE" 'BEGIN { print s / 4 }')

run_case() {
  local name=$1 policy=$2
  local cluster="$WORK/$name/cluster"
  mkdir -p "$cluster/worker-0/ssd-4"
  touch "$cluster/worker-0/ssd-4/.faro-testing-slow"
  printf 'faro.master.slots.policy=%s\nfaro.testing.slow.disk.delay.per.mib=%s\n' \
    "$policy" "$DELAY" >"$WORK/$name.conf"
  "$FARO" local-cluster --workers 2 --worker-dirs ssd,ssd,ssd,ssd --conf "$WORK/$name.conf" \
    --work-dir "$cluster" --detach --master-port 0 >"$WORK/$name.cluster.out" 2>&1
  # Without the fault injection nothing is slowed and the numbers mean nothing: its worker says so.
  if ! grep -q 'io.faro.testing.FaultInjection' "$cluster/worker-0/worker.log"; then
    echo "worker-0 did not load faro-testing's FaultInjection ($TESTING_JAR); see" \
      "$cluster/worker-0/worker.log" >&2
    "$FARO" local-cluster stop --work-dir "$cluster" >/dev/null 2>&1 || true
    exit 1
  fi
  local master
  master=$(jq -r '.spark["spark.faro.master.endpoints"]' "$cluster/cluster.json")
  java "${JVM_OPTS[@]}" -cp "$CP" io.faro.examples.CompareJobs --job large --mode faro \
    --scale "$WARMUP_SCALE" --master-endpoints "$master" --local-dir "$WORK/$name/spark-warmup" \
    >"$WORK/$name.warmup.out" 2>"$WORK/$name.warmup.log"
  local rpc
  rpc=$(jq -r '.workers[] | select(.name == "worker-0") | .rpcPort' "$cluster/cluster.json")
  status() { "$FARO" admin worker-status --worker "127.0.0.1:$rpc" --timeout 5s 2>/dev/null; }
  # The warm-up's files go once its app has ended (a heartbeat or two): then worker-0's disks hold
  # only what the measured run writes.
  for _ in $(seq 1 60); do
    [ "$(status | jq '.disk_used_bytes | add')" = 0 ] && break
    sleep 0.5
  done
  java "${JVM_OPTS[@]}" -cp "$CP" io.faro.examples.CompareJobs --job large --mode faro \
    --scale "$SCALE" --master-endpoints "$master" --local-dir "$WORK/$name/spark" \
    >"$WORK/$name.out" 2>"$WORK/$name.log" &
  local job=$!
  # Bytes on each disk of worker-0 while the run writes; the fullest sample is reported.
  : >"$WORK/$name.disks"
  while kill -0 "$job" 2>/dev/null; do
    status | jq -c '.disk_used_bytes' >>"$WORK/$name.disks" || true
    sleep 1
  done
  wait "$job"
  local used
  used=$(jq -s -c 'max_by(add) // [0,0,0,0]' "$WORK/$name.disks")
  "$FARO" local-cluster stop --work-dir "$cluster" >/dev/null 2>&1 || true
  grep '^{"job"' "$WORK/$name.out" \
    | sed "s/^{/{\"case\":\"$name\",\"policy\":\"$policy\",\"worker0_disk_used_bytes\":$used,/"
}

for round in $(seq 1 "$ROUNDS"); do
  run_case "load-aware-$round" load_aware | tee -a "$WORK/results.jsonl"
  run_case "round-robin-$round" round_robin | tee -a "$WORK/results.jsonl"
done
jq -s -r '
  def median: sort | if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
  (map(select(.policy == "load_aware")) | map(.millis) | median) as $aware
  | (map(select(.policy == "round_robin")) | map(.millis) | median) as $rr
  | def slowshare: (.worker0_disk_used_bytes | if add > 0 then .[3] / add else 0 end);
  "job time with one slowed disk, load_aware / round_robin (medians): \($aware / $rr * 100 | round / 100)"
  + " (\($aware) ms / \($rr) ms)\n"
  + "share of worker-0 bytes on the slowed disk: load_aware \(map(select(.policy == "load_aware")) | map(slowshare * 100 | round) ), round_robin \(map(select(.policy == "round_robin")) | map(slowshare * 100 | round))"' "$WORK/results.jsonl"
