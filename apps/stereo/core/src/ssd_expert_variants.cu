// Every configuration of the expert SSD kernels in one fatbin (embedded as ssd_expert_original):
// kernels/original/stereo/ssd_expert.cu (v2, the GI seed) included once per window radius 1..8 with
// its entry renamed ssd_expert_r<R>, and the first expert kernel (ssd_expert_v1.cu: ssd_expert_v1_r<R>
// for radius 1..8, ssd_expert_v1 for any radius at run time). A support file: the source GI evolves
// (and NVRTC compiles for evolved variants) is the kernel file itself.
#include "core/src/ssd_expert_v1.cu"

#undef EX_R
#undef ssd_expert
#define EX_R 1
#define ssd_expert ssd_expert_r1
#include "stereo/ssd_expert.cu"

#undef EX_R
#undef ssd_expert
#define EX_R 2
#define ssd_expert ssd_expert_r2
#include "stereo/ssd_expert.cu"

#undef EX_R
#undef ssd_expert
#define EX_R 3
#define ssd_expert ssd_expert_r3
#include "stereo/ssd_expert.cu"

#undef EX_R
#undef ssd_expert
#define EX_R 4
#define ssd_expert ssd_expert_r4
#include "stereo/ssd_expert.cu"

#undef EX_R
#undef ssd_expert
#define EX_R 5
#define ssd_expert ssd_expert_r5
#include "stereo/ssd_expert.cu"

#undef EX_R
#undef ssd_expert
#define EX_R 6
#define ssd_expert ssd_expert_r6
#include "stereo/ssd_expert.cu"

#undef EX_R
#undef ssd_expert
#define EX_R 7
#define ssd_expert ssd_expert_r7
#include "stereo/ssd_expert.cu"

#undef EX_R
#undef ssd_expert
#define EX_R 8
#define ssd_expert ssd_expert_r8
#include "stereo/ssd_expert.cu"

#undef ssd_expert
#undef EX_R
