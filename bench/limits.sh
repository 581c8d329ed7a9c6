#!/usr/bin/env bash
# bench/limits.sh: the ceilings of this machine where a Faro worker writes, as one JSON object,
# so that Faro's benchmark figures can be read against what the disk and loopback can do at all.
#
# Usage: bench/limits.sh [--quick] [--no-install] [DIR]
#   DIR           a directory on the filesystem Faro's data would use (default /tmp/faro-limits).
#                 Created if missing; everything this script writes there is removed at the end.
#   --quick       smaller files and shorter runs: under 30 s instead of under 2 minutes.
#   --no-install  never apt-get install fio, iperf3 or jq when they are missing.
#   --dd          measure the disk with dd even where fio is available.
#   -h, --help    this text.
#
# What it measures (one JSON object on stdout, progress on stderr; MB = 10^6 bytes):
#   - sequential write and read bandwidth of one file in 1 MiB blocks, with fio (dd if fio is
#     missing and cannot be installed):
#       direct    O_DIRECT, bypassing the page cache: what the device sustains (fio: libaio,
#                 16 requests in flight; dd: one at a time);
#       buffered  through the page cache: writes end with an fsync that is part of the time (the
#                 worker syncs each partition file at commit); reads start after the page cache
#                 was dropped (echo 3 > /proc/sys/vm/drop_caches) when permitted, and fio and dd
#                 also drop the test file's own cached pages; "page_cache_dropped" tells which.
#   - loopback TCP throughput with iperf3, client and server on 127.0.0.1, 1 and 2 streams;
#   - the machine: cores, CPU model, memory, kernel, and the filesystem and device under DIR
#     ("device_rotational" is what the kernel says: virtual disks often claim to rotate).
# Needs jq (installed if missing). Installing the tools needs root and apt-get.
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }

DIR=/tmp/faro-limits
QUICK=false
INSTALL=true
FORCE_DD=false
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=true ;;
    --no-install) INSTALL=false ;;
    --dd) FORCE_DD=true ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "limits.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) DIR="$1" ;;
  esac
  shift
done

# Each disk test stops at FILE_MIB or after RUN_S seconds, whichever comes first; the buffered
# write is sized from the direct write so that its final fsync is bounded too.
if $QUICK; then
  FILE_MIB=512; RUN_S=3; NET_S=3
else
  FILE_MIB=4096; RUN_S=15; NET_S=8
fi
export LC_ALL=C
START_EPOCH=$(date +%s)
START_DATE=$(date -u +%Y-%m-%dT%H:%M:%SZ)

log() { echo "limits: $*" >&2; }

# --- tools --------------------------------------------------------------------------------
APT_UPDATED=false
install_package() {
  local package=$1
  $INSTALL || return 1
  command -v apt-get >/dev/null && [ "$(id -u)" = 0 ] || return 1
  log "installing $package with apt-get"
  # The package lists may be missing or stale on a fresh machine: update once, then retry.
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package" >/dev/null 2>&1; then
    if ! $APT_UPDATED; then
      apt-get update -qq >/dev/null 2>&1 || true
      APT_UPDATED=true
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package" >/dev/null 2>&1 || return 1
  fi
}
have() { command -v "$1" >/dev/null 2>&1 || { install_package "$2" && command -v "$1" >/dev/null 2>&1; }; }

if ! have jq jq; then
  echo "limits.sh: jq is required (apt-get install jq)" >&2
  exit 1
fi
DISK_TOOL="dd"
if $FORCE_DD; then :; elif have fio fio; then DISK_TOOL=fio; else log "fio is not available: measuring with dd"; fi
NET_TOOL=none
if have iperf3 iperf3; then NET_TOOL=iperf3; else log "iperf3 is not available: no loopback figures"; fi

# --- work files and cleanup ---------------------------------------------------------------
CREATED_DIR=false
[ -d "$DIR" ] || { mkdir -p "$DIR"; CREATED_DIR=true; }
DIR=$(cd "$DIR" && pwd)
WORK=$(mktemp -d "$DIR/limits.XXXXXX")
IPERF_PID=""
cleanup() {
  if [ -n "$IPERF_PID" ]; then kill "$IPERF_PID" 2>/dev/null || true; wait "$IPERF_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
  if $CREATED_DIR; then rmdir "$DIR" 2>/dev/null || true; fi
}
trap cleanup EXIT

