#!/usr/bin/env bash
# Call 17 (one H200): stereo. The GPU tests (GPU = CPU, 4K/512, rectification); the rig benchmark
# (raw PGM -> rectify -> SGM -> depth PFM, 1080p/128 and 4K/256); libSGM against ours at 4K
# (speed4k: default setting, 128/256 x 4/8; per stage; kernel 3's lanes swept at 4K) and at 1080p
# (speed), in the same run.
set -uo pipefail
R=$OUT/r; mkdir -p $R
mkdir -p /tmp/hb; [ -d /tmp/hb/bundle ] || tar xzf .bundle-h/b.tgz -C /tmp/hb
B=/tmp/hb/bundle; . $B/env.sh /tmp/nv1 > /dev/null
{ nvidia-smi; nproc; git log -1 --format=%H; } > $R/nvidia-smi.txt 2>&1
t0=$(date +%s); L=$R/0-timeline.txt
tl() { echo "$1 at $(( $(date +%s) - t0 )) s" >> $L; }
pack() { tar czf $OUT/r.tgz -C $OUT r 2>/dev/null; }
timeout 100 $B/bin/stereo_gpu_tests > $R/stereo_gpu_tests.log 2>&1
tl "stereo_gpu_tests exit $? $(grep -E '^\[  (PASSED|FAILED) ' $R/stereo_gpu_tests.log | tr '\n' ' ') $(grep -E '^\[  FAILED  \] [A-Za-z]' $R/stereo_gpu_tests.log | head -5 | tr '\n' ' ')"
pack
timeout 150 bench_stereo_rig --benchmark_out=$R/bench_rig.json --benchmark_out_format=json --benchmark_counters_tabular=true > $R/bench_rig.log 2>&1
tl "bench_stereo_rig exit $?"; pack
SGM_VS_PARTS="speed4k tuning4k" timeout 260 bash bench/stereo/sgm_vs_libsgm.sh $B $R/sgm4k .peers/libsgm/libsgm_bench > $R/sgm4k.log 2>&1
tl "sgm_vs_libsgm speed4k tuning4k exit $?"; pack
left=$(( 560 - ($(date +%s) - t0) ))
[ $left -gt 60 ] && SGM_VS_PARTS="speed" timeout $left bash bench/stereo/sgm_vs_libsgm.sh $B $R/sgm1080 .peers/libsgm/libsgm_bench > $R/sgm1080.log 2>&1
tl "sgm_vs_libsgm speed exit $?"; pack; cat $L
