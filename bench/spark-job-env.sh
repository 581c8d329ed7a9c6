# Sourced by the bench scripts that run the comparison jobs against a local cluster
# (worker-kill.sh, rolling-restart.sh): where the built distribution is, and how to start a job's
# JVM as `bin/faro demo` does (Spark's jars, the shaded client jar, the examples jar). Sets DIST,
# FARO (its bin/faro), CP and JVM_OPTS. Needs REPO (the repository's root) and a build
# (mvn -DskipTests package).
DIST=$(ls -d "$REPO"/dist/target/faro-*/faro-*/ | head -1)
EXAMPLES_JAR=$(ls "$REPO"/examples/target/faro-examples-*.jar | grep -v -e -tests -e -sources | head -1)
CLIENT_JAR=$(ls "$DIST"/client/faro-client-spark-3-*.jar | head -1)
CP="$(tr -d '\n' <"$REPO/examples/target/spark-classpath.txt"):$CLIENT_JAR:$EXAMPLES_JAR"
FARO="$DIST/bin/faro"
JVM_OPTS=(-Xmx3g -Djdk.reflect.useDirectMethodHandle=false)
for p in java.lang java.lang.invoke java.lang.reflect java.io java.net java.nio java.util \
    java.util.concurrent java.util.concurrent.atomic sun.nio.ch sun.nio.cs sun.security.action sun.util.calendar; do
  JVM_OPTS+=("--add-opens=java.base/$p=ALL-UNNAMED")
done
