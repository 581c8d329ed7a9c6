#!/usr/bin/env bash
# What authentication on by default costs a job: the 57 Spark SQL queries of
# examples/.../SmallQueries.java (many small shuffles, each run a new application in a fresh JVM,
# so every run pays its registration, handshakes and first connections) through two local clusters
# of 1 master and 2 workers side by side: one as shipped (authentication on, secrets made by
# local-cluster) and one with faro.auth.enabled=false. Rounds alternate the order (ABBA); one
# unmeasured run on each first warms the workers up. Every query's checksum must agree across runs.
# Prints the medians of each query in each mode, the totals, their ratio and the geometric mean of
# the per-query ratios, and the connections each cluster's first worker held after the last run.
#
# Usage: bash bench/auth-cost.sh [--rounds N] [--scale X] [--work-dir DIR]
#        (after mvn -DskipTests package; needs python3)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=3
SCALE=1
WORK=/tmp/faro-auth-cost
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
printf 'faro.auth.enabled=false\n' >"$WORK/off.conf"
trap 'for c in on off; do "$FARO" local-cluster stop --work-dir "$WORK/$c" >/dev/null 2>&1 || true; done' EXIT
"$FARO" local-cluster --workers 2 --work-dir "$WORK/on" --detach --master-port 0 >"$WORK/on.out" 2>&1
"$FARO" local-cluster --workers 2 --work-dir "$WORK/off" --detach --master-port 0 \
  --conf "$WORK/off.conf" >"$WORK/off.out" 2>&1
masters() {
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["spark"]["spark.faro.master.endpoints"])' \
    "$WORK/$1/cluster.json"
}

run() {  # run CLUSTER NAME: one JVM (one application) running every query
  local cluster=$1 name=$2
  java "${JVM_OPTS[@]}" -cp "$CP" io.faro.examples.SmallQueries --mode faro --scale "$SCALE" \
    --local-dir "$WORK/spark-$name" --master-endpoints "$(masters "$cluster")" \
    >"$WORK/$name.out" 2>"$WORK/$name.err" || {
      echo "run $name failed; see $WORK/$name.err" >&2; exit 1; }
  echo "$name: $(grep -c '"query"' "$WORK/$name.out") queries" >&2
}

run on warmup-on
run off warmup-off
for round in $(seq 1 "$ROUNDS"); do
  order="on off"
  if [ $((round % 2)) -eq 0 ]; then order="off on"; fi
  for mode in $order; do
    run "$mode" "$mode-$round"
  done
done
for mode in on off; do
  port=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["workers"][0]["httpPort"])' \
    "$WORK/$mode/cluster.json")
  exec 3<>"/dev/tcp/127.0.0.1/$port"
  printf 'GET /metrics HTTP/1.0\r\n\r\n' >&3
  grep '^faro_worker_connections' <&3 | sed "s/^/$mode: /" >"$WORK/$mode.connections" || true
  exec 3<&-
done

python3 - "$WORK" "$ROUNDS" <<'PY'
import json, math, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
runs = {}
for mode in ("on", "off"):
    for r in range(1, rounds + 1):
        with open(f"{work}/{mode}-{r}.out") as f:
            runs[(mode, r)] = [json.loads(l) for l in f if l.startswith('{"query"')]
names = [q["name"] for q in runs[("on", 1)]]
wrong = [n for i, n in enumerate(names) if len({rows[i]["checksum"] for rows in runs.values()}) != 1]
med = {m: [statistics.median(runs[(m, r)][i]["millis"] for r in range(1, rounds + 1))
           for i in range(len(names))] for m in ("on", "off")}
totals = {m: [sum(q["millis"] for q in runs[(m, r)]) for r in range(1, rounds + 1)]
          for m in ("on", "off")}
ratios = [max(a, 1) / max(b, 1) for a, b in zip(med["on"], med["off"])]
geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
print(f"{len(names)} queries, {rounds} rounds (each run a new application)")
for m in ("on", "off"):
    print(f"  auth {m:3}: run totals {totals[m]} ms, sum of per-query medians {sum(med[m]):.0f} ms")
print(f"  on / off: {sum(med['on']) / sum(med['off']):.3f} of the total,"
      f" geometric mean of per-query ratios {geo:.3f}")
for m in ("on", "off"):
    try:
        print("  " + open(f"{work}/{m}.connections").read().strip().replace("\n", "\n  "))
    except OSError:
        pass
if wrong:
    print("DIFFERENT RESULTS:", *wrong, sep="\n  ")
    sys.exit(1)
print("results: every query's checksum the same in every run of both clusters")
PY
