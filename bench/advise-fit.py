#!/usr/bin/env python3
"""bench/advise-fit.py: fits advise's per-block, per-byte and write-time constants to the runs of
bench/advise-check.sh (Python 3 standard library only; reads no network, writes nothing).

Usage: bench/advise-fit.py [WORK_DIR]   (default /tmp/faro-advise-check)

For every job it takes, from each run's event log, the task time ("Executor Run Time") of its map
stages (stages that write a shuffle and read none) and of its reading stages, and the medians over
the runs of each mode. It then fits, by least squares, what cli/.../advise/Estimate.java uses:

  map stages:     built-in - Faro + fixed costs = WRITE_TIME_FACTOR * max(0, write time - 2 ms x tasks)
                                                  - PUSH_MILLIS_PER_MB * MiB written
  reading stages: built-in - Faro + 0.1 ms x tasks = BLOCK_MILLIS * blocks - READ_MILLIS_PER_MB * MiB read

(the fixed costs, 12 ms per shuffle and 0.4 ms per map task, and the 2 ms of the built-in writer's
per-task file work are Estimate's, measured apart), and prints the constants and, per job, the fit
beside the measurement.
"""
import glob
import json
import os
import statistics
import sys

SHUFFLE_MILLIS = 12.0
MAP_TASK_MILLIS = 0.4
READ_TASK_MILLIS = 0.1
BUILTIN_TASK_WRITE_MILLIS = 2.0
MIB = 1024.0 * 1024.0


def run_totals(log):
    """Per stage: tasks, run ms, write ms, blocks read, bytes written and read."""
    stages = {}
    with open(log, encoding="utf-8") as lines:
        for line in lines:
            if not line.startswith('{"Event":"SparkListenerTaskEnd"'):
                continue
            event = json.loads(line)
            metrics = event.get("Task Metrics") or {}
            read = metrics.get("Shuffle Read Metrics") or {}
            write = metrics.get("Shuffle Write Metrics") or {}
            s = stages.setdefault(event["Stage ID"], [0, 0.0, 0.0, 0, 0, 0])
            s[0] += 1
            s[1] += metrics.get("Executor Run Time", 0)
            s[2] += write.get("Shuffle Write Time", 0) / 1e6
            s[3] += read.get("Remote Blocks Fetched", 0) + read.get("Local Blocks Fetched", 0)
            s[4] += write.get("Shuffle Bytes Written", 0)
            s[5] += read.get("Remote Bytes Read", 0) + read.get("Local Bytes Read", 0)
    maps = [0, 0.0, 0.0, 0, 0, 0]
    reads = [0, 0.0, 0.0, 0, 0, 0]
    for s in stages.values():
        side = reads if s[3] > 0 else maps if s[4] > 0 else None
        if side is not None:
            for i, v in enumerate(s):
                side[i] += v
    return maps, reads


def lstsq(rows, ys):
    """Least squares by the normal equations (a few unknowns)."""
    n = len(rows[0])
    m = [[sum(r[i] * r[j] for r in rows) for j in range(n)] + [sum(r[i] * y for r, y in zip(rows, ys))]
         for i in range(n)]
    for i in range(n):
        p = max(range(i, n), key=lambda r: abs(m[r][i]))
        m[i], m[p] = m[p], m[i]
        for r in range(n):
            if r != i:
                f = m[r][i] / m[i][i]
                m[r] = [a - f * b for a, b in zip(m[r], m[i])]
    return [m[i][n] / m[i][i] for i in range(n)]


def main():
    work = sys.argv[1] if len(sys.argv) > 1 else "/tmp/faro-advise-check"
    runs = {}
    for events in sorted(glob.glob(os.path.join(work, "compare", "runs", "*.1.events"))):
        job, mode, _ = os.path.basename(events)[: -len(".1.events")].rsplit("-", 2)
        for log in glob.glob(os.path.join(events, "*")):
            runs.setdefault(job, {}).setdefault(mode, []).append(run_totals(log))
    jobs = sorted(j for j, m in runs.items() if m.get("builtin") and m.get("faro"))
    if len(jobs) < 2:
        sys.exit(f"advise-fit: fewer than two jobs with runs of both modes in {work}/compare/runs")

    def med(job, mode, side, i):
        return statistics.median(r[side][i] for r in runs[job][mode])

    map_rows, map_ys, read_rows, read_ys = [], [], [], []
    for job in jobs:
        b = runs[job]["builtin"][0]
        map_rows.append([max(0.0, med(job, "builtin", 0, 2) - BUILTIN_TASK_WRITE_MILLIS * b[0][0]),
                         -b[0][4] / MIB])
        map_ys.append(med(job, "builtin", 0, 1) - med(job, "faro", 0, 1)
                      + SHUFFLE_MILLIS + MAP_TASK_MILLIS * b[0][0])
        read_rows.append([b[1][3], -b[1][5] / MIB])
        read_ys.append(med(job, "builtin", 1, 1) - med(job, "faro", 1, 1) + READ_TASK_MILLIS * b[1][0])
    factor, push = lstsq(map_rows, map_ys)
    block, read = lstsq(read_rows, read_ys)
    print(f"WRITE_TIME_FACTOR  {factor:.3f}")
    print(f"PUSH_MILLIS_PER_MB {push:.3f}")
    print(f"BLOCK_MILLIS       {block:.4f}")
    print(f"READ_MILLIS_PER_MB {read:.3f}")
    print(f"{'job':<26} {'map fit':>9} {'measured':>9} {'read fit':>9} {'measured':>9}  (ms, fixed costs included)")
    for job, mr, my, rr, ry in zip(jobs, map_rows, map_ys, read_rows, read_ys):
        print(f"{job:<26} {factor * mr[0] + push * mr[1]:9.0f} {my:9.0f} {block * rr[0] + read * rr[1]:9.0f} {ry:9.0f}")


if __name__ == "__main__":
    main()
