#!/usr/bin/env bash
# bench/spark-compare.sh: the same Spark 3.5 jobs in local mode with Spark's built-in shuffle and
# through Faro, on this one machine, to see what Faro costs and to check it gives identical results.
#
# Usage: bench/spark-compare.sh [options]
#   --jobs LIST          comma-separated, from large,small-blocks,sql (default: all three, or
#                        none when --shapes is given)
#   --shapes LIST        comma-separated shuffles of a chosen shape, MAPSxREDUCERS:BYTES, e.g.
#                        200x500:512m,1000x4000:2g (the examples' "blocks" job: the large job's
#                        rows, BYTES after compression); each is one more job in the table
#   --scale X            size factor for every job (default 1: "large" shuffles 30 M records,
#                        about 3 GB; see examples/.../ComparisonJob.java for every size)
#   --reps N             runs of each job in each mode (default 3)
#   --json FILE          write the medians and every run as JSON to FILE as well
#   --work-dir DIR       the local cluster, Spark's local dir and the logs of every run
#                        (default /tmp/faro-spark-compare); put it on the disk under test
#   --cluster-conf FILE  a Faro settings file for the local cluster's master and worker
#   --heap SIZE          -Xmx of each job's JVM (default 6g; 2g with --disk-profile)
#   --disk-profile NAME  run on an emulated disk: local, gp3 or hdd (see bench/disk-profile.sh);
#                        Spark's local dir and the worker's disk are on it, the page cache is
#                        bounded (--cache) and caches are dropped before every run. Needs root.
#   --cache SIZE         with --disk-profile: the page cache the run's processes may fill, above
#                        what they need themselves (default 1g)
#   --concurrency N      run N copies of each job at once, as N applications (default 1), so
#                        that their reads interleave as on a shared node; a run's time is the
#                        slowest copy's
#   --spark-conf K=V     a Spark setting for every run, e.g. spark.faro.client.push.batch.size=...
#                        (repeatable)
#   --timeout SECONDS    limit for one run (default 1200)
#   --no-warmup          skip the unmeasured Faro runs (200 maps x 500 reducers, 512 MiB) that
#                        warm the worker up before the measured runs, repeated (at most 6) until
#                        one costs the worker's JIT compilers less than 0.5 s: a worker in
#                        production has run for days, so its first job does not pay for its JIT;
#                        each built-in run is a fresh JVM either way, as is each Faro job's
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
JOBS=""
SHAPES=""
PROFILE=""
CACHE=1g
CONCURRENCY=1
HEAP_SET=false
SCALE=1
REPS=3
JSON_FILE=""
WORK=/tmp/faro-spark-compare
CLUSTER_CONF=""
HEAP=""
RUN_TIMEOUT=1200
BUILD=true
WARMUP=true
# Warm-up runs repeat until one costs the worker less JIT time than this, at most this many times.
WARMUP_JIT_SECONDS=0.5
WARMUP_MAX_RUNS=6
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
    --shapes) SHAPES=$2; shift ;;
    --disk-profile) PROFILE=$2; shift ;;
    --cache) CACHE=$2; shift ;;
    --concurrency) CONCURRENCY=$2; shift ;;
    --spark-conf) SPARK_CONF+=(--conf "$2"); SPARK_CONF_VALUES+=("$2"); shift ;;
    --timeout) RUN_TIMEOUT=$2; shift ;;
    --no-build) BUILD=false ;;
    --no-warmup) WARMUP=false ;;
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
[[ "$CONCURRENCY" =~ ^[1-9][0-9]*$ ]] || fail "--concurrency must be a positive integer, not $CONCURRENCY"
# Sizes like 512m or 2g, in bytes.
to_bytes() {
  local v=${1,,}
  [[ "$v" =~ ^([0-9]+)([kmgt]?)b?$ ]] || return 1
  local n=${BASH_REMATCH[1]}
  case "${BASH_REMATCH[2]}" in k) n=$((n << 10)) ;; m) n=$((n << 20)) ;; g) n=$((n << 30)) ;; t) n=$((n << 40)) ;; esac
  echo "$n"
}
to_bytes "$CACHE" >/dev/null || fail "--cache takes a size like 512m or 2g, not $CACHE"
if [ -n "$PROFILE" ]; then
  source "$REPO/bench/disk-profile.sh"
  profile_params "$PROFILE" >/dev/null || fail "unknown --disk-profile '$PROFILE'; profiles are local, gp3, hdd"
  [ "$(id -u)" = 0 ] || fail "--disk-profile needs root (loop devices, cgroups, drop_caches)"
