"""Checks docker/Dockerfile and docker/compose.yml against the code: run by DockerFilesIT.

No Docker engine runs where the tests do, so the files are read, not run: hadolint (run by the
test before this script) lints the Dockerfile; this script parses both files (dockerfile-parse,
PyYAML) and checks them against docs/configuration.md (the keys and their default ports) and
against each other. Prints one line per failed check and exits 1 if there is any.

Usage: python check_docker.py REPO_ROOT PROJECT_VERSION
"""
import re
import sys
from pathlib import Path

import yaml
from dockerfile_parse import DockerfileParser

root = Path(sys.argv[1])
version = sys.argv[2]
failures = []


def check(ok, message):
    if not ok:
        failures.append(message)


# Every key, with its default, from the generated configuration reference.
keys = {}
for line in (root / "docs/configuration.md").read_text().splitlines():
    m = re.match(r"\| `(faro\.[a-z0-9.<>|_-]+)` \| `([^`]*)` \|", line)
    if m:
        keys[m.group(1)] = m.group(2).strip()
check(len(keys) > 50, f"only {len(keys)} keys read from docs/configuration.md")
DEFAULT_PORTS = {
    "faro.master.port", "faro.master.raft.port", "faro.master.http.port",
    "faro.worker.rpc.port", "faro.worker.push.port", "faro.worker.fetch.port",
    "faro.worker.http.port"}

# ---- Dockerfile
parser = DockerfileParser(path=str(root / "docker/Dockerfile"))
instructions = parser.structure
by = lambda name: [i["value"] for i in instructions if i["instruction"] == name]
froms = by("FROM")
check(len(froms) == 1, f"one stage expected (built from the distribution), found {froms}")
# The base is a build argument: what a plain `docker build` uses is the ARG's default, declared
# before FROM.
before_from = []
for i in instructions:
    if i["instruction"] == "FROM":
        break
    if i["instruction"] != "COMMENT":
        before_from.append(i)
arg_defaults = dict(
    a["value"].split("=", 1) for a in before_from if a["instruction"] == "ARG" and "=" in a["value"])
check(all(a["instruction"] == "ARG" for a in before_from),
      f"only ARGs before FROM: {[a['instruction'] for a in before_from]}")
bases = [re.sub(r"\$\{(\w+)\}|\$(\w+)",
                lambda m: arg_defaults.get(m.group(1) or m.group(2), m.group(0)), f) for f in froms]
check(all("$" not in b for b in bases), f"a base image argument without a default: {froms}")
check(all(":" in b and not b.endswith(":latest") for b in bases),
      f"base image without a pinned tag: {bases}")
args = dict(a.split("=", 1) for a in by("ARG") if "=" in a)
check(args.get("FARO_VERSION") == version,
      f"ARG FARO_VERSION={args.get('FARO_VERSION')}, the project is {version}")
adds = by("ADD")
check(adds == ["dist/target/faro-${FARO_VERSION}.tar.gz /opt/"],
      f"the image must unpack the distribution tarball: ADD {adds}")
for source in [a.split()[0] for a in by("COPY") + by("ADD")]:
    path = root / source.replace("${FARO_VERSION}", version)
    check(path.exists(), f"COPY/ADD source {path} does not exist (build the distribution first)")
users = by("USER")
check(users and users[-1] not in ("root", "0"), f"the image must not run as root: USER {users}")
exposed = {int(p) for e in by("EXPOSE") for p in e.split()}
defaults = {int(keys[k]) for k in DEFAULT_PORTS if k in keys}
check(exposed == defaults, f"EXPOSE {sorted(exposed)} but the default ports are {sorted(defaults)}")
check(by("ENTRYPOINT") == ['["/opt/faro/bin/faro"]'], f"ENTRYPOINT {by('ENTRYPOINT')}")
conf_copy = [c for c in by("COPY") if c.startswith("docker/faro-docker.conf ")]
check(conf_copy == ["docker/faro-docker.conf /opt/faro/conf/faro-defaults.conf"],
      f"the image's settings file: COPY {conf_copy}")

# ---- faro-docker.conf
conf = {}
for line in (root / "docker/faro-docker.conf").read_text().splitlines():
    line = line.strip()
    if line and not line.startswith("#"):
        key, value = line.split(None, 1)
        conf[key] = value
        check(key in keys, f"faro-docker.conf: unknown key {key}")

# ---- compose.yml
compose = yaml.safe_load((root / "docker/compose.yml").read_text())
services = compose["services"]
ADVERTISED = "${FARO_ADVERTISED_HOST:-127.0.0.1}"


def settings(service):
    command = service["command"]
    out = dict(conf)
    for i, arg in enumerate(command):
        if arg == "--set":
            key, value = command[i + 1].split("=", 1)
            check(key in keys, f"unknown key {key} in a --set")
            out[key] = value
    return out


masters = {n: s for n, s in services.items() if s["command"][0] == "master"}
workers = {n: s for n, s in services.items() if s["command"][0] == "worker"}
check(len(masters) == 3 and len(workers) == 3,
      f"3 masters and 3 workers expected: {sorted(masters)}, {sorted(workers)}")
