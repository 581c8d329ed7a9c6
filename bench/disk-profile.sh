# bench/disk-profile.sh: an emulated disk for the benchmarks, sourced by spark-compare.sh.
#
# A profile is a file system on a loop device of its own, backed by a sparse file on the machine's
# disk with the loop device's direct I/O on (so the host's page cache holds none of it: only the
# page cache of processes using the emulated disk does), with
#   - a read-ahead of its own (blockdev --setra),
#   - request and byte rates for reads and for writes, enforced by the block-layer throttle:
#     cgroup v1 blkio.throttle.* set on the root blkio cgroup for that device, or, on a machine
#     with only cgroup v2 and its io controller, io.max of a cgroup holding every process of the
#     run. Rules on the v1 root group apply to every request the device gets, the kernel's own
#     writeback included: the page cache's dirty pages are throttled when they are written back,
#     whoever wrote them, so a buffered write is not free (it is paid later, or by whoever needs
#     its memory), and a direct write is paid at once.
#   - a bound on memory: every process of the run (the Faro cluster and the Spark JVMs) lives in
#     one memory cgroup whose limit is what those processes may use plus the page-cache bound, so
#     the page cache can hold at most about that bound of either side's shuffle files.
# Profiles (per direction, read and write alike):
#   local  no throttle, read-ahead 128 KiB (the kernel's default): the machine's own disk, cache
#          bounded
#   gp3    3,000 requests/s and 125 MB/s, read-ahead 128 KiB (an EBS gp3 volume's baseline)
#   hdd    150 requests/s and 150 MiB/s, read-ahead 128 KiB (a 7,200 rpm disk)
#
# Functions (all need root; each logs what it does on stderr):
#   profile_setup NAME DIR      the loop device, file system (mounted at DIR/mnt) and throttle
#   profile_memory_bound BYTES  moves this shell into a fresh memory cgroup limited to BYTES;
#                               everything started afterwards is inside it
#   profile_memory_limit BYTES  sets that cgroup's limit again
#   profile_drop_caches         sync, then drop the page cache (done before each run)
#   profile_counters            "read_requests write_requests read_bytes write_bytes" so far
#   profile_anon_sampler_start  samples the run's anonymous memory (not page cache) until
#   profile_anon_sampler_stop   prints the highest sample, in bytes: the limit less that is the
#                               page cache the run had room for at its tightest
#   profile_teardown            undoes all of the above that was done; safe to call twice
# After profile_setup: PROFILE_MOUNT (the file system's root), PROFILE_DEVICE (/dev/loopN),
# PROFILE_DESCRIPTION (one line for reports).

PROFILE_NAME=""
PROFILE_DEVICE=""
PROFILE_MAJMIN=""
PROFILE_MOUNT=""
PROFILE_IMAGE=""
PROFILE_CGROUP_V2=""
PROFILE_MEMORY_CGROUP=""
PROFILE_MEMORY_HOME=""
PROFILE_DESCRIPTION=""
PROFILE_THROTTLED=false

profile_log() { echo "disk-profile: $*" >&2; }

# read IOPS, read bytes/s, write IOPS, write bytes/s (0: none), read-ahead KiB (empty: the host's)
profile_params() {
  case "$1" in
    local) echo "0 0 0 0 128" ;;
    gp3) echo "3000 125000000 3000 125000000 128" ;;
    hdd) echo "150 157286400 150 157286400 128" ;;
    *) return 1 ;;
  esac
}

