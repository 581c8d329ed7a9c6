#!/usr/bin/env bash
# What a worker's request and flush metrics cost: `bin/faro bench --local-cluster --workers 1`
# run ROUNDS times with faro.worker.metrics.enabled true and ROUNDS times with false, alternating
# (on, off, off, on, on, off...), each on a fresh local cluster of the same build, after a sync. With false the worker
# counts and times no request and no flush; what it counts anyway (traffic, disks, memory) and
# its /metrics page stay. A scraper reads every worker's and master's /metrics every second during
# the "on" runs, as a Prometheus server would (more often than one would).
# Prints one line per run and the medians of push MB/s and the worker's ingest CPU per GB, with
# on / off ratios.
#
# Usage: bash bench/metrics-cost.sh [--rounds N] [--total-bytes SIZE] [--work-dir DIR]
#        (after mvn -DskipTests package; needs python3)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=5
BYTES=2g
WORK=/tmp/faro-metrics-cost
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS=$2; shift 2 ;;
    --total-bytes) BYTES=$2; shift 2 ;;
    --work-dir) WORK=$2; shift 2 ;;
    *) echo "usage: $0 [--rounds N] [--total-bytes SIZE] [--work-dir DIR]" >&2; exit 2 ;;
  esac
done
rm -rf "$WORK" && mkdir -p "$WORK"
printf 'faro.worker.metrics.enabled true\n' > "$WORK/on.conf"
printf 'faro.worker.metrics.enabled false\n' > "$WORK/off.conf"

scrape_loop() {  # scrapes every member of the cluster in $1 once a second until killed
  local dir=$1 ports=""
  while [ -z "$ports" ]; do
    sleep 0.2
    [ -f "$dir/cluster.json" ] || continue
    ports=$(python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
print(" ".join(str(m["httpPort"]) for m in d["masters"]+d["workers"]))' "$dir/cluster.json" 2>/dev/null || true)
  done
  while true; do
    for port in $ports; do
      curl -s -o /dev/null "http://127.0.0.1:$port/metrics" || true
    done
    sleep 1
  done
}

scraper=""
# A failed run ends the script (set -e): its scraper must not outlive it.
trap '[ -n "$scraper" ] && kill "$scraper" 2>/dev/null || true' EXIT

for round in $(seq 1 "$ROUNDS"); do
  # ABBA: on first in odd rounds, off first in even ones, so that neither always follows the other.
  order="on off"
  if [ $((round % 2)) -eq 0 ]; then order="off on"; fi
  for mode in $order; do
    run="$WORK/$mode-$round"
    # The last run's data written back first: its write-back must not land in this run.
    sync
    scraper=""
    if [ "$mode" = on ]; then
      scrape_loop "$run" & scraper=$!
    fi
    "$REPO/bin/faro" bench --local-cluster --workers 1 --work-dir "$run" --total-bytes "$BYTES" \
      --conf "$WORK/$mode.conf" --json "$run.json" > "$run.txt" 2>&1
    if [ -n "$scraper" ]; then kill "$scraper" 2>/dev/null || true; wait "$scraper" 2>/dev/null || true; fi
    python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
assert d["verified"], sys.argv[1] + ": not verified"
print(sys.argv[2], sys.argv[3], "push_mb_per_s", d["push_mb_per_s"], "worker_ingest_cpu_s_per_gb", d["worker_ingest_cpu_s_per_gb"])' \
      "$run.json" "$mode" "$round"
  done
done

python3 - "$WORK" "$ROUNDS" <<'PY'
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
def med(mode, key):
    return statistics.median(json.load(open(f"{work}/{mode}-{r}.json"))[key] for r in range(1, rounds + 1))
for key in ("push_mb_per_s", "worker_ingest_cpu_s_per_gb"):
    on, off = med("on", key), med("off", key)
    print(f"{key}: metrics on {on:.3f}, off {off:.3f}, on / off {on / off:.3f} (medians of {rounds})")
PY
