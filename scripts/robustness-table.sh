#!/usr/bin/env bash
# Runs the three bad-input catalogues (tests/*/bad_input_catalogue_test.cpp) through the real tools
# and writes their results as the table between the catalogue markers of docs/ROBUSTNESS.md.
#   bash scripts/robustness-table.sh [BUILD_DIR]
# The catalogue tests check that every case is in the table with result "pass", so a case that
# changes or fails shows up in `make test` until this is re-run (and passes).
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for suite in barracuda_exact_tests:BarracudaCatalogue stereo_tests:StereoCatalogue reg_deform_tests:RegCatalogue; do
  bin=${suite%%:*}
  EVK_CATALOGUE_OUT=$out "$B/bin/$bin" --gtest_filter="${suite##*:}.*-*.EveryCaseIsInTheDocs" >/dev/null 2>&1 || true
done
python3 - "$out" docs/ROBUSTNESS.md <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
order = {"barracuda_exact": 0, "stereo": 1, "reg_deform": 2}
rows.sort(key=lambda r: (order.get(r["tool"], 9), r["id"]))
def cell(s):
    return s.replace("|", "\\|").replace("\n", " ")
lines = ["| tool | case | category | input | expected | result | exit | stderr (DIR = the test's directory) |",
         "|---|---|---|---|---|---|---|---|"]
for r in rows:
    err = r["stderr"] if r["exit_code"] != 0 or r["expect"].startswith("exit") else ""
    err = err if len(err) <= 160 else err[:157] + "..."
    lines.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
        r["tool"], r["id"], r["category"], r["input"], r["expect"], r["result"], r["exit_code"],
        ("`" + cell(err) + "`") if err else ""))
counts = {}
for r in rows:
    c = counts.setdefault(r["tool"], {"cases": 0, "pass": 0})
    c["cases"] += 1
    c["pass"] += r["result"] == "pass"
summary = "; ".join("%s %d cases, %d pass" % (t, c["cases"], c["pass"]) for t, c in
                    sorted(counts.items(), key=lambda kv: order.get(kv[0], 9)))
doc = open(sys.argv[2]).read()
begin, end = "<!-- catalogue:begin -->", "<!-- catalogue:end -->"
a, b = doc.index(begin) + len(begin), doc.index(end)
doc = doc[:a] + "\n" + summary + ".\n\n" + "\n".join(lines) + "\n" + doc[b:]
open(sys.argv[2], "w").write(doc)
print(summary)
PY
