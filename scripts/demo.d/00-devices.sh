# What each tool sees: GPUs (or the CPU fallback) and which kernel variant would run.
for tool in stereo reg_deform barracuda_exact; do
  "$tool" devices
done