profile_setup() {
  local name=$1 dir=$2 size=${PROFILE_DISK_SIZE:-48G}
  local params
  params=$(profile_params "$name") || { profile_log "unknown profile '$name'; profiles are local, gp3, hdd"; return 2; }
  [ "$(id -u)" = 0 ] || { profile_log "--disk-profile needs root (loop devices, cgroups, drop_caches)"; return 2; }
  local tool
  for tool in losetup mkfs.ext4 blockdev mount umount; do
    command -v "$tool" >/dev/null || { profile_log "--disk-profile needs $tool"; return 2; }
  done
  read -r riops rbps wiops wbps ra <<<"$params"
  PROFILE_NAME=$name
  mkdir -p "$dir"
  PROFILE_IMAGE="$dir/disk.img"
  PROFILE_MOUNT="$dir/mnt"
  rm -f "$PROFILE_IMAGE"
  truncate -s "$size" "$PROFILE_IMAGE"
  PROFILE_DEVICE=$(losetup --direct-io=on --show -f "$PROFILE_IMAGE") || { profile_log "losetup failed"; return 1; }
  PROFILE_MAJMIN=$(lsblk -dno MAJ:MIN "$PROFILE_DEVICE" | tr -d ' ')
  blockdev --setra $(( ra * 2 )) "$PROFILE_DEVICE"
  mkfs.ext4 -q -F -E lazy_itable_init=1,lazy_journal_init=1 "$PROFILE_DEVICE" || { profile_log "mkfs.ext4 failed"; return 1; }
  mkdir -p "$PROFILE_MOUNT"
  mount "$PROFILE_DEVICE" "$PROFILE_MOUNT" || { profile_log "mount failed"; return 1; }
  if [ -w /sys/fs/cgroup/blkio/blkio.throttle.read_iops_device ]; then
    local f v
    for f in read_iops_device:$riops read_bps_device:$rbps write_iops_device:$wiops write_bps_device:$wbps; do
      v=${f#*:}
      [ "$v" = 0 ] || echo "$PROFILE_MAJMIN $v" >"/sys/fs/cgroup/blkio/blkio.throttle.${f%%:*}"
    done
    PROFILE_THROTTLED=true
  elif grep -qw io /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
    # cgroup v2: io.max belongs to a cgroup, not to the device: the processes of the run join it
    # (profile_memory_bound uses the same cgroup), and writeback is charged to it as well.
    PROFILE_CGROUP_V2=/sys/fs/cgroup/faro-bench-$$
    mkdir -p "$PROFILE_CGROUP_V2"
    grep -qw io /sys/fs/cgroup/cgroup.subtree_control || echo +io >/sys/fs/cgroup/cgroup.subtree_control
    grep -qw memory /sys/fs/cgroup/cgroup.subtree_control || echo +memory >/sys/fs/cgroup/cgroup.subtree_control
    local max="$PROFILE_MAJMIN"
    [ "$riops" = 0 ] || max+=" riops=$riops"
    [ "$rbps" = 0 ] || max+=" rbps=$rbps"
    [ "$wiops" = 0 ] || max+=" wiops=$wiops"
    [ "$wbps" = 0 ] || max+=" wbps=$wbps"
    [ "$max" = "$PROFILE_MAJMIN" ] || echo "$max" >"$PROFILE_CGROUP_V2/io.max"
    PROFILE_THROTTLED=true
  elif [ "$riops$rbps$wiops$wbps" != 0000 ]; then
    profile_log "no cgroup v1 blkio throttle and no cgroup v2 io controller: cannot emulate $name"
    return 1
  fi
  local rates="unthrottled"
  [ "$riops" = 0 ] || rates="$riops IOPS and $((rbps / 1000000)) MB/s each way"
  PROFILE_DESCRIPTION="$name: ext4 on $PROFILE_DEVICE (loop, direct I/O, backed by $PROFILE_IMAGE), $rates, read-ahead ${ra} KiB"
  profile_log "$PROFILE_DESCRIPTION"
}

profile_memory_bound() {
  local bytes=$1
  if [ -n "$PROFILE_CGROUP_V2" ]; then
    PROFILE_MEMORY_CGROUP=$PROFILE_CGROUP_V2
    PROFILE_MEMORY_HOME=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)
  else
    [ -d /sys/fs/cgroup/memory ] || { profile_log "no memory cgroup controller: cannot bound the page cache"; return 1; }
    PROFILE_MEMORY_CGROUP=/sys/fs/cgroup/memory/faro-bench-$$
    PROFILE_MEMORY_HOME=/sys/fs/cgroup/memory$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup)
    mkdir -p "$PROFILE_MEMORY_CGROUP"
  fi
  profile_memory_limit "$bytes"
  echo $$ >"$PROFILE_MEMORY_CGROUP/cgroup.procs"
  profile_log "every process from here on runs in $PROFILE_MEMORY_CGROUP, limited to $((bytes / 1048576)) MiB"
}

profile_memory_limit() {
  if [ -n "$PROFILE_CGROUP_V2" ]; then
    echo "$1" >"$PROFILE_MEMORY_CGROUP/memory.max"
  else
    echo "$1" >"$PROFILE_MEMORY_CGROUP/memory.limit_in_bytes"
  fi
}

profile_drop_caches() {
  sync
  echo 3 >/proc/sys/vm/drop_caches
}

# Requests and bytes the emulated disk has served since it was set up.
profile_counters() {
  if [ -n "$PROFILE_CGROUP_V2" ]; then
    # io.stat: "MAJ:MIN rbytes=.. wbytes=.. rios=.. wios=.. ..."
    awk -v d="$PROFILE_MAJMIN" '$1 == d {
        for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
        printf "%.0f %.0f %.0f %.0f\n", v["rios"], v["wios"], v["rbytes"], v["wbytes"]; found = 1 }
      END { if (!found) print "0 0 0 0" }' "$PROFILE_CGROUP_V2/io.stat"
  else
    awk -v d="$PROFILE_MAJMIN" '
      FILENAME ~ /serviced$/ && $1 == d && $2 == "Read" { rr = $3 }
      FILENAME ~ /serviced$/ && $1 == d && $2 == "Write" { wr = $3 }
      FILENAME ~ /bytes$/ && $1 == d && $2 == "Read" { rb = $3 }
      FILENAME ~ /bytes$/ && $1 == d && $2 == "Write" { wb = $3 }
      END { printf "%.0f %.0f %.0f %.0f\n", rr, wr, rb, wb }' \
      /sys/fs/cgroup/blkio/blkio.throttle.io_serviced /sys/fs/cgroup/blkio/blkio.throttle.io_service_bytes
  fi
}