fi
[ -n "$HEAP" ] || { if [ -n "$PROFILE" ]; then HEAP=2g; else HEAP=6g; fi; }
to_bytes "$HEAP" >/dev/null || fail "--heap takes a size like 2g, not $HEAP"
if [ -z "$JOBS" ] && [ -z "$SHAPES" ]; then JOBS=large,small-blocks,sql; fi
JOB_LIST=()
[ -z "$JOBS" ] || IFS=, read -r -a JOB_LIST <<<"$JOBS"
for job in "${JOB_LIST[@]}"; do
  case "$job" in large|small-blocks|sql) ;; *) fail "unknown job '$job'; jobs are large, small-blocks, sql" ;; esac
done
# A shape MAPSxREDUCERS:BYTES becomes the job blocks-MAPSxREDUCERS-BYTES.
if [ -n "$SHAPES" ]; then
  IFS=, read -r -a SHAPE_LIST <<<"$SHAPES"
  for shape in "${SHAPE_LIST[@]}"; do
    [[ "$shape" =~ ^([1-9][0-9]*)x([1-9][0-9]*):([0-9]+[kKmMgGtT]?)$ ]] \
      || fail "--shapes takes MAPSxREDUCERS:BYTES like 200x500:512m, not '$shape'"
    JOB_LIST+=("blocks-${BASH_REMATCH[1]}x${BASH_REMATCH[2]}-${BASH_REMATCH[3],,}")
  done
fi
JOBS=$(IFS=,; echo "${JOB_LIST[*]}")
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
# On an emulated disk the heap is all touched at start, so that the memory bound leaves the page
# cache what it says and not also whatever part of the heap a job happens not to use.
[ -z "$PROFILE" ] || JVM_OPTS+=(-Xms"$HEAP" -XX:+AlwaysPreTouch)
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
WORKER_DIRS=()
if [ -n "$PROFILE" ]; then
  # What the jobs and the worker read and write for the shuffle goes on the emulated disk: Spark's
  # local directory and the worker's data directory (its metadata store in it, as by default). The
  # master's Raft log stays on the machine's disk, as masters do not share workers' disks.
  trap 'profile_teardown' EXIT
  profile_setup "$PROFILE" "$WORK/profile" || fail "could not set up disk profile $PROFILE"
  SPARK_LOCAL="$PROFILE_MOUNT/spark-local"
  WORKER_DIRS=(--worker-dirs "ssd@$PROFILE_MOUNT")
fi
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
for f in "$FARO_DIR"/client/faro-client-spark-3-*.jar; do [ -f "$f" ] && CLIENT_JAR=$f && break; done
[ -n "$CLIENT_JAR" ] || fail "no faro-client-spark-3 jar in $DIST/client"
CLASSPATH_ARG="$(tr -d '\n' <"$SPARK_CP_FILE"):$CLIENT_JAR:$EXAMPLES_JAR"
CLUSTER_STARTED=false
RUN_PIDS=()
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
  local pid
  for pid in "${RUN_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
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
  [ -z "$PROFILE" ] || profile_teardown
  exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -n "$PROFILE" ]; then
  # The bound: the jobs' heaps and what a JVM needs besides (about 0.6 GiB with Spark), what the
  # cluster uses now and may grow by (the worker's push memory budget and read buffers), and the
  # page cache. Set high for the start, then to that once the cluster's own use is known.
  profile_memory_bound $(( 64 << 30 )) || fail "could not bound memory"