# --- machine facts ------------------------------------------------------------------------
CORES=$(nproc)
CPU_MODEL=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
MEMORY_MIB=$(( $(sed -n 's/^MemTotal: *\([0-9]*\) kB/\1/p' /proc/meminfo) / 1024 ))
KERNEL=$(uname -r)
FS_TYPE=$(df --output=fstype "$DIR" | tail -n 1 | tr -d ' ')
FS_SOURCE=$(df --output=source "$DIR" | tail -n 1 | tr -d ' ')
FS_AVAIL_GB=$(( $(df -B1 --output=avail "$DIR" | tail -n 1 | tr -d ' ') / 1000000000 ))
# The whole disk behind a partition or a device-mapper volume, for its rotational flag and model.
BLOCK_DEV=""
if [ -b "$FS_SOURCE" ]; then
  # lsblk -s lists the device, then what it sits on, down to the disk.
  BLOCK_DEV=$(lsblk -nrso NAME,TYPE "$FS_SOURCE" 2>/dev/null | awk '$2 == "disk" { print $1; exit }' || true)
  [ -n "$BLOCK_DEV" ] || BLOCK_DEV=$(basename "$FS_SOURCE")
fi
ROTATIONAL=null
DEVICE_MODEL=""
if [ -n "$BLOCK_DEV" ] && [ -r "/sys/block/$BLOCK_DEV/queue/rotational" ]; then
  if [ "$(cat "/sys/block/$BLOCK_DEV/queue/rotational")" = 1 ]; then ROTATIONAL=true; else ROTATIONAL=false; fi
  if [ -r "/sys/block/$BLOCK_DEV/device/model" ]; then
    DEVICE_MODEL=$(tr -s ' ' <"/sys/block/$BLOCK_DEV/device/model" | sed 's/ *$//')
  fi
fi
NEED_MIB=$(( FILE_MIB * 2 + 256 ))
if [ $(( FS_AVAIL_GB * 1000 )) -lt "$NEED_MIB" ]; then
  echo "limits.sh: $DIR has $FS_AVAIL_GB GB free; the disk tests need about $NEED_MIB MiB" >&2
  exit 1
fi

# Drops the page cache if this process may; returns whether it could.
drop_caches() {
  sync
  (echo 3 > /proc/sys/vm/drop_caches) 2>/dev/null
}

# --- disk --------------------------------------------------------------------------------
# One primitive per tool and test: disk_TOOL_TEST FILE MIB prints MB/s, or null if it failed.
# Each stops after MIB MiB or about RUN_S seconds.

# One fio run over FILE: the test (write or read), the MiB cap, then fio's own options.
fio_mb_per_s() {
  local rw=$1 file=$2 mib=$3; shift 3
  local out
  out=$(fio --name="$rw" --filename="$file" --rw="$rw" --bs=1M --size="${mib}M" --runtime="$RUN_S" \
    --fallocate=none --output-format=json "$@" 2>"$WORK/fio.err") || {
    log "fio $rw failed: $(tail -n 3 "$WORK/fio.err")"; echo null; return 0; }
  # fio's elapsed time includes the end_fsync; bw_bytes is the bytes over that time.
  jq -r --arg rw "$rw" '.jobs[0][$rw].bw_bytes / 1000000 | . * 10 | round / 10' <<<"$out"
}
disk_fio_write_direct() { fio_mb_per_s write "$1" "$2" --direct=1 --ioengine=libaio --iodepth=16; }
disk_fio_write_buffered() { fio_mb_per_s write "$1" "$2" --direct=0 --ioengine=psync --end_fsync=1; }
disk_fio_read_direct() { fio_mb_per_s read "$1" "$2" --direct=1 --ioengine=libaio --iodepth=16; }
# --invalidate=1 (fio's default, explicit here) drops the file's cached pages before reading.
disk_fio_read_buffered() { fio_mb_per_s read "$1" "$2" --direct=0 --ioengine=psync --invalidate=1; }

