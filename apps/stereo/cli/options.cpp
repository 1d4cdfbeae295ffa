// The matching options every computing command shares (disparity, batch, video) and the pair reader.
#include "evk/atomic_file.hpp"
#include "evk/error.hpp"
#include "cli/commands.hpp"

namespace stereo_cli {

using namespace evk::stereo;

void MatchArgs::finalize() {
  backend = common.backend;
  kernel = common.kernel;
  device = common.device;
  MatchOptions::finalize();
}

MatchNote MatchArgs::note() const {
  return [this](const std::string& s) { evk::verbose_line(common, s); };
}

void add_match_options(CLI::App* c, MatchArgs& o) {
  c->add_option("--method", o.method, "Matching: ssd (Stam's block matcher, the paper's kernel) or sgm (semi-global)")
      ->check(CLI::IsMember({"ssd", "sgm"}))
      ->capture_default_str();
  c->add_option("--min-disparity", o.params.min_disparity, "Smallest disparity tried (sgm: negative allowed)")
      ->capture_default_str();
  c->add_option("--max-disparity", o.params.max_disparity, "Largest disparity tried")->capture_default_str();
  c->add_option("--window", o.params.window, "ssd: SSD window size (odd, >= 3)")->capture_default_str();
  c->add_option("--min-ssd", o.params.min_ssd, "ssd: a disparity is kept only when its SSD is below this")
      ->capture_default_str();
  c->add_option("--paths", o.sgm.paths, "sgm: aggregation directions, 4 or 8")->capture_default_str();
  c->add_option("--p1", o.sgm.p1, "sgm: penalty for a disparity change of 1")->capture_default_str();
  c->add_option("--p2", o.sgm.p2, "sgm: penalty for a larger change")->capture_default_str();
  c->add_option("--cost", o.cost, "sgm: matching cost, census (9x7 centre-symmetric), sad or ssd")
      ->check(CLI::IsMember({"census", "sad", "ssd"}))
      ->capture_default_str();
  c->add_option("--cost-window", o.sgm.window, "sgm: window of the sad/ssd cost (odd)")->capture_default_str();
  c->add_option("--uniqueness", o.post.uniqueness,
                "Invalid when another disparity (|d - best| > 1) costs less than best x (1 + U/100); 0 = off")
      ->capture_default_str();
  c->add_option("--subpixel", o.subpixel, "Sub-pixel fit: none, parabola or equiangular (1/16 pixel)")
      ->check(CLI::IsMember({"none", "parabola", "equiangular"}))
      ->capture_default_str();
  c->add_option("--lr-check", o.post.lr_check, "Left-right check: keep |dL - dR| <= N pixels; -1 = off")
      ->capture_default_str();
  c->add_option("--median", o.post.median, "Median filter: 0 (off) or 3 (3x3 of the valid neighbours)")
      ->capture_default_str();
  c->add_option("--speckle-size", o.post.speckle_size, "Invalidate regions of at most this many pixels; 0 = off")
      ->capture_default_str();
  c->add_option("--speckle-range", o.post.speckle_range, "Neighbours within this many pixels are one region")
      ->capture_default_str();
  c->add_option("--bands", o.tuning.bands,
                "sgm on the GPU (speed only): row bands whose post-processing and download overlap the next "
                "band's wta; 0 = one per wave of wta blocks, 1 = no overlap")
      ->capture_default_str();
  c->add_option("--copy-threads", o.tuning.copy_threads,
                "sgm on the GPU (speed only): threads copying between pageable and pinned buffers; 0 = 8 (at "
                "most the cores)")
      ->capture_default_str();
  c->add_option("--copy-chunk", o.tuning.copy_chunk_kib,
                "sgm on the GPU (speed only): upload chunk in KiB, each chunk's device copy overlapping the "
                "next one's host copy; 0 = one chunk per image")
      ->capture_default_str();
  c->add_option("--png-scale", o.write.png_scale, "16-bit PNG/PGM output: stored value = disparity x scale")
      ->capture_default_str();
  evk::add_common_options(c, o.common);
}

void add_frames_options(CLI::App* c, FramesCmd& f) {
  c->add_option("-o,--output-dir", f.outdir, "Output directory (must exist)")->required();
  c->add_option("--format", f.format, "Output format")->check(CLI::IsMember({"pfm", "png", "pgm"}))->capture_default_str();
  c->add_flag("--color", f.color, "Also write <name>_color.png");
  c->add_option("--rig", f.rig, "Rig file from `stereo calibrate`: the frames are raw and are rectified first");
  c->add_flag("--depth", f.depth, "Also write <name>_depth.pfm, metric depth (needs --rig)");
  c->add_flag("--points", f.points, "Also write <name>.ply, the coloured 3-D points (needs --rig)");
  c->add_flag("--rectified", f.rectified, "Also write <name>_rect_left.pgm and <name>_rect_right.pgm, the rectified "
                                          "pair at the raw frames' depth (needs --rig)");
  c->add_option("--streams", f.streams, "GPU sgm: frames in flight, each on its own CUDA stream")->capture_default_str();
  c->add_option("--readers", f.readers, "Decoding threads")->capture_default_str();
  c->add_option("--writers", f.writers, "Encoding threads")->capture_default_str();
  add_match_options(c, f.o);
}

Pair16 read_pair(const std::string& l, const std::string& r) {
  Pair16 p{read_gray16(l), read_gray16(r)};
  if (p.left.width != p.right.width || p.left.height != p.right.height)
    evk::input_error(l + ", " + r, "left and right images differ in size (" + std::to_string(p.left.width) + "x" +
                                       std::to_string(p.left.height) + " vs " + std::to_string(p.right.width) + "x" +
                                       std::to_string(p.right.height) + ")");
  return p;
}

std::string pct(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", v);
  return b;
}

void probe_writable(const fs::path& p) { evk::AtomicOutput probe(p); }

}  // namespace stereo_cli
