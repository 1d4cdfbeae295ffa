// The SGM pipeline on a device: census (or the sad/ssd cost volume), path aggregation, winner-take-
// all with uniqueness, sub-pixel and the right map, median, LR check on the device; speckle on the
// host. Written against SgmDevice (memory, copies, launches in order on one queue), so the same
// pipeline code drives a GPU (cuda_sgm_device) and, in tests, the CUDA emulator that runs the kernel
// sources on the CPU. Results are bit-identical to sgm_cpu.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/rectify.hpp"
#include "core/sgm.hpp"

namespace evk {
class TaskPool;
}

namespace evk::stereo {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

class SgmDevice {
 public:
  virtual ~SgmDevice() = default;
  virtual void* alloc(std::size_t bytes) = 0;
  virtual void release(void* p) = 0;
  // Copies, fills and launches run in the order they are issued (one queue).
  virtual void to_device(void* dst, const void* src, std::size_t n) = 0;
  virtual void to_host(void* dst, const void* src, std::size_t n) = 0;
  virtual void fill(void* dst, int byte, std::size_t n) = 0;
  virtual void launch(const std::string& kernel, Dim3 grid, Dim3 block, std::size_t smem, void** args) = 0;
  virtual void synchronize() = 0;  // waits for everything issued so far
  // Page-locked host memory where the device has it (faster, truly asynchronous copies).
  virtual void* alloc_host(std::size_t bytes) { return ::operator new(bytes); }
  virtual void release_host(void* p) { ::operator delete(p); }
  // Timing marks on the queue: mark(i) records mark i (0..3); elapsed_ms(a, b) after synchronize().
  virtual void mark(int) {}
  virtual double elapsed_ms(int, int) { return 0; }
  // A second queue beside the main one, for work that may overlap it (the banded post-processing
  // and downloads of SgmPipeline::process): select(q) sends the copies, fills and launches issued
  // after it to queue q (0 main, 1 side); record(e) marks event e (0..kEvents-1) on the current
  // queue; wait(e) makes the current queue wait for it; host_wait(e) blocks the caller until it has
  // passed. synchronize() waits for both queues. A device that runs everything when it is issued
  // (the CUDA emulator) keeps these defaults.
  static constexpr int kEvents = 64;
  virtual void select(int /*queue*/) {}
  virtual void record(int /*event*/) {}
  virtual void wait(int /*event*/) {}
  virtual void host_wait(int /*event*/) {}
  // Whether p is page-locked host memory (copies from and to it run asynchronously).
  virtual bool pinned(const void* /*p*/) const { return false; }
  // How many blocks of this kernel run at once on the whole device (0: unknown).
  virtual int resident_blocks(const std::string& /*kernel*/, Dim3 /*block*/, std::size_t /*smem*/) { return 0; }
};

// The work split every SGM kernel agrees on (a pure function of the size and the parameters).
struct SgmLayout {
  int width = 0, height = 0, count = 0, min_disparity = 0;
  int K = 16;             // disparities per lane
  int G = 8;              // active lanes per cell (G K >= count)
  int Gs = 8;             // lanes per cell: G rounded up to a power of two
  int Dp = 128;           // G K: volume entries per cell
  bool store16 = false;   // path volumes in 16 bits (cost_max + P2 > 255), else 8
  int right_offset = 0;   // census of the right image: padded rows (zeros outside the image)
  int right_pitch = 0;
  static constexpr int kAggregateThreads = 128;  // AGG_THREADS of sgm_aggregate.cu
  static constexpr int kWtaThreads = 256;        // WTA_THREADS of wta.cu
  std::size_t volume_bytes(int paths) const;     // all path volumes
};
// k: disparities per lane, 8, 16 or 32; 0 picks (8 up to 32 disparities, 16 up to 512, else 32).
SgmLayout sgm_layout(int width, int height, const SgmParams& p, int k = 0);

// Choices that change speed, never results; 0 = the policy table's choice (sgm_choose). bands and
// the copy settings are options of `stereo disparity|batch|video` (--bands, --copy-threads,
// --copy-chunk) and Python keywords; the kernel choices are flags of bench_stereo_sgm (--sgm-agg,
// --sgm-k, --sgm-loads, --sgm-k3, --sgm-split3, --sgm-wta) for A/B runs.
struct SgmTuning {
  int k = 0;            // disparities per lane (sgm_layout)
  // the seed kernel's census loads: the right codes staged in shared memory / registers, or read
  // directly through L1 (direct was faster at every disparity count on the H100: 1920x1080, 8 paths:
  // 64 2.07 vs 2.38 ms, 128 2.98 vs 4.45, 256 6.67 vs 7.54; bench/stereo/sgm_vs_libsgm.sh tuning.txt)
  bool staged = false;
  bool direct = false;  // forces the seed's direct loads where the policy would stage them
  // aggregation kernel: 1 the seed (kernels/original/stereo/sgm_aggregate.cu), 2 the second kernel
  // (core/src/sgm/aggregate_fast.cu), 3 the third (core/src/sgm/aggregate_vec.cu, up to 512
  // disparities); 2 and 3 census costs only (sad/ssd always run the seed)
  int agg = 0;
  // wta kernel: 1 a loop over the paths (sgm_wta_*), 2 the paths unrolled (sgm_wta2_*), 3 unrolled
  // with the minimum and its index by keys (sgm_wta3_*, 8-bit volumes; on 16-bit ones sgm_wta2's
  // logic); 0: the policy's (1 for the seed)
  int wta = 0;
  // the seed's direct loads with the next cell's codes loaded during this cell's step (SGM_PREFETCH 1;
  // implies direct). Not in the policy table until measured against the others.
  bool prefetch = false;
  int k3 = 0;  // kernel 3's disparities per lane (4, 8, 16; 0: the smallest with <= 32 lanes per cell)
  // kernel 3's horizontal directions at half its disparities per lane on twice the lanes (where K3 >= 8
  // and its lanes <= 16): 1 on, 0 off, -1 the policy's choice
  int split3 = -1;
  // SgmPipeline::process: row bands of the wta whose post-processing and download overlap the next
  // band's wta (0: one band per wave of wta blocks the device holds at once; 1: no overlap)
  int bands = 0;
  // process() with pageable buffers: threads that copy between them and the pinned staging (the
  // caller included; 0: 8, at most the host's cores), and the upload's chunk in KiB (0: one chunk
  // per image; each chunk's device copy overlaps the next chunk's host copy)
  int copy_threads = 0;
  int copy_chunk_kib = 0;
};

// One row of the tuning policy (CUB-style): the first row whose max_count >= the disparity count
// and whose paths match is taken; none: the fallback (kernel 2, K 8 up to 64 disparities, 16 up to
// 512, else 32).
struct SgmPolicy {
  int max_count;
  int paths;
  int agg;      // 1, 2 or 3
  int k;        // disparities per lane (kernel 3: of the layout, i.e. the wta; its own lanes by k3 below)
  bool staged;  // kernel 1: the staged census loads (else direct)
  int k3;       // kernel 3: disparities per lane (0: the smallest with <= 32 lanes per cell)
  bool split3;  // kernel 3: its horizontal directions at K3 / 2 on twice the lanes
  int wta;      // the wta kernel (SgmTuning::wta)
};
const SgmPolicy* sgm_policy_table(int* rows);
// What a pipeline runs: the tuning's explicit choices, the policy's for the rest.
struct SgmChoice {
  int agg = 2, k = 16;
  int k3 = 0;  // kernel 3's disparities per lane (SgmPipeline fills it in from the layout)
  bool split3 = false;  // kernel 3: horizontal directions at K3 / 2 (SgmPipeline clears it where impossible)
  bool staged = false;
  bool prefetch = false;  // kernel 1, direct loads, SGM_PREFETCH 1
  int wta = 2;
};
SgmChoice sgm_choose(const SgmParams& p, const SgmTuning& t);
// The rectify kernels' launch (rectify.cu): one thread per pixel in blocks of 32x8.
Dim3 sgm_rectify_grid(int width, int height);
constexpr Dim3 kSgmRectifyBlock{32, 8, 1};
// The census kernels' launch (census.cu): blocks of 32x8 threads, 32x32 pixels each.
Dim3 sgm_census_grid(int width, int height);
constexpr Dim3 kSgmCensusBlock{32, 8, 1};
// Bytes of dynamic shared memory the wta kernels need (wta.cu): the right map's keys, the sub-pixel
// fit's cell sums.
std::size_t sgm_wta_smem(int width, int k, bool right, bool subpixel);
// Bytes of dynamic shared memory the seed's staged aggregation kernel needs.
std::size_t sgm_staged_smem(const SgmLayout& l);
// Bytes of dynamic shared memory the second aggregation kernel needs.
std::size_t sgm_agg2_smem(const SgmLayout& l);
// Kernel 3 (aggregate_vec.cu): its disparities per lane for a layout (k3 = 0: the smallest of 4, 8,
// 16 that needs <= 32 lanes per cell), its lanes per cell, the pitch (words) of one of the four
// shifted copies of the right census it reads; 0 lanes when it cannot run the layout (Dp > 512).
int sgm_agg3_k(const SgmLayout& l, int k3);
int sgm_agg3_lanes(const SgmLayout& l, int k3);
// Whether kernel 3 can run its horizontal directions at K3 / 2 on twice the lanes (K3 >= 8, lanes <= 16).
bool sgm_agg3_can_split(const SgmLayout& l, int k3);
int sgm_agg3_copy_pitch(const SgmLayout& l);
// Kernel 3 indexes pixels and its census copies with 32-bit offsets: whether this layout fits them
// (else the pipeline runs kernel 2).
bool sgm_agg3_offsets_fit(const SgmLayout& l);
// The aggregation kernel's entry name for a layout and a choice (census or stored costs).
std::string sgm_aggregate_kernel(const SgmLayout& l, const SgmChoice& c, bool census);
// The wta kernel's entry name for a layout and a choice.
std::string sgm_wta_kernel(const SgmLayout& l, const SgmChoice& c);

// The pixels a pipeline takes for a pair: 16 bits where census sees more than 8, else 8 (to_image8).
int sgm_pixel_bits(const SgmParams& p, const Image16& left, const Image16& right);
// Whether those pixels are the images' own values (16 bits, or 8 of maxval 255): then rectifying
// them on the device gives what rectifying the images on the host and converting them gives (a
// conversion that rounds does not commute with the remap: such pairs are rectified on the host).
bool sgm_pixels_exact(const SgmParams& p, const Image16& left, const Image16& right);

// Device buffers for one image size and parameter set; stages are enqueued on the device's queue.
class SgmPipeline {
 public:
  // bits: 8 or 16 (the pixels upload() takes). k: see sgm_layout.
  SgmPipeline(SgmDevice& dev, const SgmParams& p, int width, int height, int bits, SgmTuning tuning = {});
  ~SgmPipeline();
  SgmPipeline(const SgmPipeline&) = delete;
  SgmPipeline& operator=(const SgmPipeline&) = delete;