# One dd run with a time limit, MB/s from the statistics it prints on exit: SIGINT makes GNU dd
# print them before it exits, so a run cut short still reports what it did.
dd_mb_per_s() {
  local err="$WORK/dd.err"
  timeout -s INT "$((RUN_S * 2))" dd bs=1M "$@" 2>"$err" || true
  sed -n 's/^\([0-9]*\) bytes.* copied, \([0-9.e+-]*\) s,.*/\1 \2/p' "$err" | tail -n 1 |
    awk '{ if ($2 > 0) printf "%.1f\n", $1 / $2 / 1000000; else print "null" }' | grep . || echo null
}
disk_dd_write_direct() { dd_mb_per_s if=/dev/zero of="$1" count="$2" oflag=direct; }
disk_dd_write_buffered() { dd_mb_per_s if=/dev/zero of="$1" count="$2" conv=fsync; }
disk_dd_read_direct() { dd_mb_per_s if="$1" of=/dev/null count="$2" iflag=direct; }
disk_dd_read_buffered() {
  # Drops this file's cached pages first, which needs no privilege.
  dd if="$1" iflag=nocache count=0 status=none 2>/dev/null || true
  dd_mb_per_s if="$1" of=/dev/null count="$2"
}

# Prints MiB written so far into FILE (what a time-capped write left there), 0 if none.
file_mib() { if [ -f "$1" ]; then echo $(( $(stat -c %s "$1") / 1048576 )); else echo 0; fi; }

# Caps the buffered write at what the direct write managed in RUN_S seconds, so that its fsync
# at the end cannot run for minutes on a slow disk.
buffered_write_mib() {
  local direct_mb_per_s=$1
  if [ "$direct_mb_per_s" = null ]; then echo $(( FILE_MIB / 4 )); return 0; fi
  local cap
  cap=$(jq -n "$direct_mb_per_s * $RUN_S / 1.048576 | floor")
  if [ "$cap" -lt "$FILE_MIB" ]; then echo $(( cap > 64 ? cap : 64 )); else echo "$FILE_MIB"; fi
}

# Direct write, buffered write, then both reads of the buffered write's file.
measure_disk() {
  local tool=$1 direct_file="$WORK/direct.data" file="$WORK/buffered.data"
  log "$tool: direct sequential write (up to $FILE_MIB MiB or ${RUN_S}s)"
  WRITE_DIRECT=$("disk_${tool}_write_direct" "$direct_file" "$FILE_MIB")
  rm -f "$direct_file"
  local mib
  mib=$(buffered_write_mib "$WRITE_DIRECT")
  log "$tool: buffered sequential write of $mib MiB, ending with fsync"
  WRITE_BUFFERED=$("disk_${tool}_write_buffered" "$file" "$mib")
  READ_MIB=$(file_mib "$file")
  READ_DIRECT=null; READ_BUFFERED=null; CACHE_DROPPED=false
  if [ "$READ_MIB" -eq 0 ]; then
    log "$tool: nothing was written, so nothing to read"
    return 0
  fi
  log "$tool: direct sequential read of $READ_MIB MiB"
  READ_DIRECT=$("disk_${tool}_read_direct" "$file" "$READ_MIB")
  if drop_caches; then CACHE_DROPPED=true; fi
  log "$tool: buffered sequential read of $READ_MIB MiB (page cache dropped: $CACHE_DROPPED)"
  READ_BUFFERED=$("disk_${tool}_read_buffered" "$file" "$READ_MIB")
  rm -f "$file"
}

measure_disk "$DISK_TOOL"
if [ "$DISK_TOOL" = fio ]; then
  DISK_TOOL_VERSION=$(fio --version)
  DISK_METHOD="fio, 1 MiB sequential; direct: libaio iodepth 16; buffered: psync, write ends with fsync"
else
  DISK_TOOL_VERSION=$(dd --version | head -n 1)
  DISK_METHOD="dd, 1 MiB sequential, one request at a time; buffered write ends with fsync"
fi

# --- loopback TCP with iperf3 -------------------------------------------------------------
TCP_1=null
TCP_2=null
NET_TOOL_VERSION=""
# Starts an iperf3 server on a free loopback port; sets IPERF_PID and IPERF_PORT.
start_iperf_server() {
  local port
  for _ in 1 2 3 4 5; do
    port=$(( 20000 + RANDOM % 40000 ))
    # --forceflush: its "Server listening" line must reach the log now, not when a buffer fills.
    iperf3 -s -B 127.0.0.1 -p "$port" --forceflush >"$WORK/iperf-server.log" 2>&1 &
    IPERF_PID=$!
    # Waits for the server to listen, or to exit because the port was taken: 5 s at most.
    for _ in $(seq 50); do
      if grep -q "listening" "$WORK/iperf-server.log" 2>/dev/null; then IPERF_PORT=$port; return 0; fi
      kill -0 "$IPERF_PID" 2>/dev/null || break
      sleep 0.1
    done
    kill "$IPERF_PID" 2>/dev/null || true
    wait "$IPERF_PID" 2>/dev/null || true
    IPERF_PID=""
  done
  return 1
}

