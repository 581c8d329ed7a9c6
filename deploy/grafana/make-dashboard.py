#!/usr/bin/env python3
"""Writes faro-dashboard.json, the Grafana dashboard of a Faro cluster, from the panels below.

Run it after changing a panel: python3 deploy/grafana/make-dashboard.py [OUTPUT]
A test (deploy module, DashboardScrapeIT) scrapes a running cluster after a Spark job and checks
that every metric a panel's query names is in the scrape, and that this file is what the script
writes.
"""
import json
import os

ROWS = [
    ("Cluster", [
        ("Pushed into workers", "Bps", ["sum(rate(faro_worker_pushed_bytes_total[1m]))"]),
        ("Served to reducers", "Bps", ["sum(rate(faro_worker_fetched_bytes_total[1m]))"]),
        ("Forwarded to replicas", "Bps", ["sum(rate(faro_worker_replicated_bytes_total[1m]))"]),
        ("Workers by state (masters' view)", "short", ["max by (state) (faro_master_workers)"]),
        ("Applications and shuffles", "short",
         ["max(faro_master_apps)", "max(faro_master_shuffles)"]),
        ("Workers pausing pushes", "short", ["sum(faro_worker_memory_paused)"]),
        ("Slot requests p99", "s",
         ["max(faro_master_request_seconds{type=\"request_slots\",quantile=\"0.99\"})"]),
        ("Request failures", "reqps",
         ["sum by (port, type) (rate(faro_worker_request_failures_total[1m]))",
          "sum by (type) (rate(faro_master_request_failures_total[1m]))"]),
    ]),
    ("Workers", [
        ("Pushed bytes", "Bps", ["sum by (instance) (rate(faro_worker_pushed_bytes_total[1m]))"]),
        ("Fetched bytes", "Bps", ["sum by (instance) (rate(faro_worker_fetched_bytes_total[1m]))"]),
        ("Push p99", "s",
         ["faro_worker_request_seconds{port=\"push\",type=\"push\",quantile=\"0.99\"}"]),
        ("Fetch p99", "s",
         ["faro_worker_request_seconds{port=\"fetch\",type=\"fetch_chunk\",quantile=\"0.99\"}"]),
        ("Commit p99", "s",
         ["faro_worker_request_seconds{port=\"rpc\",type=\"commit_files\",quantile=\"0.99\"}"]),
        ("Memory budget", "bytes",
         ["faro_worker_memory_budget_used_bytes", "faro_worker_memory_budget_pause_bytes"]),
        ("Time paused (share of wall time)", "percentunit",
         ["rate(faro_worker_memory_paused_seconds_total[1m])"]),
        ("Pauses", "short", ["increase(faro_worker_memory_pauses_total[5m])"]),
        ("SPLIT answers", "short", ["rate(faro_worker_split_answers_total[1m])"]),
        ("WORKER_FULL answers (faro.worker.max.written.partitions)", "short",
         ["rate(faro_worker_full_answers_total[1m])"]),
        ("Connections", "short", ["faro_worker_connections"]),
        ("Partitions, shuffles, apps held", "short",
         ["faro_worker_partitions", "faro_worker_written_partitions", "faro_worker_shuffles",
          "faro_worker_apps"]),
        ("Committed", "Bps", ["rate(faro_worker_committed_bytes_total[1m])"]),
    ]),
    ("Disks", [
        ("Written", "Bps", ["rate(faro_worker_disk_written_bytes_total[1m])"]),
        ("Read", "Bps", ["rate(faro_worker_disk_read_bytes_total[1m])"]),
        ("Read ahead: loaded, found cached", "Bps",
         ["rate(faro_worker_disk_read_ahead_bytes_total[1m])",
          "rate(faro_worker_disk_read_ahead_resident_bytes_total[1m])"]),
        ("Runs written, reads around a run", "short",
         ["rate(faro_worker_disk_runs_written_total[1m])",
          "rate(faro_worker_disk_read_around_total[1m])"]),
        ("Write time per MiB", "s",
         ["rate(faro_worker_disk_write_seconds_total[5m]) / "
          "(rate(faro_worker_disk_written_bytes_total[5m]) / 1048576)"]),
        ("Read time per MiB", "s",
         ["rate(faro_worker_disk_read_seconds_total[5m]) / "
          "(rate(faro_worker_disk_read_bytes_total[5m]) / 1048576)"]),
        ("Flush p99", "s", ["faro_worker_flush_seconds{quantile=\"0.99\"}"]),
        ("Usable", "bytes", ["faro_worker_disk_usable_bytes"]),
        ("Held by Faro", "bytes", ["faro_worker_disk_used_bytes"]),
        ("Not healthy (full or broken)", "short",
         ["faro_worker_disk_state{state!=\"healthy\"} == 1"]),
        ("Queued flushes and reads", "short",
         ["faro_worker_disk_queued_flushes", "faro_worker_disk_queued_reads"]),
        ("Open partitions", "short", ["faro_worker_disk_open_partitions"]),
    ]),
    ("Masters", [
        ("Leader", "short", ["faro_master_raft_role{role=\"leader\"} == 1"]),
        ("Term", "short", ["faro_master_raft_term"]),
        ("Entries committed, not applied", "short",
         ["faro_master_raft_commit_index - faro_master_raft_applied_index"]),
        ("Leader changes (1h)", "short", ["increase(faro_master_raft_leader_changes_total[1h])"]),
        ("Requests", "reqps", ["sum by (instance, type) (rate(faro_master_requests_total[1m]))"]),
        ("Slots placed", "short", ["rate(faro_master_slots_placed_total[1m])"]),
        ("Request p99", "s", ["faro_master_request_seconds{quantile=\"0.99\"}"]),
    ]),
    ("Processes", [
        ("Heap used", "bytes", ["jvm_memory_used_bytes{area=\"heap\"}"]),
        ("Direct buffers", "bytes",
         ["jvm_buffer_pool_used_bytes{pool=\"direct\"}", "faro_worker_netty_direct_memory_bytes"]),
        ("GC time (share of wall time)", "percentunit",
         ["sum by (instance) (rate(jvm_gc_collection_seconds_sum[1m]))"]),
        ("CPU (cores)", "short", ["rate(process_cpu_seconds_total[1m])"]),
        ("Resident memory", "bytes", ["process_resident_memory_bytes"]),
        ("Threads", "short", ["jvm_threads_current"]),
        ("Open files", "short", ["process_open_fds"]),
    ]),
]


