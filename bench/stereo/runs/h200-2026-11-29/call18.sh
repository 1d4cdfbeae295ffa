#!/usr/bin/env bash
# Call 18 (one H200): is the rig benchmark's read/write bound the host's page faults? bench_stereo_rig
# as built, then with glibc's malloc keeping freed memory (no fresh pages per frame), same run.
set -uo pipefail
R=$OUT/r; mkdir -p $R
mkdir -p /tmp/hb; [ -d /tmp/hb/bundle ] || tar xzf .bundle-h/b.tgz -C /tmp/hb
B=/tmp/hb/bundle; . $B/env.sh /tmp/nv1 > /dev/null
t0=$(date +%s); L=$R/0-timeline.txt
tl() { echo "$1 at $(( $(date +%s) - t0 )) s" >> $L; }
df -h /tmp > $R/df.txt 2>&1; mount | grep -E " /tmp | / " >> $R/df.txt
F='BM_rig_files/(1920/1080/128/(0|1)|3840/2160/256/0)/'
timeout 100 bench_stereo_rig --benchmark_filter="$F" --benchmark_counters_tabular=true > $R/rig-default.log 2>&1
tl "default exit $?"
GLIBC_TUNABLES=glibc.malloc.mmap_threshold=1073741824:glibc.malloc.trim_threshold=4294967296 \
  timeout 100 bench_stereo_rig --benchmark_filter="$F" --benchmark_counters_tabular=true > $R/rig-keep.log 2>&1
tl "keep exit $?"
cat $L; grep -h BM_rig $R/rig-*.log
