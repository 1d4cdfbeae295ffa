# the slim stereo bundle carried as .pack/bundle.tgz (as in the eleventh session's run folder):
# make bundle JOBS=2, then only the stereo binaries, lib, kernels, env.sh, run.sh, tests and stereo data;
# later calls rebuilt the four stereo binaries in build-bundle and copied them into the slim copy.
set -e
cd /work/main
make bundle JOBS=2 > /tmp/bundle.log 2>&1 || grep -q "over the" /tmp/bundle.log || { tail -20 /tmp/bundle.log; exit 1; }
git log -1 --format=%h > bundle/COMMIT
rm -rf /tmp/slimb && mkdir -p /tmp/slimb/bundle/bin /tmp/slimb/bundle/data/shared /tmp/slimb/bundle/data/project
cp -r bundle/env.sh bundle/COMMIT bundle/lib bundle/kernels bundle/run.sh bundle/tests /tmp/slimb/bundle/
cp bundle/bin/{stereo,stereo_gpu_tests,bench_stereo_sgm,bench_stereo} /tmp/slimb/bundle/bin/
cp -r bundle/data/shared/stereo /tmp/slimb/bundle/data/shared/ && cp -r bundle/data/project/stereo /tmp/slimb/bundle/data/project/
tar czf .pack/bundle.tgz -C /tmp/slimb bundle
# "A" for sgm_ab.sh: 19a2261's slim bundle cut to bench_stereo_sgm + lib + kernels + env.sh + COMMIT