  const SgmLayout& layout() const { return layout_; }
  const SgmParams& params() const { return p_; }
  const SgmChoice& choice() const { return choice_; }
  int bits() const { return bits_; }
  std::size_t device_bytes() const { return bytes_; }

  // Rectification on the device (core/rectify.hpp): the maps (the pipeline's size, else InputError
  // naming --rig) are uploaded once here; from then on upload() and process() (and run()) take the
  // raw pair and the first stage remaps each image as uploaded into the one the cost reads (kernel
  // sgm_rectify_u8/u16, bit-identical to remap_cpu). Callers pass pixels that are the images' own
  // values (sgm_pixels_exact) or rectify on the host.
  void set_rectify(const RectifyMaps& maps);
  bool rectifies() const { return raw_[0] != nullptr; }
  // Enqueues the download of image i (0 left, 1 right) as the cost reads it (rectified when set):
  // width*height pixels of bits()/8 bytes.
  void download_image(int i, void* dst);
  // Enqueues the pair's upload: width*height pixels of bits/8 bytes each (sad/ssd costs need
  // 8-bit pixels: 16-bit pipelines take them through run()). With set_rectify, a raw pair is
  // rectified on the device; raw = false: the pair is already rectified.
  void upload(const void* left, const void* right, bool raw = true);
  // Enqueues the rectification of the uploaded raw pair (set_rectify; upload() does it): the first
  // stage, kept apart for timing.
  void enqueue_rectify();
  // Enqueues every device stage on the uploaded pair: the four below in order.
  void compute();
  void enqueue_cost();       // census codes (or the sad/ssd volume)
  void enqueue_aggregate(int dir = -1);  // path volumes: all directions in one launch, or only dir
  void enqueue_wta();        // left map (+ right map): wta, uniqueness, sub-pixel
  void enqueue_post();       // median, LR check: the two below
  void enqueue_median();
  void enqueue_lr_check();
  // Enqueues the download of the left map (and the right one when right != nullptr and the
  // parameters compute it); width*height int16 each.
  void download(std::int16_t* left, std::int16_t* right);
  // Fills the path volumes and the maps with bytes no stage writes by accident (tests).
  void poison();
  // Speckle filter (host side) on a downloaded left map, when the parameters ask for it.
  void finish_host(DisparityQ& left) const;

