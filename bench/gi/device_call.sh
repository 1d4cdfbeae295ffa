#!/usr/bin/env bash
# One device call, driven by environment variables (the `device` tool's run: repository root, $OUT):
#   .pack/bundle.tgz  the bundle (`make bundle && tar czf .pack/bundle.tgz bundle`), carried as .pack
#   END      seconds this call may use in all (default 560); every step is capped to what is left
#   TESTS    space-separated BIN|GTEST_FILTER|CAP_S, each run from the bundle (logs: tests-BIN-N.log)
#   EXTRA    a command line run in /tmp with REPO, B (the bundle) and T0 exported (log: extra.log)
#   TOOL     a tool whose gi_search.sh state goes on: .pack/gs-TOOL.tar.gz (if present) is extracted
#            into /tmp/gs first; the new state comes back as $OUT/gs-TOOL.tar.gz
#   POST     a command line run last, like EXTRA (log: post.log)
# Everything comes back as $OUT/res.tgz (res/summary.txt first).
set -u
export REPO=$PWD T0=$(date +%s)
END=${END:-560}
left() { echo $(( END - ($(date +%s) - T0) )); }
R=/tmp/res; mkdir -p "$R" /tmp/gs
tar xzf .pack/bundle.tgz -C /tmp
export B=/tmp/bundle
. "$B/env.sh" /tmp/nvrtc-cache > /dev/null
S=$R/summary.txt
{ echo "== $(date -u +%FT%TZ) $(git log -1 --format=%h 2>/dev/null) bundle $(cat $B/COMMIT 2>/dev/null)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
  echo "cores $(nproc)"; } >> "$S"
n=0
for t in ${TESTS:-}; do
  IFS='|' read -r bin filter cap <<< "$t"; n=$((n + 1))
  l=$(left); (( cap > l - 20 )) && cap=$(( l - 20 ))
  (( cap < 5 )) && { echo "tests $bin $filter: not started (deadline)" >> "$S"; continue; }
  t1=$(date +%s)
  ( cd /tmp && timeout "$cap" "$B/bin/$bin" --gtest_filter="$filter" > "$R/tests-$bin-$n.log" 2>&1 )
  echo "tests $bin $filter: rc $? in $(( $(date +%s) - t1 )) s; $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$R/tests-$bin-$n.log" | tr '\n' ' ')" >> "$S"
done
if [ -n "${EXTRA:-}" ]; then
  t1=$(date +%s)
  ( cd /tmp && timeout $(( $(left) - 15 )) bash -c "$EXTRA" > "$R/extra.log" 2>&1 )
  echo "extra: rc $? in $(( $(date +%s) - t1 )) s" >> "$S"
fi
if [ -n "${TOOL:-}" ]; then
  [ -f ".pack/gs-$TOOL.tar.gz" ] && tar xzf ".pack/gs-$TOOL.tar.gz" -C /tmp/gs
  l=$(( $(left) - ${POST_S:-20} ))
  bash bench/gi/gi_search.sh "$B" /tmp/gs "$TOOL" 300 50 "$l" 10 >> "$S" 2>&1
  cp "/tmp/gs/gi-search-$TOOL.tar.gz" "$OUT/gs-$TOOL.tar.gz"
  cp "/tmp/gs/$TOOL/summary.txt" "$R/gs-$TOOL-summary.txt"
fi
if [ -n "${POST:-}" ]; then
  t1=$(date +%s)
  ( cd /tmp && timeout $(( $(left) - 5 )) bash -c "$POST" > "$R/post.log" 2>&1 )
  echo "post: rc $? in $(( $(date +%s) - t1 )) s" >> "$S"
fi
echo "end after $(( $(date +%s) - T0 )) s" >> "$S"
tar czf "$OUT/res.tgz" -C /tmp res
cat "$S"
