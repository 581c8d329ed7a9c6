#!/usr/bin/env bash
# bench/spark-compare.sh: the same Spark 3.5 jobs in local mode with Spark's built-in shuffle and
# through Faro, on this one machine, to see what Faro costs and to check it gives identical results.
#
# Usage: bench/spark-compare.sh [options]
#   --jobs LIST          comma-separated, from large,small-blocks,sql (default: all three)
#   --scale X            size factor for every job (default 1: "large" shuffles 30 M records,
#                        about 3 GB; see examples/.../ComparisonJob.java for every size)
#   --reps N             runs of each job in each mode (default 3)
#   --json FILE          write the medians and every run as JSON to FILE as well
#   --work-dir DIR       the local cluster, Spark's local dir and the logs of every run
#                        (default /tmp/faro-spark-compare); put it on the disk under test
#   --cluster-conf FILE  a Faro settings file for the local cluster's master and worker
#   --heap SIZE          -Xmx of each job's JVM (default 6g)
#   --spark-conf K=V     a Spark setting for every run, e.g. spark.faro.client.push.batch.size=...
#                        (repeatable)
#   --timeout SECONDS    limit for one run (default 1200)
#   --no-build           use the jars already built instead of `mvn -B -q -DskipTests package`
#   -h, --help           this text
#
# It starts a local Faro cluster of one master and one worker (`bin/faro local-cluster
# --detach`), then runs each job `reps` times in each mode, alternating builtin, faro, builtin,
# faro..., so that a drift of the machine (page cache, other load) hits both modes alike. Each
# run is a fresh JVM running io.faro.examples.CompareJobs in local[2] with the class path and JVM
# options of `bin/faro demo`: Spark's jars, the shaded client jar and the examples jar. Each run
# prints one JSON line; the time is the job's action alone, without JVM and SparkContext start.
# Cluster and jobs run from a copy of the built distribution in the work directory, so that a
# rebuild while a comparison runs changes nothing under it.
#
# Every run's checksum must equal the first built-in run's for that job (order-independent: a
# sum of row hashes and the row count); otherwise it stops with exit code 1 and says which run
# differs. It prints a table of medians per job and mode with the faro/builtin ratio (below 1:
# Faro is faster), and JSON with --json. The local cluster is stopped at the end, also on
# failure or Ctrl-C. Loopback only. Needs jq (installed with apt-get if missing) and, unless
# --no-build, Maven.
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
JOBS=large,small-blocks,sql
SCALE=1
REPS=3
JSON_FILE=""
WORK=/tmp/faro-spark-compare
CLUSTER_CONF=""
HEAP=6g
RUN_TIMEOUT=1200
BUILD=true
SPARK_CONF=()
SPARK_CONF_VALUES=()
while [ $# -gt 0 ]; do
  case "$1" in
    --jobs) JOBS=$2; shift ;;
    --scale) SCALE=$2; shift ;;
    --reps) REPS=$2; shift ;;
    --json) JSON_FILE=$2; shift ;;
    --work-dir) WORK=$2; shift ;;
    --cluster-conf) CLUSTER_CONF=$2; shift ;;
    --heap) HEAP=$2; shift ;;
    --spark-conf) SPARK_CONF+=(--conf "$2"); SPARK_CONF_VALUES+=("$2"); shift ;;
    --timeout) RUN_TIMEOUT=$2; shift ;;
    --no-build) BUILD=false ;;
    -h|--help) usage; exit 0 ;;
    *) echo "spark-compare.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

log() { echo "spark-compare: $*" >&2; }
fail() { echo "spark-compare: $*" >&2; exit 1; }

if ! command -v jq >/dev/null; then
  # A fresh machine may lack jq: install it when we can (root with apt-get), as limits.sh does.
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    echo "installing jq with apt-get" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq jq >/dev/null 2>&1 \
      || { apt-get update -qq >/dev/null 2>&1 || true; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq jq >/dev/null 2>&1; } || true
  fi
  command -v jq >/dev/null || fail "jq is required and could not be installed (apt-get install jq)"
fi
[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || fail "--reps must be a positive integer, not $REPS"
if ! [[ "$SCALE" =~ ^[0-9]+(\.[0-9]+)?([eE]-?[0-9]+)?$ ]] || ! awk -v s="$SCALE" 'BEGIN { exit !(s > 0) }'; then
  fail "--scale must be a positive number like 0.1 or 2, not $SCALE"
fi
IFS=, read -r -a JOB_LIST <<<"$JOBS"
for job in "${JOB_LIST[@]}"; do
  case "$job" in large|small-blocks|sql) ;; *) fail "unknown job '$job'; jobs are large, small-blocks, sql" ;; esac
