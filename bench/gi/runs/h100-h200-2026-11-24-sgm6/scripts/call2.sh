# call 2 (H100): pageable host-to-host sweep: copy threads x upload chunk x bands
cd /tmp
mkdir -p /tmp/res/copy
$REPO/.peers/libsgm/libsgm_bench --synthetic 1920x1080 --disp 128 --paths 8 --reps 3 --no-host --save-pair /tmp/syn > /dev/null 2>&1
export EVK_BENCH_LEFT=/tmp/syn_L.pgm EVK_BENCH_RIGHT=/tmp/syn_R.pgm
for r in 1 2; do for th in 1 4 8 12; do for ch in 0 512; do for nb in 0 4; do
  EVK_SGM_COPY_THREADS=$th EVK_SGM_COPY_CHUNK=$ch EVK_SGM_BANDS=$nb timeout 60 bench_stereo_sgm \
    --benchmark_filter='BM_sgm_gpu_host/(64/4|128/8|256/8)/1/' \
    --benchmark_out=/tmp/res/copy/t$th-c$ch-b$nb-r$r.json --benchmark_out_format=json > /dev/null 2>&1
  echo "t $th c $ch b $nb round $r: exit $?"
done; done; done; done
