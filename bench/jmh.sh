#!/usr/bin/env bash
# Runs Faro's JMH microbenchmarks of the hot path (bench/src/main/java/io/faro/bench/jmh):
# frame encode/decode, batch encode/decode (LZ4, CRC32C), worker append and flush, chunk read.
#
#   bench/jmh.sh                         every benchmark, short settings (-f 1 -wi 2 -i 3 -w 1s -r 1s)
#   bench/jmh.sh BatchCodec              the benchmarks matching a regex, short settings
#   bench/jmh.sh -f 3 -wi 5 -i 10 Batch  your own JMH options (then no defaults are added)
#   bench/jmh.sh -h                      JMH's help; -rf json -rff FILE writes results as JSON
#
# Builds the bench module first when its jar is missing or older than the sources it measures.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLASSPATH_FILE="$ROOT/bench/target/jmh-classpath.txt"
jar() { ls "$ROOT"/bench/target/faro-bench-*.jar 2>/dev/null | grep -v -e '-sources' -e '-tests' | head -n 1 || true; }

JAR="$(jar)"
if [ -z "$JAR" ] || [ ! -f "$CLASSPATH_FILE" ] \
    || [ -n "$(find "$ROOT/bench/src" "$ROOT/common/src/main" "$ROOT/worker/src/main" "$ROOT/proto/src/main" \
                -newer "$JAR" -type f -print -quit)" ]; then
  echo "Building the bench module..." >&2
  (cd "$ROOT" && mvn -B -q -DskipTests install -pl bench -am)
  JAR="$(jar)"
fi

# Defaults only when no option is given, so that yours are never mixed with them.
has_option=false
for arg in "$@"; do
  case "$arg" in -*) has_option=true ;; esac
done
if [ "$has_option" = false ]; then
  set -- -f 1 -wi 2 -i 3 -w 1s -r 1s "$@"
fi

if [ -n "${JAVA_HOME:-}" ]; then JAVA="$JAVA_HOME/bin/java"; else JAVA="java"; fi
exec "$JAVA" -cp "$JAR:$(cat "$CLASSPATH_FILE")" org.openjdk.jmh.Main "$@"