fi
log "starting a local cluster (1 master, 1 worker) in $CLUSTER_DIR"
CLUSTER_ARGS=(local-cluster --workers 1 --work-dir "$CLUSTER_DIR" --detach --master-port 0 "${WORKER_DIRS[@]}")
WORKER_BUDGET=$((512 << 20))
if [ -n "$PROFILE" ]; then
  # The worker's push memory is counted in the memory bound below, whether it uses it or not
  # (what it leaves unused, the page cache may take, in both modes): a modest budget keeps that
  # slack small. The run's own settings file may set another.
  PROFILE_CONF="$WORK/profile-cluster.conf"
  { [ -z "$CLUSTER_CONF" ] || cat "$CLUSTER_CONF"; echo; } >"$PROFILE_CONF"
  if grep -q '^[[:space:]]*faro.worker.memory.budget[[:space:]]' "$PROFILE_CONF"; then
    WORKER_BUDGET=$(to_bytes "$(awk '$1 == "faro.worker.memory.budget" { v = $2 } END { print v }' "$PROFILE_CONF")") \
      || fail "faro.worker.memory.budget in $CLUSTER_CONF is not a size this script reads (like 512m)"
  else
    echo "faro.worker.memory.budget 512m" >>"$PROFILE_CONF"
  fi
  CLUSTER_ARGS+=(--conf "$PROFILE_CONF")
elif [ -n "$CLUSTER_CONF" ]; then
  CLUSTER_ARGS+=(--conf "$CLUSTER_CONF")
fi
# Set before the start: a start that fails half-way may still leave processes to stop.
CLUSTER_STARTED=true
"$FARO" "${CLUSTER_ARGS[@]}" >"$WORK/cluster.out" 2>&1 || {
  cat "$WORK/cluster.out" >&2; fail "the local cluster did not start"; }
MASTER=$(jq -r '.spark["spark.faro.master.endpoints"]' "$CLUSTER_DIR/cluster.json")
MEMORY_LIMIT=0
if [ -n "$PROFILE" ]; then
  profile_drop_caches
  sleep 2
  cluster_rss=0
  for pid in $(jq -r '.. | .pid? // empty' "$CLUSTER_DIR/cluster.json"); do
    cluster_rss=$(( cluster_rss + $(awk '/^VmRSS:/ { print $2 * 1024 }' "/proc/$pid/status" 2>/dev/null || echo 0) ))
  done
  # The worker's push budget, its read buffers (64 MiB) and room for its heap to grow.
  CLUSTER_GROWTH=$(( WORKER_BUDGET + (64 << 20) + (256 << 20) ))
  MEMORY_LIMIT=$(( cluster_rss + CLUSTER_GROWTH + CONCURRENCY * ($(to_bytes "$HEAP") + (600 << 20)) + $(to_bytes "$CACHE") ))
  profile_memory_limit "$MEMORY_LIMIT"
  log "memory bound $((MEMORY_LIMIT >> 20)) MiB: cluster $((cluster_rss >> 20)) MiB + $((CLUSTER_GROWTH >> 20)) MiB to grow," \
    "$CONCURRENCY x ($HEAP heap + 600 MiB), $CACHE of page cache"
fi
log "master at $MASTER; runs logged in $RUNS_DIR"

# --- the runs -------------------------------------------------------------------------------
# CPU seconds (x100, clock ticks) the whole machine has been busy, and the local cluster's
# processes have used, since boot: read around each run, the differences say what the run cost
# (this machine runs nothing else meanwhile) and which part of it was Faro's own processes.
machine_ticks() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }
cluster_ticks() {
  local pid total=0 t
  for pid in $(jq -r '.. | .pid? // empty' "$CLUSTER_DIR/cluster.json" 2>/dev/null); do
    t=$(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null || echo 0)
    total=$((total + t))
  done
  echo "$total"
}