# The memory cgroup's peak use so far (bytes), and resets it.
profile_memory_peak() {
  [ -n "$PROFILE_MEMORY_CGROUP" ] || { echo 0; return; }
  if [ -n "$PROFILE_CGROUP_V2" ]; then
    cat "$PROFILE_MEMORY_CGROUP/memory.peak" 2>/dev/null || echo 0
  else
    cat "$PROFILE_MEMORY_CGROUP/memory.max_usage_in_bytes"
    echo 0 >"$PROFILE_MEMORY_CGROUP/memory.max_usage_in_bytes" 2>/dev/null || true
  fi
}

# The anonymous memory (heaps, direct buffers: not page cache) of the run's processes, sampled
# every half second from start to stop; stop prints the highest sample in bytes.
PROFILE_SAMPLER_PID=""
PROFILE_SAMPLER_FILE=""
profile_anon_sampler_start() {
  [ -n "$PROFILE_MEMORY_CGROUP" ] || return 0
  PROFILE_SAMPLER_FILE=$(mktemp)
  local stat=$PROFILE_MEMORY_CGROUP/memory.stat field=total_rss
  [ -z "$PROFILE_CGROUP_V2" ] || field=anon
  (
    max=0
    while :; do
      now=$(awk -v f="$field" '$1 == f { printf "%.0f", $2 }' "$stat" 2>/dev/null)
      if [ -n "$now" ] && [ "$now" -gt "$max" ]; then max=$now; echo "$max" >"$PROFILE_SAMPLER_FILE"; fi
      sleep 0.5
    done
  ) &
  PROFILE_SAMPLER_PID=$!
}
profile_anon_sampler_stop() {
  [ -n "$PROFILE_SAMPLER_PID" ] || { echo 0; return; }
  kill "$PROFILE_SAMPLER_PID" 2>/dev/null || true
  wait "$PROFILE_SAMPLER_PID" 2>/dev/null || true
  PROFILE_SAMPLER_PID=""
  cat "$PROFILE_SAMPLER_FILE" 2>/dev/null || echo 0
  rm -f "$PROFILE_SAMPLER_FILE"
}

profile_teardown() {
  [ -z "$PROFILE_SAMPLER_PID" ] || profile_anon_sampler_stop >/dev/null
  if [ -n "$PROFILE_MEMORY_CGROUP" ]; then
    echo $$ >"$PROFILE_MEMORY_HOME/cgroup.procs" 2>/dev/null || true
    # Processes still inside keep it alive: those just killed may take a few seconds to go.
    local tries
    for tries in $(seq 50); do
      rmdir "$PROFILE_MEMORY_CGROUP" 2>/dev/null && break
      sleep 0.2
    done
    [ ! -d "$PROFILE_MEMORY_CGROUP" ] || profile_log "could not remove $PROFILE_MEMORY_CGROUP (processes left in it: $(tr '\n' ' ' <"$PROFILE_MEMORY_CGROUP/cgroup.procs"))"
    PROFILE_MEMORY_CGROUP=""
  fi
  if $PROFILE_THROTTLED && [ -z "$PROFILE_CGROUP_V2" ]; then
    local f
    for f in read_iops_device read_bps_device write_iops_device write_bps_device; do
      echo "$PROFILE_MAJMIN 0" >"/sys/fs/cgroup/blkio/blkio.throttle.$f" 2>/dev/null || true
    done
  fi
  PROFILE_THROTTLED=false
  if [ -n "$PROFILE_CGROUP_V2" ]; then
    rmdir "$PROFILE_CGROUP_V2" 2>/dev/null || true
    PROFILE_CGROUP_V2=""
  fi
  if [ -n "$PROFILE_MOUNT" ] && mountpoint -q "$PROFILE_MOUNT"; then
    umount "$PROFILE_MOUNT" || umount -l "$PROFILE_MOUNT" || true
  fi
  if [ -n "$PROFILE_DEVICE" ]; then
    losetup -d "$PROFILE_DEVICE" 2>/dev/null || true
    PROFILE_DEVICE=""
  fi
  [ -z "$PROFILE_IMAGE" ] || rm -f "$PROFILE_IMAGE"
  PROFILE_IMAGE=""
}