# Prints the received throughput in MB/s of a client run with $1 parallel streams.
iperf_mb_per_s() {
  local out
  out=$(iperf3 -c 127.0.0.1 -p "$IPERF_PORT" -t "$NET_S" -P "$1" -J 2>"$WORK/iperf.err") || {
    log "iperf3 with $1 stream(s) failed: $(jq -r '.error // empty' <<<"$out" 2>/dev/null) $(tail -n 2 "$WORK/iperf.err")"
    echo null; return 0; }
  jq -r '.end.sum_received.bits_per_second / 8 / 1000000 | . * 10 | round / 10' <<<"$out"
}

if [ "$NET_TOOL" = iperf3 ]; then
  NET_TOOL_VERSION=$(iperf3 --version | head -n 1)
  if start_iperf_server; then
    log "iperf3: loopback TCP, 1 stream for ${NET_S}s"
    TCP_1=$(iperf_mb_per_s 1)
    log "iperf3: loopback TCP, 2 streams for ${NET_S}s"
    TCP_2=$(iperf_mb_per_s 2)
    kill "$IPERF_PID" 2>/dev/null || true
    wait "$IPERF_PID" 2>/dev/null || true
    IPERF_PID=""
  else
    log "iperf3: could not start a server on a loopback port"
  fi
fi

# --- the JSON object ----------------------------------------------------------------------
jq -n \
  --arg date "$START_DATE" \
  --arg dir "$DIR" \
  --argjson quick "$QUICK" \
  --argjson cores "$CORES" \
  --arg cpu_model "$CPU_MODEL" \
  --argjson memory_mib "$MEMORY_MIB" \
  --arg kernel "$KERNEL" \
  --arg filesystem "$FS_TYPE" \
  --arg device "$FS_SOURCE" \
  --arg block_device "$BLOCK_DEV" \
  --argjson rotational "$ROTATIONAL" \
  --arg device_model "$DEVICE_MODEL" \
  --argjson fs_avail_gb "$FS_AVAIL_GB" \
  --arg disk_tool "$DISK_TOOL_VERSION" \
  --arg disk_method "$DISK_METHOD" \
  --argjson read_mib "$READ_MIB" \
  --argjson write_direct "$WRITE_DIRECT" \
  --argjson write_buffered "$WRITE_BUFFERED" \
  --argjson read_direct "$READ_DIRECT" \
  --argjson read_buffered "$READ_BUFFERED" \
  --argjson cache_dropped "$CACHE_DROPPED" \
  --arg net_tool "$NET_TOOL_VERSION" \
  --argjson tcp_1 "$TCP_1" \
  --argjson tcp_2 "$TCP_2" \
  --argjson duration_s "$(( $(date +%s) - START_EPOCH ))" \
  '{
    date_utc: $date, dir: $dir, quick: $quick, mb: "10^6 bytes",
    cores: $cores, cpu_model: $cpu_model, memory_mib: $memory_mib, kernel: $kernel,
    filesystem: $filesystem, device: $device,
    block_device: (if $block_device == "" then null else $block_device end),
    device_rotational: $rotational,
    device_model: (if $device_model == "" then null else $device_model end),
    filesystem_available_gb: $fs_avail_gb,
    disk_tool: $disk_tool, disk_method: $disk_method, disk_read_file_mib: $read_mib,
    disk_write_direct_mb_per_s: $write_direct,
    disk_write_buffered_fsync_mb_per_s: $write_buffered,
    disk_read_direct_mb_per_s: $read_direct,
    disk_read_buffered_mb_per_s: $read_buffered,
    page_cache_dropped: $cache_dropped,
    net_tool: (if $net_tool == "" then null else $net_tool end),
    loopback_tcp_1_stream_mb_per_s: $tcp_1,
    loopback_tcp_2_streams_mb_per_s: $tcp_2,
    duration_s: $duration_s
  }'