done
[ -z "$CLUSTER_CONF" ] || CLUSTER_CONF=$(cd "$(dirname "$CLUSTER_CONF")" && pwd)/$(basename "$CLUSTER_CONF")
if [ -n "$JSON_FILE" ]; then JSON_FILE=$(cd "$(dirname "$JSON_FILE")" && pwd)/$(basename "$JSON_FILE"); fi

# --- build, and find what the runs use ---------------------------------------------------------
if $BUILD; then
  log "building Faro (mvn -B -q -DskipTests package)"
  (cd "$REPO" && mvn -B -q -DskipTests package) || fail "the build failed"
fi
# The built distribution (bin/faro, lib/, conf/, client/), in either layout bin/faro accepts.
DIST=""
for d in "$REPO"/dist/target/faro-*/faro-*/ "$REPO"/dist/target/faro-*/; do
  if [ -x "$d/bin/faro" ] && [ -d "$d/lib" ] && [ -d "$d/client" ]; then DIST=${d%/}; break; fi
done
SPARK_CP_FILE="$REPO/examples/target/spark-classpath.txt"
EXAMPLES_JAR=""
for f in "$REPO"/examples/target/faro-examples-*.jar; do
  case "$f" in *-tests.jar|*-sources.jar) ;; *) [ -f "$f" ] && EXAMPLES_JAR=$f && break ;; esac
done
if [ -z "$DIST" ] || [ ! -f "$SPARK_CP_FILE" ] || [ -z "$EXAMPLES_JAR" ]; then
  fail "missing the distribution under dist/target, $SPARK_CP_FILE or the examples jar: build with mvn -DskipTests package"
fi
if [ -n "${JAVA_HOME:-}" ]; then JAVA="$JAVA_HOME/bin/java"; else JAVA=java; fi

# The JVM of `bin/faro demo` (cli's DemoJob): the module openings Spark 3.5 needs on Java 17,
# then Spark's class path, the shaded client jar and the job's jar, and nothing else of Faro.
JVM_OPTS=(-Xmx"$HEAP")
for p in java.lang java.lang.invoke java.lang.reflect java.io java.net java.nio java.util \
    java.util.concurrent java.util.concurrent.atomic sun.nio.ch sun.nio.cs sun.security.action sun.util.calendar; do
  JVM_OPTS+=("--add-opens=java.base/$p=ALL-UNNAMED")
done
JVM_OPTS+=(-Djdk.reflect.useDirectMethodHandle=false)