  // The whole pipeline from host buffers to host buffers, synchronously: upload, every stage, the
  // download of the left map (and of the right one when right_out != nullptr and the parameters
  // compute it); finish_host() then applies the speckle filter. The wta runs in row bands
  // (SgmTuning::bands): a band's median, LR check and download run on the side queue while the next
  // band's wta runs. Pageable buffers are staged through pinned ones, copied by host threads while
  // the device works. The maps are those of upload() + compute() + download().
  void process(const void* left, const void* right, std::int16_t* left_out, std::int16_t* right_out);
  // The row bands process() uses: bands + 1 boundaries from 0 to height (found once per pipeline).
  const std::vector<int>& bands() const;

  // The whole pipeline, synchronously (process()).
  StereoResult run(const Image8& left, const Image8& right);
  StereoResult run(const Image16& left, const Image16& right);

 private:
  void* image(int i) const { return img_[i]; }
  SgmDevice& dev_;
  SgmParams p_;
  SgmLayout layout_;
  int bits_ = 8;
  SgmTuning tuning_;
  SgmChoice choice_;
  std::size_t bytes_ = 0;
  void* img_[2] = {nullptr, nullptr};
  void* census_[2] = {nullptr, nullptr};
  void* cost_ = nullptr;
  void* paths_ = nullptr;
  void* map_[4] = {nullptr, nullptr, nullptr, nullptr};  // left, right, scratch, scratch
  int left_ = 0, right_ = 1;                            // which map_ holds the current left/right
  // wta rows [y0, y0 + rows); post-processing of rows [y0, y0 + rows) (reads the wta's rows y0 - 1 ..
  // y0 + rows), from maps 0/1 into 2/3; post_done() swaps the results into 0/1 once every row is done
  void census(int image);  // census codes of image 0 (left) or 1 (right)
  void rectify(int image);  // raw_[image] -> img_[image] through the maps
  void* raw_[2] = {nullptr, nullptr};   // the raw pair (set_rectify)
  void* rmap_[4] = {nullptr, nullptr, nullptr, nullptr};  // x, y of the left camera, then of the right
  void wta_rows(int y0, int rows);
  void post_rows(int y0, int rows);
  void post_done();
  // host staging for pageable buffers (pinned, made on first use) and the threads that copy
  void stage_in(const void* src, void* dev, int which, std::size_t n);
  void host_copy(void* dst, const void* src, std::size_t n);
  void* staging(int which, std::size_t n);  // stage_[which], grown to n bytes
  void* stage_[3] = {nullptr, nullptr, nullptr};  // left, right pixels; the maps (left, right)
  std::size_t stage_bytes_[3] = {0, 0, 0};
  std::unique_ptr<TaskPool> copiers_;
  mutable std::vector<int> bands_;
};

// A GPU as an SgmDevice: its own non-blocking stream, the embedded SGM kernels (fatbins).
// Throws InputError when no usable GPU (or a build without CUDA).
std::unique_ptr<SgmDevice> cuda_sgm_device(int device = 0);
#if defined(EVK_HAVE_CUDA)
// The stream a device made by cuda_sgm_device issues its work on (cudaStream_t), for timing.
void* cuda_sgm_stream(SgmDevice& dev);
#endif

}  // namespace evk::stereo