def dashboard():
    panels = []
    next_id = 1
    y = 0
    for title, row in ROWS:
        panels.append({"id": next_id, "type": "row", "title": title, "collapsed": False,
                       "gridPos": {"h": 1, "w": 24, "x": 0, "y": y}, "panels": []})
        next_id += 1
        y += 1
        for i, (name, unit, exprs) in enumerate(row):
            panels.append({
                "id": next_id,
                "type": "timeseries",
                "title": name,
                "datasource": {"type": "prometheus", "uid": "${datasource}"},
                "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
                "options": {"legend": {"displayMode": "list", "placement": "bottom"}},
                "gridPos": {"h": 8, "w": 8, "x": (i % 3) * 8, "y": y + (i // 3) * 8},
                "targets": [{"refId": chr(ord("A") + k), "expr": e,
                             "legendFormat": "__auto"} for k, e in enumerate(exprs)],
            })
            next_id += 1
        y += ((len(row) + 2) // 3) * 8
    return {
        "title": "Faro",
        "uid": "faro-overview",
        "description": "A Faro cluster: traffic, workers, disks, masters and processes. "
                       "Every query names metrics a real scrape has (deploy/grafana/make-dashboard.py).",
        "tags": ["faro", "spark", "shuffle"],
        "timezone": "browser",
        "schemaVersion": 39,
        "version": 1,
        "editable": True,
        "refresh": "30s",
        "time": {"from": "now-1h", "to": "now"},
        "templating": {"list": [{
            "name": "datasource", "label": "Prometheus", "type": "datasource",
            "query": "prometheus", "current": {}, "hide": 0}]},
        "panels": panels,
    }


if __name__ == "__main__":
    import sys
    here = os.path.dirname(os.path.abspath(__file__))
    target = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "faro-dashboard.json")
    with open(target, "w") as out:
        json.dump(dashboard(), out, indent=2)
        out.write("\n")
