#!/usr/bin/env bash
# LZ4 against ZSTD (faro.client.compression.codec) on whole Spark jobs through one local cluster
# of 2 workers: each job runs with lz4, zstd, zstd, lz4 (ABBA), each in a fresh JVM after a sync,
# and prints CompareJobs' JSON line with "codec" added. Needs a build (mvn -DskipTests package).
#
#   bench/codec-compare.sh                      the large and sql jobs at scale 0.1
#   JOBS="large" SCALE=0.25 bench/codec-compare.sh
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUNS_DIR="${RUNS_DIR:-$(mktemp -d /tmp/faro-codec-XXXXXX)}"
SPARK_LOCAL="$RUNS_DIR/spark-local"
# shellcheck source=bench/spark-job-env.sh
. "$REPO/bench/spark-job-env.sh"
"$FARO" local-cluster --workers 2 --master-port 0 --work-dir "$RUNS_DIR/cluster" --detach >"$RUNS_DIR/cluster.out"
trap '"$FARO" local-cluster stop --work-dir "$RUNS_DIR/cluster" >/dev/null 2>&1 || true' EXIT
MASTER=$(python3 -c "import re,sys; print(re.search(r'spark.faro.master.endpoints\"\s*:\s*\"([^\"]+)', open(sys.argv[1]).read()).group(1))" "$RUNS_DIR/cluster/cluster.json")
for job in ${JOBS:-large sql}; do
  for codec in lz4 zstd zstd lz4; do
    sync
    java "${JVM_OPTS[@]}" -cp "$CP" io.faro.examples.CompareJobs --job "$job" --mode faro \
        --scale "${SCALE:-0.1}" --master-endpoints "$MASTER" --local-dir "$SPARK_LOCAL" \
        --conf "spark.faro.client.compression.codec=$codec" 2>"$RUNS_DIR/$job-$codec.err" \
      | grep '^{' | sed "s/^{/{\"codec\":\"$codec\",/"
  done
done
