# builds the bundle, slims it into .pack/bundle.tgz (stereo only), and the kernel-3 cubin for SASS
set -e
cd /work/main
make bundle JOBS=2 > /tmp/bundle.log 2>&1 || grep -q "over the" /tmp/bundle.log || { tail -20 /tmp/bundle.log; exit 1; }
echo "$(git log -1 --format=%h)+${1:-wip}" > bundle/COMMIT
rm -rf /tmp/slimb && mkdir -p /tmp/slimb/bundle/bin /tmp/slimb/bundle/data/shared /tmp/slimb/bundle/data/project
cp -r bundle/env.sh bundle/COMMIT bundle/lib bundle/kernels bundle/run.sh bundle/tests /tmp/slimb/bundle/
cp bundle/bin/{stereo,stereo_gpu_tests,bench_stereo_sgm,bench_stereo} /tmp/slimb/bundle/bin/
cp -r bundle/data/shared/stereo /tmp/slimb/bundle/data/shared/ && cp -r bundle/data/project/stereo /tmp/slimb/bundle/data/project/
tar czf .pack/bundle.tgz -C /tmp/slimb bundle
nvcc -arch=sm_90 -cubin -O3 -o .pack/agg3_new.cubin apps/stereo/core/src/sgm/aggregate_vec.cu
du -sh .pack
