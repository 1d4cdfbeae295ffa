#!/usr/bin/env bash
# make-man.sh TOOL OUT.1 — the tool's man page from its own --help (Debian's help2man), with a
# COMMANDS section holding every subcommand's --help (two levels: `gi run` too). Build-time only.
set -euo pipefail
tool=$1
out=$2
name=$(basename "$tool")
inc=$(mktemp)
trap 'rm -f "$inc"' EXIT
export EVK_OVERLAY_DIR=/nonexistent  # the page must not depend on the builder's overlay variants

# Subcommand names from CLI11's "Subcommands:" block (two-space indent, name, spaces, text).
subs_of() { "$@" --help | awk '/^Subcommands:/{f=1;next} f&&/^  [a-z]/{print $1} f&&/^$/{f=0}'; }
# troff-safe verbatim text
quote() { sed -e 's/\\/\\e/g' -e 's/^\([.'"'"']\)/\\\&\1/'; }

{
  echo "[COMMANDS]"
  for s in $(subs_of "$tool"); do
    echo ".SS \"$name $s\""
    echo ".nf"
    "$tool" "$s" --help | quote
    echo ".fi"
    for t in $(subs_of "$tool" "$s"); do
      echo ".SS \"$name $s $t\""
      echo ".nf"
      "$tool" "$s" "$t" --help | quote
      echo ".fi"
    done
  done
  cat <<'TXT'
[ENVIRONMENT]
.TP
.B EVK_OVERLAY_DIR
Directory of kernel variants evolved on this machine (default: $XDG_DATA_HOME/evokernels/evolved,
else ~/.local/share/evokernels/evolved); they take precedence over the installed ones.
.TP
.B EVK_CACHE_DIR
NVRTC compile cache (default: $XDG_CACHE_HOME/evokernels, else ~/.cache/evokernels).
.TP
.B EVK_SHARE_DIR
Installed data directory (default: <prefix>/share/evokernels, found from the executable's location).
[EXIT STATUS]
0 on success, 2 for bad input or usage (one line on stderr naming the file or argument), 1 for an
internal failure. Outputs are written under a temporary name and renamed on success.
[NOTES]
GPU work needs an NVIDIA GPU with a CUDA 13 driver; evolved kernel variants and the gi subcommand
also need CUDA's NVRTC library (libnvrtc.so.13). Without them the tools run their CPU backends.
Drop-in NiftyReg (reg_resample, reg_measure, ...) and bwa commands are installed off PATH in
<prefix>/lib/evokernels/niftyreg and <prefix>/lib/evokernels/bwa.
TXT
} > "$inc"

desc=$("$tool" --help | head -n 1)
help2man --no-info --no-discard-stderr --name="$desc" --section=1 --include="$inc" --output="$out.tmp" "$tool"
mv "$out.tmp" "$out"