# --- the local cluster, stopped on any exit -------------------------------------------------
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
CLUSTER_DIR="$WORK/cluster"
SPARK_LOCAL="$WORK/spark-local"
RUNS_DIR="$WORK/runs"
RESULTS="$RUNS_DIR/results.jsonl"
FARO_DIR="$WORK/faro"
rm -rf "$RUNS_DIR" "$SPARK_LOCAL" "$FARO_DIR"
mkdir -p "$RUNS_DIR" "$SPARK_LOCAL"
# The runs use a private copy of the distribution and of the examples jar: a rebuild during a
# long comparison must not change (or, half-written, break) what the later runs measure, and the
# cluster and the client jar must come from the same build.
cp -r "$DIST" "$FARO_DIR"
cp "$EXAMPLES_JAR" "$FARO_DIR/"
EXAMPLES_JAR="$FARO_DIR/$(basename "$EXAMPLES_JAR")"
FARO="$FARO_DIR/bin/faro"
CLIENT_JAR=""
for f in "$FARO_DIR"/client/faro-client-spark-*.jar; do [ -f "$f" ] && CLIENT_JAR=$f && break; done
[ -n "$CLIENT_JAR" ] || fail "no faro-client-spark jar in $DIST/client"
CLASSPATH_ARG="$(tr -d '\n' <"$SPARK_CP_FILE"):$CLIENT_JAR:$EXAMPLES_JAR"
CLUSTER_STARTED=false
RUN_PID=""
# Stops the cluster with bin/faro, or else stops the processes cluster.json lists that are still
# ours (their command line carries local-cluster's marker; pids get reused).
stop_cluster() {
  # --work-dir also before `stop`: local-cluster itself requires it, even with a subcommand.
  "$FARO" local-cluster --work-dir "$CLUSTER_DIR" stop --work-dir "$CLUSTER_DIR" >&2 && return 0
  [ -f "$CLUSTER_DIR/cluster.json" ] || return 0
  log "bin/faro could not stop the cluster: stopping its processes by pid"
  local pid pids=()
  for pid in $(jq -r '.. | .pid? // empty' "$CLUSTER_DIR/cluster.json"); do
    if grep -qa 'faro.launcher=local-cluster' "/proc/$pid/cmdline" 2>/dev/null; then
      kill "$pid" 2>/dev/null || true
      pids+=("$pid")
    fi
  done
  # A grace period of 20 s, as bin/faro gives, then SIGKILL.
  for _ in $(seq 200); do
    any_alive "${pids[@]}" || return 0
    sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
}
any_alive() {
  local pid
  for pid in "$@"; do kill -0 "$pid" 2>/dev/null && return 0; done
  return 1
}
cleanup() {
  local code=$?
  if [ -n "$RUN_PID" ]; then kill "$RUN_PID" 2>/dev/null || true; wait "$RUN_PID" 2>/dev/null || true; fi
  if $CLUSTER_STARTED; then
    log "stopping the local cluster"
    if stop_cluster && [ -f "$CLUSTER_DIR/cluster.json" ]; then
      # The last app's shuffle files: the worker deletes an app's files only after it has ended.
      jq -r '.workers[].dirs[]' "$CLUSTER_DIR/cluster.json" | while read -r dir; do rm -rf "$dir"; done
    else
      log "could not stop the cluster in $CLUSTER_DIR"
    fi
  fi
  rm -rf "$SPARK_LOCAL"
  exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log "starting a local cluster (1 master, 1 worker) in $CLUSTER_DIR"
CLUSTER_ARGS=(local-cluster --workers 1 --work-dir "$CLUSTER_DIR" --detach --master-port 0)
[ -z "$CLUSTER_CONF" ] || CLUSTER_ARGS+=(--conf "$CLUSTER_CONF")
# Set before the start: a start that fails half-way may still leave processes to stop.
CLUSTER_STARTED=true
"$FARO" "${CLUSTER_ARGS[@]}" >"$WORK/cluster.out" 2>&1 || {
  cat "$WORK/cluster.out" >&2; fail "the local cluster did not start"; }
MASTER=$(jq -r '.spark["spark.faro.master.endpoints"]' "$CLUSTER_DIR/cluster.json")
log "master at $MASTER; runs logged in $RUNS_DIR"

# --- the runs -------------------------------------------------------------------------------
# Runs one job in one mode in a fresh JVM; appends its JSON line (with the repetition) to RESULTS.
run_one() {
  local job=$1 mode=$2 rep=$3
  local name="$RUNS_DIR/$job-$mode-$rep"
  local args=(--job "$job" --mode "$mode" --scale "$SCALE" --local-dir "$SPARK_LOCAL" "${SPARK_CONF[@]}")
  [ "$mode" = builtin ] || args+=(--master-endpoints "$MASTER")
  # Writes back the previous run's dirty pages now, so that they do not slow this run down.
  sync
  # In the background and waited for, so that Ctrl-C runs the trap at once: timeout puts the job
  # in its own process group, out of reach of the terminal's SIGINT, and kills it when killed.
  timeout "$RUN_TIMEOUT" "$JAVA" "${JVM_OPTS[@]}" -cp "$CLASSPATH_ARG" io.faro.examples.CompareJobs "${args[@]}" \
    >"$name.out" 2>"$name.log" &
  RUN_PID=$!
  local code=0
  wait "$RUN_PID" || code=$?
  RUN_PID=""
  if [ "$code" != 0 ]; then
    tail -n 30 "$name.log" >&2
    [ "$code" != 124 ] || fail "$job ($mode, run $rep) did not finish within ${RUN_TIMEOUT}s; log: $name.log"
    fail "$job ($mode, run $rep) failed with exit code $code; log: $name.log"
  fi
  local line
  line=$(grep '^{"job"' "$name.out" | tail -n 1 || true)
  jq -e . >/dev/null 2>&1 <<<"$line" || fail "$job ($mode, run $rep) printed no JSON line; see $name.out"
  jq -c --argjson rep "$rep" '. + {rep: $rep}' <<<"$line" >>"$RESULTS"
  log "$(jq -r '"\(.job) \(.mode) run \(.rep): \(.millis) ms, \(.records) rows, shuffle write \(.shuffle_write_bytes / 1e6 | floor) MB, read \(.shuffle_read_bytes / 1e6 | floor) MB, checksum \(.checksum)"' \
    <<<"$(tail -n 1 "$RESULTS")")"
}

# Fails loudly unless every run of the job has the checksum of its first built-in run.
check_checksums() {
  local job=$1
  local reference
  reference=$(jq -r --arg job "$job" 'select(.job == $job and .mode == "builtin") | .checksum' "$RESULTS" | head -n 1)
  local bad
  bad=$(jq -r --arg job "$job" --arg ref "$reference" \
    'select(.job == $job and .checksum != $ref) | "\(.mode) run \(.rep): \(.checksum)"' "$RESULTS")
  if [ -n "$bad" ]; then
    fail "CHECKSUM MISMATCH in job $job: the built-in shuffle gave $reference, but
$bad
(a built-in run differing from the first built-in run would mean the job itself is not deterministic)"
  fi
}

START_EPOCH=$(date +%s)
for job in "${JOB_LIST[@]}"; do
  for rep in $(seq "$REPS"); do
    for mode in builtin faro; do
      run_one "$job" "$mode" "$rep"
      check_checksums "$job"
    done
  done
done
ELAPSED=$(( $(date +%s) - START_EPOCH ))

# --- medians --------------------------------------------------------------------------------
COMMIT=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
# Read-only: no optional index refresh, which would write to .git.
if ! GIT_OPTIONAL_LOCKS=0 git -C "$REPO" diff --quiet HEAD -- 2>/dev/null; then COMMIT="$COMMIT+changes"; fi
SUMMARY="$WORK/summary.json"
jq -s \
  --arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
  --arg commit "$COMMIT" \
  --arg jobs "$JOBS" \
  --argjson scale "$(jq -n "$SCALE")" \
  --argjson reps "$REPS" \
  --argjson cores "$(nproc)" \
  --argjson memory_mib "$(( $(sed -n 's/^MemTotal: *\([0-9]*\) kB/\1/p' /proc/meminfo) / 1024 ))" \
  --arg heap "$HEAP" \
  --argjson spark_conf "$(for c in "${SPARK_CONF_VALUES[@]}"; do jq -n --arg c "$c" '$c'; done | jq -s .)" \
  --argjson elapsed "$ELAPSED" '
  def median: sort | if length == 0 then null
    elif length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
  . as $runs
  | {
      date_utc: $date, commit: $commit, scale: $scale, reps: $reps,
      machine: {cores: $cores, memory_mib: $memory_mib}, job_heap: $heap, master: "local[2]",
      extra_spark_conf: $spark_conf,
      elapsed_s: $elapsed,
      jobs: [ $jobs | split(",")[] as $job
        | [$runs[] | select(.job == $job)] as $r
        | [$r[] | select(.mode == "builtin")] as $b
        | [$r[] | select(.mode == "faro")] as $f
        | {
            job: $job,
            records: $r[0].records,
            checksum: $r[0].checksum,
            identical: ([$r[].checksum] | unique | length == 1),
            builtin_median_millis: ([$b[].millis] | median),
            faro_median_millis: ([$f[].millis] | median),
            builtin_shuffle_write_bytes: ([$b[].shuffle_write_bytes] | median),
            faro_shuffle_write_bytes: ([$f[].shuffle_write_bytes] | median),
            builtin_shuffle_read_bytes: ([$b[].shuffle_read_bytes] | median),
            faro_shuffle_read_bytes: ([$f[].shuffle_read_bytes] | median),
            builtin_millis: [$b[].millis],
            faro_millis: [$f[].millis]
          }
        | . + {faro_to_builtin_ratio: (.faro_median_millis / .builtin_median_millis * 1000 | round / 1000)}
      ],
      runs: $runs
    }' "$RESULTS" >"$SUMMARY"
[ -z "$JSON_FILE" ] || cp "$SUMMARY" "$JSON_FILE"

echo "Spark local[2], scale $SCALE, $REPS run(s) per mode, medians (commit $COMMIT):"
printf '%-13s %11s %11s %13s %21s %21s %10s %10s\n' job "builtin ms" "faro ms" "faro/builtin" \
  "builtin write MB" "faro write MB" records identical
jq -r '.jobs[] | [.job, .builtin_median_millis, .faro_median_millis, .faro_to_builtin_ratio,
    (.builtin_shuffle_write_bytes / 1e6 | round), (.faro_shuffle_write_bytes / 1e6 | round),
    .records, .identical] | @tsv' "$SUMMARY" |
  while IFS=$'\t' read -r job builtin faro ratio builtin_mb faro_mb records identical; do
    printf '%-13s %11s %11s %13s %21s %21s %10s %10s\n' "$job" "$builtin" "$faro" "$ratio" "$builtin_mb" "$faro_mb" \
      "$records" "$identical"
  done
echo "JSON: ${JSON_FILE:-$SUMMARY}"