ports = {}
master_rpc = []
raft_peers = []
for name, s in sorted(masters.items()):
    c = settings(s)
    check(c.get("faro.master.id") == name, f"{name}: faro.master.id {c.get('faro.master.id')}")
    check(c.get("faro.master.advertised.host") == ADVERTISED,
          f"{name} must advertise FARO_ADVERTISED_HOST")
    for key in ("faro.master.port", "faro.master.raft.port", "faro.master.http.port"):
        ports.setdefault(int(c[key]), []).append(f"{name} {key}")
    master_rpc.append(f"{ADVERTISED}:{c['faro.master.port']}")
    raft_peers.append(f"{name}@{ADVERTISED}:{c['faro.master.raft.port']}/{c['faro.master.port']}")
    check(any(v.endswith(":/var/lib/faro") for v in s.get("volumes", [])) and
          c["faro.master.ratis.dir"].startswith("/var/lib/faro/"),
          f"{name}: its Raft directory must be on a volume")
    test = s.get("healthcheck", {}).get("test", [])
    check(f"http://127.0.0.1:{c['faro.master.http.port']}/status" in test,
          f"{name}: health check {test} is not its /status page")
for name, s in sorted(masters.items()):
    c = settings(s)
    check(c["faro.master.raft.peers"] == ",".join(raft_peers),
          f"{name}: faro.master.raft.peers {c['faro.master.raft.peers']}, expected {raft_peers}")
for name, s in sorted({**masters, **workers}.items()):
    c = settings(s)
    check(c.get("faro.master.endpoints") == ",".join(master_rpc),
          f"{name}: faro.master.endpoints {c.get('faro.master.endpoints')}, expected {master_rpc}")
    check(s.get("network_mode") == "host", f"{name}: not on the host's network")
    check("healthcheck" in s, f"{name}: no health check")
for name, s in sorted(workers.items()):
    c = settings(s)
    check(c.get("faro.worker.id") == name, f"{name}: faro.worker.id {c.get('faro.worker.id')}")
    check(c.get("faro.worker.host") == ADVERTISED, f"{name} must advertise FARO_ADVERTISED_HOST")
    for key in ("faro.worker.rpc.port", "faro.worker.push.port", "faro.worker.fetch.port",
                "faro.worker.http.port"):
        ports.setdefault(int(c[key]), []).append(f"{name} {key}")
    mounts = [v.split(":", 1)[1] for v in s.get("volumes", [])]
    for d in c["faro.worker.dirs"].split(","):
        check(d.split(":")[0] in mounts, f"{name}: disk {d} is not a volume ({mounts})")
    check(c["faro.worker.meta.dir"].startswith("/var/lib/faro") and "/var/lib/faro" in mounts,
          f"{name}: its metadata directory must be on a volume")
    test = s.get("healthcheck", {}).get("test", [])
    check(f"http://127.0.0.1:{c['faro.worker.http.port']}/api/v1/disks" in test,
          f"{name}: health check {test} is not its /api/v1/disks page")
    deps = dict(s.get("depends_on", {}))
    secrets_dep = deps.pop("secrets", {})
    check(set(deps) == set(masters) and all(
        d.get("condition") == "service_healthy" for d in deps.values()),
          f"{name}: must wait for every master to be healthy: {deps}")
    check(secrets_dep.get("condition") == "service_completed_successfully",
          f"{name}: must wait for the secrets to be made: {secrets_dep}")
# Authentication on, as shipped: one service makes both secrets into a volume every member reads.
secret_files = {conf.get("faro.auth.cluster.secret.file"), conf.get("faro.auth.admin.secret.file")}
check(conf.get("faro.auth.enabled", "true") == "true" and None not in secret_files,
      f"faro-docker.conf must name both secret files with authentication on: {secret_files}")
maker = services.get("secrets", {})
maker_script = " ".join(maker.get("command", []))
check("faro secret --out /secrets/$$s.secret" in maker_script and
      "faro-secrets:/secrets" in maker.get("volumes", []),
      f"the secrets service must make both secrets into the faro-secrets volume: {maker}")
for f in secret_files - {None}:
    check(f.startswith("/secrets/"), f"secret file {f} is not in the secrets volume")
for name, s in sorted({**masters, **workers}.items()):
    check("faro-secrets:/secrets:ro" in s.get("volumes", []),
          f"{name}: must read the secrets volume, read-only")
check(masters and all(
    s.get("depends_on", {}).get("secrets", {}).get("condition") == "service_completed_successfully"
    for s in masters.values()), "every master must wait for the secrets to be made")
for port, users in sorted(ports.items()):
    check(len(users) == 1, f"port {port} used twice on the host: {users}")
check(set(compose.get("volumes", {})) ==
      {v.split(":")[0] for s in services.values() for v in s.get("volumes", [])},
      "every named volume is declared, and only those used")

for f in failures:
    print("FAIL:", f)
print(f"{len(failures)} failed checks; {len(keys)} keys, {len(services)} services, "
      f"{len(ports)} host ports")
sys.exit(1 if failures else 0)
