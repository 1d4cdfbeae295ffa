// Every configuration of the SGM aggregation kernel (kernels/original/stereo/sgm_aggregate.cu) in
// one fatbin: the kernel file included once per (K, volume width, cost mode), through
// aggregate_instance.inc, with its entry renamed sgm_aggregate_k<K>_<u8|u16>_<census|prefetch|staged|
// volume> (prefetch: direct census loads with SGM_PREFETCH 1). A support file: the source GI evolves (and NVRTC compiles for evolved variants) is
// the kernel file itself.

#define SGM_K 8
#define SGM_STORE16 0
#define SGM_MODE 0
#define sgm_aggregate sgm_aggregate_k8_u8_census
#include "core/src/sgm/aggregate_instance.inc"

#define SGM_K 16
#define SGM_STORE16 0
#define SGM_MODE 0
#define sgm_aggregate sgm_aggregate_k16_u8_census
#include "core/src/sgm/aggregate_instance.inc"

#define SGM_K 32
#define SGM_STORE16 0
#define SGM_MODE 0
#define sgm_aggregate sgm_aggregate_k32_u8_census
#include "core/src/sgm/aggregate_instance.inc"

#define SGM_K 8
#define SGM_STORE16 1
#define SGM_MODE 0
#define sgm_aggregate sgm_aggregate_k8_u16_census
#include "core/src/sgm/aggregate_instance.inc"

#define SGM_K 16
#define SGM_STORE16 1
#define SGM_MODE 0
#define sgm_aggregate sgm_aggregate_k16_u16_census
#include "core/src/sgm/aggregate_instance.inc"

#define SGM_K 32
#define SGM_STORE16 1
#define SGM_MODE 0
#define sgm_aggregate sgm_aggregate_k32_u16_census
#include "core/src/sgm/aggregate_instance.inc"

#define SGM_K 8
#define SGM_STORE16 0
#define SGM_MODE 1
#define sgm_aggregate sgm_aggregate_k8_u8_staged
#include "core/src/sgm/aggregate_instance.inc"

#define SGM_K 16
#define SGM_STORE16 0
#define SGM_MODE 1
#define sgm_aggregate sgm_aggregate_k16_u8_staged
#include "core/src/sgm/aggregate_instance.inc"

#define SGM_K 32
#define SGM_STORE16 0
#define SGM_MODE 1
#define sgm_aggregate sgm_aggregate_k32_u8_staged
#include "core/src/sgm/aggregate_instance.inc"

#define SGM_K 8
#define SGM_STORE16 1
#define SGM_MODE 1
#define sgm_aggregate sgm_aggregate_k8_u16_staged
#include "core/src/sgm/aggregate_instance.inc"

#define SGM_K 16
#define SGM_STORE16 1
#define SGM_MODE 1
#define sgm_aggregate sgm_aggregate_k16_u16_staged
#include "core/src/sgm/aggregate_instance.inc"

#define SGM_K 32
#define SGM_STORE16 1
#define SGM_MODE 1
#define sgm_aggregate sgm_aggregate_k32_u16_staged
#include "core/src/sgm/aggregate_instance.inc"

#define SGM_K 8
#define SGM_STORE16 0
#define SGM_MODE 2
#define sgm_aggregate sgm_aggregate_k8_u8_volume
#include "core/src/sgm/aggregate_instance.inc"

#define SGM_K 16
#define SGM_STORE16 0
#define SGM_MODE 2
#define sgm_aggregate sgm_aggregate_k16_u8_volume
#include "core/src/sgm/aggregate_instance.inc"

#define SGM_K 32
#define SGM_STORE16 0
#define SGM_MODE 2
#define sgm_aggregate sgm_aggregate_k32_u8_volume
#include "core/src/sgm/aggregate_instance.inc"

#define SGM_K 8
#define SGM_STORE16 1
#define SGM_MODE 2
#define sgm_aggregate sgm_aggregate_k8_u16_volume
#include "core/src/sgm/aggregate_instance.inc"

#define SGM_K 16
#define SGM_STORE16 1
#define SGM_MODE 2
#define sgm_aggregate sgm_aggregate_k16_u16_volume
#include "core/src/sgm/aggregate_instance.inc"

#define SGM_K 32
#define SGM_STORE16 1
#define SGM_MODE 2
#define sgm_aggregate sgm_aggregate_k32_u16_volume
#include "core/src/sgm/aggregate_instance.inc"

#define SGM_K 8
#define SGM_STORE16 0
#define SGM_MODE 0
#define SGM_PREFETCH 1
#define sgm_aggregate sgm_aggregate_k8_u8_prefetch
#include "core/src/sgm/aggregate_instance.inc"

#define SGM_K 16
#define SGM_STORE16 0
#define SGM_MODE 0
#define SGM_PREFETCH 1
#define sgm_aggregate sgm_aggregate_k16_u8_prefetch
#include "core/src/sgm/aggregate_instance.inc"

#define SGM_K 32
#define SGM_STORE16 0
#define SGM_MODE 0
#define SGM_PREFETCH 1
#define sgm_aggregate sgm_aggregate_k32_u8_prefetch
#include "core/src/sgm/aggregate_instance.inc"

#define SGM_K 8
#define SGM_STORE16 1
#define SGM_MODE 0
#define SGM_PREFETCH 1
#define sgm_aggregate sgm_aggregate_k8_u16_prefetch
#include "core/src/sgm/aggregate_instance.inc"

#define SGM_K 16
#define SGM_STORE16 1
#define SGM_MODE 0
#define SGM_PREFETCH 1
#define sgm_aggregate sgm_aggregate_k16_u16_prefetch
#include "core/src/sgm/aggregate_instance.inc"

#define SGM_K 32
#define SGM_STORE16 1
#define SGM_MODE 0
#define SGM_PREFETCH 1
#define sgm_aggregate sgm_aggregate_k32_u16_prefetch
#include "core/src/sgm/aggregate_instance.inc"