# What the workers say they did, summed over the workers (their /metrics, read over bash's
# /dev/tcp so that no HTTP client is needed): seconds in disk reads (page-cache hits included),
# bytes read, and seconds their JIT compilers ran. Prints "null null null" if no worker answered
# (the figures are then missing from the run, not zero).
worker_counters() {
  local port sums
  sums=$(for port in $(jq -r '.workers[]?.httpPort // empty' "$CLUSTER_DIR/cluster.json" 2>/dev/null); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port" && printf 'GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3 \
      && timeout 10 cat <&3) 2>/dev/null || true
  done | awk '
    /^faro_worker_disk_read_seconds_total/ { s += $NF }
    /^faro_worker_disk_read_bytes_total/ { b += $NF }
    /^jvm_compilation_time_seconds_total/ { j += $NF; answered++ }
    END { if (answered) printf "%.3f %.0f %.3f\n", s, b, j; else print "null null null" }')
  echo "${sums:-null null null}"
}

# The difference of two worker_counters figures, or null if either is missing.
counter_delta() {
  awk -v a="$1" -v b="$2" -v f="$3" 'BEGIN { if (a == "null" || b == "null") print "null"; else printf f "\n", b - a }'
}

# Runs one job in one mode: CONCURRENCY fresh JVMs at once, one application each; appends one JSON
# line (the slowest copy's, with the repetition, and on an emulated disk what the disk served
# from the drop of the caches before it to the end of the sync after it) to RESULTS.
run_one() {
  local job=$1 mode=$2 rep=$3
  local name="$RUNS_DIR/$job-$mode-$rep"
  local job_arg=$job shape_conf=()
  if [[ "$job" =~ ^blocks-([0-9]+)x([0-9]+)-(.+)$ ]]; then
    job_arg=blocks
    shape_conf=(--conf "spark.examples.blocks.maps=${BASH_REMATCH[1]}"
      --conf "spark.examples.blocks.reducers=${BASH_REMATCH[2]}"
      --conf "spark.examples.blocks.bytes=${BASH_REMATCH[3]}")
  fi
  local args=(--job "$job_arg" --mode "$mode" --scale "$SCALE" --local-dir "$SPARK_LOCAL" "${shape_conf[@]}" "${SPARK_CONF[@]}")
  [ "$mode" = builtin ] || args+=(--master-endpoints "$MASTER")
  # Writes back the previous run's dirty pages now, so that they do not slow this run down; on an
  # emulated disk also empties the page cache, so that this run reads what it wrote, not what an
  # earlier one left.
  sync
  local before="0 0 0 0"
  if [ -n "$PROFILE" ]; then
    profile_drop_caches
    profile_memory_peak >/dev/null
    before=$(profile_counters)
    profile_anon_sampler_start
  fi
  local machine0 cluster0 workers0
  # First: reading the workers' metrics costs CPU that is not the run's.
  workers0=$(worker_counters)
  machine0=$(machine_ticks)
  cluster0=$(cluster_ticks)
  # In the background and waited for, so that Ctrl-C runs the trap at once: timeout puts the job
  # in its own process group, out of reach of the terminal's SIGINT, and kills it when killed.
  local copy
  RUN_PIDS=()
  for copy in $(seq "$CONCURRENCY"); do
    # Spark's event log, for the time of each stage (read below).
    rm -rf "$name.$copy.events"
    mkdir -p "$name.$copy.events"
    timeout "$RUN_TIMEOUT" "$JAVA" "${JVM_OPTS[@]}" -cp "$CLASSPATH_ARG" io.faro.examples.CompareJobs "${args[@]}" \
      --conf spark.eventLog.enabled=true --conf "spark.eventLog.dir=file://$name.$copy.events" \
      >"$name.$copy.out" 2>"$name.$copy.log" &
    RUN_PIDS+=($!)
  done
  local code failed=""
  for copy in $(seq "$CONCURRENCY"); do
    code=0
    wait "${RUN_PIDS[$((copy - 1))]}" || code=$?
    [ "$code" = 0 ] || failed+=" $copy:$code"
  done
  RUN_PIDS=()
  local machine_cpu=$(( $(machine_ticks) - machine0 )) cluster_cpu=$(( $(cluster_ticks) - cluster0 ))
  local workers1
  workers1=$(worker_counters)
  local anon=0
  [ -z "$PROFILE" ] || anon=$(profile_anon_sampler_stop)
  # The dirty pages the run left: written back now, and timed, so that a side whose writes were
  # still in the page cache when its job ended does not have them for free.
  local sync_start sync_millis=0 after="0 0 0 0" peak=0
  sync_start=$(date +%s%N)
  sync
  sync_millis=$(( ($(date +%s%N) - sync_start) / 1000000 ))
  if [ -n "$PROFILE" ]; then
    after=$(profile_counters)
    peak=$(profile_memory_peak)
  fi
  if [ -n "$failed" ]; then
    copy=${failed# }; copy=${copy%%:*}; code=${failed##*:}
    tail -n 30 "$name.$copy.log" >&2
    [ "$code" != 124 ] || fail "$job ($mode, run $rep, copy $copy) did not finish within ${RUN_TIMEOUT}s; log: $name.$copy.log"
    fail "$job ($mode, run $rep) failed (copy:exit code$failed); log: $name.$copy.log"
  fi
  local lines=""
  for copy in $(seq "$CONCURRENCY"); do
    local line stages
    line=$(grep '^{"job"' "$name.$copy.out" | tail -n 1 || true)
    jq -e . >/dev/null 2>&1 <<<"$line" || fail "$job ($mode, run $rep, copy $copy) printed no JSON line; see $name.$copy.out"
    # Each stage's wall time and the shuffle records it read and wrote, from the event log.
    stages=$(cat "$name.$copy.events"/* 2>/dev/null | grep '"Event":"SparkListenerStageCompleted"' | jq -s -c '
      def metric($n): [.Accumulables[]? | select(.Name == $n) | .Value | tostring | tonumber] | add // 0;
      [.[] | .["Stage Info"] | {stage: .["Stage ID"], tasks: .["Number of Tasks"],
        millis: ((.["Completion Time"] // 0) - (.["Submission Time"] // 0)),
        read_records: metric("internal.metrics.shuffle.read.recordsRead"),
        written_records: metric("internal.metrics.shuffle.write.recordsWritten")}]' || echo '[]')
    [ -n "$stages" ] || stages='[]'
    line=$(jq -c --argjson stages "$stages" '. + {stages: $stages,
      read_stage_millis: ($stages | max_by(.read_records) // {} | .millis),
      write_stage_millis: ($stages | max_by(.written_records) // {} | .millis)}' <<<"$line")
    lines+="$line"$'\n'
  done
  local ws0 wb0_ wj0 ws1 wb1_ wj1
  read -r ws0 wb0_ wj0 <<<"$workers0"
  read -r ws1 wb1_ wj1 <<<"$workers1"
  read -r r0 w0 rb0 wb0 <<<"$before"
  read -r r1 w1 rb1 wb1 <<<"$after"
  # The slowest copy's line, with every copy's time, the sums of the copies' shuffle figures and
  # what the disk served.
  jq -s -c --arg job "$job" --argjson rep "$rep" --argjson sync "$sync_millis" \
    --argjson rr $((r1 - r0)) --argjson wr $((w1 - w0)) --argjson rb $((rb1 - rb0)) --argjson wb $((wb1 - wb0)) \
    --argjson peak "$peak" --argjson anon "$anon" --argjson limit "$MEMORY_LIMIT" \
    --argjson machine_cpu "$machine_cpu" --argjson cluster_cpu "$cluster_cpu" \
    --argjson wread "$(counter_delta "$ws0" "$ws1" %.3f)" \
    --argjson wbytes "$(counter_delta "$wb0_" "$wb1_" %.0f)" \
    --argjson wjit "$(counter_delta "$wj0" "$wj1" %.3f)" '
    (max_by(.millis)) + {
      job: $job, rep: $rep, copies: length, copy_millis: [.[].millis],
      shuffle_write_bytes: ([.[].shuffle_write_bytes] | add),
      shuffle_read_bytes: ([.[].shuffle_read_bytes] | add),
      shuffle_fetch_wait_millis: ([.[].shuffle_fetch_wait_millis] | add),
      shuffle_write_millis: ([.[].shuffle_write_millis] | add),
      checksums: ([.[].checksum] | unique),
      write_stage_millis: ([.[].write_stage_millis // 0] | max),
      read_stage_millis: ([.[].read_stage_millis // 0] | max),
      sync_after_millis: $sync,
      disk_read_requests: $rr, disk_write_requests: $wr, disk_read_bytes: $rb, disk_write_bytes: $wb,
      machine_cpu_seconds: ($machine_cpu / 100), faro_processes_cpu_seconds: ($cluster_cpu / 100),
      worker_disk_read_seconds: $wread, worker_disk_read_bytes: $wbytes, worker_jit_seconds: $wjit,
      memory_peak_bytes: $peak, anon_peak_bytes: $anon,
      page_cache_room_bytes: (if $limit > 0 then $limit - $anon else null end)
    }' <<<"$lines" >>"$RESULTS"
  [ "$(tail -n 1 "$RESULTS" | jq '.checksums | length')" = 1 ] \
    || fail "CHECKSUM MISMATCH between the copies of $job ($mode, run $rep): $(tail -n 1 "$RESULTS" | jq -c .checksums)"
  log "$(jq -r '"\(.job) \(.mode) run \(.rep): \(.millis) ms (x\(.copies)), machine CPU \(.machine_cpu_seconds) s (Faro processes \(.faro_processes_cpu_seconds) s, worker JIT \(.worker_jit_seconds // "?") s), worker disk reads \(.worker_disk_read_seconds // "?") s for \(if .worker_disk_read_bytes then .worker_disk_read_bytes / 1e6 | floor else "?" end) MB, \(.records) rows, shuffle write \(.shuffle_write_bytes / 1e6 | floor) MB, read \(.shuffle_read_bytes / 1e6 | floor) MB, fetch wait \(.shuffle_fetch_wait_millis) ms, map stage \(.write_stage_millis) ms, reduce stage \(.read_stage_millis) ms, sync after \(.sync_after_millis) ms, disk reads \(.disk_read_requests) (\(.disk_read_bytes / 1e6 | floor) MB), writes \(.disk_write_requests) (\(.disk_write_bytes / 1e6 | floor) MB), page cache room at least \((.page_cache_room_bytes // 0) / 1048576 | floor) MiB, checksum \(.checksum)"' \
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

if $WARMUP; then
  # Until the worker's JIT has settled: after a single warm-up run of 128 MiB, its C2 compiler
  # still spent 4 s compiling the push and fetch paths during the next 0.56 GB run, on the two
  # cores that job needs, which a worker that has run for days never pays. The JIT time of each
  # measured run is reported with it (worker JIT).
  warm=0
  while :; do
    warm=$((warm + 1))
    jit0=$(worker_counters | awk '{ print $3 }')
    if [ "$jit0" = null ]; then
      log "the worker's /metrics did not answer: one warm-up run only, and no worker figures in the runs"
    fi
    warm_start=$(date +%s%N)
    timeout "$RUN_TIMEOUT" "$JAVA" "${JVM_OPTS[@]}" -cp "$CLASSPATH_ARG" io.faro.examples.CompareJobs \
      --job blocks --mode faro --master-endpoints "$MASTER" --local-dir "$SPARK_LOCAL" \
      --conf spark.examples.blocks.maps=200 --conf spark.examples.blocks.reducers=500 \
      --conf spark.examples.blocks.bytes=512m "${SPARK_CONF[@]}" \
      >"$RUNS_DIR/warmup.out" 2>"$RUNS_DIR/warmup.log" || fail "the warm-up run failed; log: $RUNS_DIR/warmup.log"
    jit=$(counter_delta "$jit0" "$(worker_counters | awk '{ print $3 }')" %.2f)
    log "warm-up run $warm (unmeasured, Faro, 200 x 500 blocks, 512 MiB): $(( ($(date +%s%N) - warm_start) / 1000000 )) ms, worker JIT $jit s"
    if [ "$jit" = null ] || awk -v j="$jit" -v limit="$WARMUP_JIT_SECONDS" 'BEGIN { exit !(j < limit) }'; then
      break
    fi
    if [ "$warm" -ge "$WARMUP_MAX_RUNS" ]; then
      log "the worker's JIT has not settled after $warm warm-up runs; measuring anyway"
      break
    fi
  done
fi
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
  --arg profile "${PROFILE_DESCRIPTION:-none: the disk of the work directory, page cache unbounded}" \
  --arg cache "$([ -n "$PROFILE" ] && echo "$CACHE" || echo unbounded)" \
  --argjson memory_limit "$MEMORY_LIMIT" \
  --argjson concurrency "$CONCURRENCY" \
  --argjson spark_conf "$(for c in "${SPARK_CONF_VALUES[@]}"; do jq -n --arg c "$c" '$c'; done | jq -s .)" \
  --argjson elapsed "$ELAPSED" '
  def median: map(select(. != null)) | sort | if length == 0 then null
    elif length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
  . as $runs
  | {
      date_utc: $date, commit: $commit, scale: $scale, reps: $reps,
      machine: {cores: $cores, memory_mib: $memory_mib}, job_heap: $heap, master: "local[2]",
      disk_profile: $profile, page_cache_bound: $cache, memory_limit_bytes: $memory_limit,
      concurrency: $concurrency,
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
            builtin_write_stage_millis: ([$b[].write_stage_millis] | median),
            faro_write_stage_millis: ([$f[].write_stage_millis] | median),
            builtin_read_stage_millis: ([$b[].read_stage_millis] | median),
            faro_read_stage_millis: ([$f[].read_stage_millis] | median),
            builtin_fetch_wait_millis: ([$b[].shuffle_fetch_wait_millis] | median),
            faro_fetch_wait_millis: ([$f[].shuffle_fetch_wait_millis] | median),
            builtin_disk_read_requests: ([$b[].disk_read_requests] | median),
            faro_disk_read_requests: ([$f[].disk_read_requests] | median),
            builtin_disk_read_bytes: ([$b[].disk_read_bytes] | median),
            faro_disk_read_bytes: ([$f[].disk_read_bytes] | median),
            builtin_disk_write_requests: ([$b[].disk_write_requests] | median),
            faro_disk_write_requests: ([$f[].disk_write_requests] | median),
            builtin_disk_write_bytes: ([$b[].disk_write_bytes] | median),
            faro_disk_write_bytes: ([$f[].disk_write_bytes] | median),
            builtin_page_cache_room_bytes: ([$b[].page_cache_room_bytes] | median),
            faro_page_cache_room_bytes: ([$f[].page_cache_room_bytes] | median),
            builtin_machine_cpu_seconds: ([$b[].machine_cpu_seconds] | median),
            faro_machine_cpu_seconds: ([$f[].machine_cpu_seconds] | median),
            faro_processes_cpu_seconds: ([$f[].faro_processes_cpu_seconds] | median),
            faro_worker_disk_read_seconds: ([$f[].worker_disk_read_seconds | select(. != null)] | median),
            faro_worker_disk_read_bytes: ([$f[].worker_disk_read_bytes | select(. != null)] | median),
            faro_worker_jit_seconds: ([$f[].worker_jit_seconds | select(. != null)] | median),
            builtin_sync_after_millis: ([$b[].sync_after_millis] | median),
            faro_sync_after_millis: ([$f[].sync_after_millis] | median),
            builtin_millis: [$b[].millis],
            faro_millis: [$f[].millis]
          }
        | . + {faro_to_builtin_ratio: (.faro_median_millis / .builtin_median_millis * 1000 | round / 1000)}
      ],
      runs: $runs
    }' "$RESULTS" >"$SUMMARY"
[ -z "$JSON_FILE" ] || cp "$SUMMARY" "$JSON_FILE"

echo "Spark local[2], scale $SCALE, $REPS run(s) per mode, $CONCURRENCY job(s) at once, medians (commit $COMMIT):"
[ -z "$PROFILE" ] || echo "disk profile $PROFILE_DESCRIPTION; page cache bound $CACHE (memory limit $((MEMORY_LIMIT >> 20)) MiB)"
printf '%-26s %10s %10s %8s %10s %10s %9s %9s %9s %9s %9s %10s %10s\n' job "builtin ms" "faro ms" "ratio" \
  "b write MB" "f write MB" "b wait s" "f wait s" "b reads" "f reads" "w read s" records identical
jq -r '.jobs[] | [.job, .builtin_median_millis, .faro_median_millis, .faro_to_builtin_ratio,
    (.builtin_shuffle_write_bytes / 1e6 | round), (.faro_shuffle_write_bytes / 1e6 | round),
    ((.builtin_fetch_wait_millis // 0) / 1000 | round), ((.faro_fetch_wait_millis // 0) / 1000 | round),
    (.builtin_disk_read_requests // "-"), (.faro_disk_read_requests // "-"),
    (if .faro_worker_disk_read_seconds then .faro_worker_disk_read_seconds * 10 | round / 10 else "-" end),
    .records, .identical] | @tsv' "$SUMMARY" |
  while IFS=$'\t' read -r job builtin faro ratio builtin_mb faro_mb bwait fwait breads freads wread records identical; do
    printf '%-26s %10s %10s %8s %10s %10s %9s %9s %9s %9s %9s %10s %10s\n' "$job" "$builtin" "$faro" "$ratio" "$builtin_mb" \
      "$faro_mb" "$bwait" "$fwait" "$breads" "$freads" "$wread" "$records" "$identical"
  done
echo "JSON: ${JSON_FILE:-$SUMMARY}"
