#!/usr/bin/env bash
# Many small shuffles: the 57 Spark SQL queries of examples/.../SmallQueries.java (aggregations,
# shuffle joins, windows, set operations, sorts, subqueries, grouping sets, empty inputs; most
# shuffle kilobytes to a few megabytes) with Spark's built-in shuffle and with Faro, on a local
# cluster of 1 master and 2 workers. Each round runs both modes, each in a fresh JVM, in ABBA order
# (builtin first in odd rounds, faro first in even ones); one unmeasured faro run first warms the
# workers up, as a long-running cluster is. Every query's result (an order-independent checksum)
# must be the same in every run of both modes.
# Prints, per query, the median milliseconds of each mode and their ratio, then the totals (sums of
# the medians), the total ratio and the geometric mean of the per-query ratios. Run files go to
# WORK; one JSON line per query and run in WORK/<mode>-<round>.out.
#
# Usage: bash bench/small-queries.sh [--rounds N] [--scale X] [--work-dir DIR]
#        (after mvn -DskipTests package; needs python3)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=3
SCALE=1
WORK=/tmp/faro-small-queries
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS=$2; shift 2 ;;
    --scale) SCALE=$2; shift 2 ;;
    --work-dir) WORK=$2; shift 2 ;;
    *) echo "usage: $0 [--rounds N] [--scale X] [--work-dir DIR]" >&2; exit 2 ;;
  esac
done
# shellcheck source=bench/spark-job-env.sh
source "$REPO/bench/spark-job-env.sh"
rm -rf "$WORK" && mkdir -p "$WORK"
cluster="$WORK/cluster"
trap '"$FARO" local-cluster stop --work-dir "$cluster" >/dev/null 2>&1 || true' EXIT
"$FARO" local-cluster --workers 2 --work-dir "$cluster" --detach --master-port 0 \
  >"$WORK/cluster.out" 2>&1
master=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["spark"]["spark.faro.master.endpoints"])' \
  "$cluster/cluster.json")

run() {  # run MODE NAME: one JVM running every query
  local mode=$1 name=$2
  local args=(--mode "$mode" --scale "$SCALE" --local-dir "$WORK/spark-$name")
  if [ "$mode" = faro ]; then args+=(--master-endpoints "$master"); fi
  java "${JVM_OPTS[@]}" -cp "$CP" io.faro.examples.SmallQueries "${args[@]}" \
    >"$WORK/$name.out" 2>"$WORK/$name.err" || {
      echo "run $name failed; see $WORK/$name.err" >&2; exit 1; }
  echo "$name: $(grep -c '"query"' "$WORK/$name.out") queries" >&2
}

run faro warmup
for round in $(seq 1 "$ROUNDS"); do
  order="builtin faro"
  if [ $((round % 2)) -eq 0 ]; then order="faro builtin"; fi
  for mode in $order; do
    run "$mode" "$mode-$round"
  done
done

python3 - "$WORK" "$ROUNDS" <<'PY'
import json, math, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
runs = {}
for mode in ("builtin", "faro"):
    for r in range(1, rounds + 1):
        with open(f"{work}/{mode}-{r}.out") as f:
            runs[(mode, r)] = [json.loads(l) for l in f if l.startswith('{"query"')]
names = [q["name"] for q in runs[("builtin", 1)]]
wrong = []
for i, name in enumerate(names):
    sums = {rows[i]["checksum"] for rows in runs.values()}
    if len(sums) != 1:
        wrong.append(f"{name}: {sorted(sums)}")
med = {m: [statistics.median(runs[(m, r)][i]["millis"] for r in range(1, rounds + 1))
           for i in range(len(names))] for m in ("builtin", "faro")}
print(f"{'query':24} {'built-in ms':>11} {'faro ms':>8} {'ratio':>6}")
ratios = []
for i, name in enumerate(names):
    b, f = med["builtin"][i], med["faro"][i]
    ratio = max(f, 1) / max(b, 1)
    ratios.append(ratio)
    print(f"{name:24} {b:11.0f} {f:8.0f} {ratio:6.2f}")
tb, tf = sum(med["builtin"]), sum(med["faro"])
geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
print(f"{len(names)} queries, medians of {rounds} rounds: built-in {tb:.0f} ms, faro {tf:.0f} ms,"
      f" total faro / built-in {tf / tb:.3f}, geometric mean of per-query ratios {geo:.3f}")
if wrong:
    print("DIFFERENT RESULTS:", *wrong, sep="\n  ")
    sys.exit(1)
print("results: every query's checksum the same in every run of both modes")
PY
