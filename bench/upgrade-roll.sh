#!/usr/bin/env bash
# What a roll from the last release to this build costs a running job: a local cluster of 3
# masters and 3 workers of release FROM (authentication on), and the `large` comparison job with
# FROM's client jar (paced, so that it outlasts a roll), run ROUNDS times in each of two cases,
# alternating, each on a fresh cluster:
#   none     nothing rolled
#   rolled   once the job pushes, `bin/faro local-cluster upgrade --to <this build>` rolls every
#            member (masters first, the leader after a transfer; workers gracefully, one at a
#            time)
# Prints one JSON line per run (CompareJobs' output plus "case", and for rolled runs each member's
# time from SIGTERM to serving again), then the job time of rolled runs over undisturbed ones
# (medians). Every run's checksum must equal the built-in shuffle's (one run of FROM's jars).
#
# Usage: bash bench/upgrade-roll.sh [--from COMMIT] [--rounds N] [--scale X] [--work-dir DIR]
#        (after mvn -DskipTests package; needs jq and git). FROM is built from this repository's
#        history into WORK/release-FROM once (git archive, mvn package without tests).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
FROM=59e6657
ROUNDS=2
SCALE=0.02
WORK=/tmp/faro-upgrade-roll
while [ $# -gt 0 ]; do
  case "$1" in
    --from) FROM=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --scale) SCALE=$2; shift 2 ;;
    --work-dir) WORK=$2; shift 2 ;;
    *) echo "usage: $0 [--from COMMIT] [--rounds N] [--scale X] [--work-dir DIR]" >&2; exit 2 ;;
  esac
done
# shellcheck source=bench/spark-job-env.sh
. "$REPO/bench/spark-job-env.sh"
mkdir -p "$WORK"

OLD_SRC="$WORK/release-$FROM"
if [ ! -f "$OLD_SRC/.built" ]; then
  rm -rf "$OLD_SRC" && mkdir -p "$OLD_SRC"
  git -C "$REPO" archive --format=tar "$FROM" | tar -x -C "$OLD_SRC"
  (cd "$OLD_SRC" && { mvn -B -q -o -DskipTests -Dspotless.check.skip=true package -pl dist,client-spark,examples -am \
    || mvn -B -q -DskipTests -Dspotless.check.skip=true package -pl dist,client-spark,examples -am; })
  touch "$OLD_SRC/.built"
fi
OLD_DIST=$(ls -d "$OLD_SRC"/dist/target/faro-*/faro-*/ | head -1)
OLD_CLIENT=$(ls "$OLD_SRC"/client-spark/target/faro-client-spark-3-*.jar | grep -v original | head -1)
OLD_EXAMPLES=$(ls "$OLD_SRC"/examples/target/faro-examples-*.jar | grep -v -e -tests -e -sources | head -1)
OLD_CP="$(tr -d '\n' <"$OLD_SRC/examples/target/spark-classpath.txt"):$OLD_CLIENT:$OLD_EXAMPLES"

mkdir -p "$WORK/secrets"
for s in cluster admin; do
  [ -s "$WORK/secrets/$s.secret" ] || "$FARO" secret --out "$WORK/secrets/$s.secret" >/dev/null
done
CONF="$WORK/faro.conf"
printf 'faro.auth.enabled=true\nfaro.auth.cluster.secret.file=%s\nfaro.auth.admin.secret.file=%s\n' \
  "$WORK/secrets/cluster.secret" "$WORK/secrets/admin.secret" >"$CONF"

PACE=(--conf spark.examples.mapPauseMillis=150 --conf spark.examples.readPauseMillis=50
  --conf spark.faro.client.push.batch.size=16k)

java "${JVM_OPTS[@]}" -cp "$OLD_CP" io.faro.examples.CompareJobs --job large --mode builtin --scale "$SCALE" \
  --local-dir "$WORK/builtin/spark" >"$WORK/builtin.out" 2>"$WORK/builtin.log"
EXPECTED=$(grep '^{"job"' "$WORK/builtin.out" | jq -r .checksum)

run_case() {
  local name=$1 roll=$2
  local cluster="$WORK/$name/cluster"
  rm -rf "$WORK/$name"
  "$OLD_DIST/bin/faro" local-cluster --masters 3 --workers 3 --work-dir "$cluster" --detach --master-port 0 \
    --conf "$CONF" >"$WORK/$name.cluster.out" 2>&1
  local master
  master=$(jq -r '.spark["spark.faro.master.endpoints"]' "$cluster/cluster.json")
  java "${JVM_OPTS[@]}" -cp "$OLD_CP" io.faro.examples.CompareJobs --job large --mode faro --scale "$SCALE" \
    --master-endpoints "$master" --local-dir "$WORK/$name/spark" "${PACE[@]}" \
    >"$WORK/$name.out" 2>"$WORK/$name.log" &
  local job=$!
  local roll_json=""
  if [ "$roll" = true ]; then
    until ls "$cluster"/worker-*/data/local-* >/dev/null 2>&1; do sleep 0.2; done
    local start end out
    start=$(date +%s%3N)
    out=$("$FARO" local-cluster upgrade --work-dir "$cluster" --to "$DIST")
    end=$(date +%s%3N)
    echo "$out" >"$WORK/$name.roll"
    local members
    members=$(sed -n 's/^Rolled \([a-z0-9-]*\) to .*serving again \([0-9]*\) ms after.*/"\1":\2/p' <<<"$out" | paste -sd, -)
    roll_json=",\"roll_ms\":$((end - start)),\"unavailable_ms\":{$members}"
  fi
  wait "$job"
  "$FARO" local-cluster stop --work-dir "$cluster" >/dev/null 2>&1 || true
  local line
  line=$(grep '^{"job"' "$WORK/$name.out")
  if [ "$(jq -r .checksum <<<"$line")" != "$EXPECTED" ]; then
    echo "run $name: checksum $(jq -r .checksum <<<"$line"), the built-in shuffle's $EXPECTED" >&2
    exit 1
  fi
  echo "${line%\}},\"case\":\"$name\"$roll_json}"
}

RESULTS="$WORK/results.jsonl"
: >"$RESULTS"
for r in $(seq 1 "$ROUNDS"); do
  run_case "none-$r" false | tee -a "$RESULTS"
  run_case "rolled-$r" true | tee -a "$RESULTS"
done
jq -s '
  def median: sort | if length % 2 == 1 then .[length / 2 | floor]
    else (.[length / 2 - 1] + .[length / 2]) / 2 end;
  (map(select(.case | startswith("none"))) | map(.millis) | median) as $none
  | (map(select(.case | startswith("rolled"))) | map(.millis) | median) as $rolled
  | {from: "'"$FROM"'", job_ms_none: $none, job_ms_rolled: $rolled, rolled_over_none: ($rolled / $none),
     stage_retries: (map(.stage_retries) | add), failed_tasks: (map(.failed_tasks) | add),
     roll_ms: (map(select(.roll_ms)) | map(.roll_ms) | median)}' "$RESULTS"
