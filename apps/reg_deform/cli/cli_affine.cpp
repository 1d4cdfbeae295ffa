// `reg_deform affine` (parsing and printing only; the method is core/affine_reg).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "core/affine/affine_init.hpp"
#include "core/affine/affine_reg.hpp"
#include "core/affine/warp_affine.hpp"
#include "core/field/resample_cpu.hpp"
#include "core/register/reg_register.hpp"
#include "evk/atomic_file.hpp"
#include "evk/error.hpp"
#include "io/affine_text.hpp"
#include "io/nifti_io.hpp"
#include "io/png_slice.hpp"

namespace evk::reg_deform {

namespace {
struct AffineArgs {
  CommonOptions c;
  std::string ref, flo, out, res, rmask, fmask, init, png;
  bool cog = false, nosym = false, res_float = false;
  std::string pad = "nan";
  AffineOptions o;
  int lp = -1;
};

double ms_since(std::chrono::steady_clock::time_point& t0) {
  const auto now = std::chrono::steady_clock::now();
  const double ms = std::chrono::duration<double, std::milli>(now - t0).count();
  t0 = now;
  return ms;
}

struct AffineInputs {
  Volume ref, flo;
  Mask rmask, fmask;
  Mat44 init;
};

// The images, masks and initial matrix; unwritable or misnamed outputs fail here, before computing.
AffineInputs read_inputs(const AffineArgs& a) {
  AffineInputs in;
  in.ref = read_volume(a.ref);
  in.flo = read_volume(a.flo);
  in.rmask = a.rmask.empty() ? Mask{} : read_mask(a.rmask, in.ref.geo);
  in.fmask = a.fmask.empty() ? Mask{} : read_mask(a.fmask, in.flo.geo);
  for (const auto* m : {&in.rmask, &in.fmask}) {
    if (m->empty()) continue;
    bool any = false;
    for (auto v : *m) any = any || v;
    if (!any) input_error(m == &in.rmask ? a.rmask : a.fmask, "mask is empty (no nonzero voxel)");
  }
  in.init = a.init.empty() ? (a.cog ? init_centres_of_mass(in.ref, in.rmask, in.flo, in.fmask)
                                    : init_centres(in.ref.geo, in.flo.geo))
                           : read_affine(a.init);
  { AtomicOutput probe(a.out); }
  if (!a.res.empty()) {
    const std::string n = std::filesystem::path(a.res).filename().string();
    if (!(n.size() > 4 && (n.substr(n.size() - 4) == ".nii" || (n.size() > 7 && n.substr(n.size() - 7) == ".nii.gz"))))
      input_error(a.res, "output name must end in .nii or .nii.gz");
    AtomicOutput probe(a.res);
  }
  if (!a.png.empty()) {
    AtomicOutput probe(a.png);
  }
  return in;
}

void verbose_stages(const AffineArgs& a, bool gpu, const AffineStageTimes& st, double read_ms) {
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "registration stages (ms; %s): pyramid %.1f, select %.1f, upload %.1f, warp %.1f, match %.1f, "
                "download %.1f, lts %.1f; total %.1f (file reading %.1f apart)",
                gpu ? "warp/match = GPU kernel time" : "CPU wall", st.pyramid, st.select, st.upload, st.warp, st.match,
                st.download, st.lts, st.total, read_ms);
  verbose_line(a.c, buf);
}

// The matrix, --res (cubic) and --png; the NMI of the initial and the final alignment when -v or
// --json want it (NaN otherwise).
std::pair<double, double> write_outputs(const AffineArgs& a, const AffineInputs& in, const Mat44& affine) {
  write_affine(a.out, affine);
  double nmi_initial = std::numeric_limits<double>::quiet_NaN(), nmi_final = nmi_initial;
  if (!a.res.empty()) {
    ResampleOptions ro;
    ro.interp = Interp::cubic;
    ro.pad = parse_pad(a.pad);
    const Volume warped = write_as_floating(a.res, warp_affine_cpu(in.ref.geo, in.flo, affine, ro), stored_info(a.flo),
                                            a.res_float, "Warped image (reg_deform affine)");
    if (a.c.verbose || a.c.json) {  // NMI as reg_measure gives it, of the initial and the final alignment
      nmi_final = nmi_like_reg_measure(in.ref, warped);
      nmi_initial = nmi_like_reg_measure(in.ref, warp_affine_cpu(in.ref.geo, in.flo, in.init, ro));
      char buf[160];
      std::snprintf(buf, sizeof buf, "NMI (reg_measure's, cubic): initial %.5f -> affine %.5f", nmi_initial, nmi_final);
      verbose_line(a.c, buf);
    }
  }
  if (!a.png.empty())
    write_checkerboards(a.png, in.ref, warp_linear_cpu(in.ref.geo, in.flo, in.init),
                        warp_linear_cpu(in.ref.geo, in.flo, affine));
  return {nmi_initial, nmi_final};
}

nlohmann::json affine_json(const AffineArgs& a, const AffineOptions& o, const Plan& p, const AffineResult& r,
                           const nlohmann::json& times, std::pair<double, double> nmi) {
  nlohmann::json levels = nlohmann::json::array();
  for (const auto& l : r.levels)
    levels.push_back({{"dims", {l.nx, l.ny, l.nz}}, {"blocks", l.blocks}, {"blocks_backward", l.blocks_back},
                      {"iterations", l.iterations}, {"matched_last", l.matched_last}, {"lts_refits", l.lts_refits},
                      {"seconds", l.seconds}});
  const AffineStageTimes& st = r.times;
  const nlohmann::json stages = {{"pyramid", st.pyramid}, {"select", st.select},     {"upload", st.upload},
                                 {"warp", st.warp},       {"match", st.match},       {"download", st.download},
                                 {"lts", st.lts},         {"total", st.total}};
  nlohmann::json m = nlohmann::json::array();
  for (int i = 0; i < 4; ++i) m.push_back({r.affine.m[i][0], r.affine.m[i][1], r.affine.m[i][2], r.affine.m[i][3]});
  nlohmann::json j = {{"command", "affine"},
                      {"backend", p.info.backend},
                      {"device", p.info.device},
                      {"output", a.out},
                      {"matrix", m},
                      {"symmetric", o.symmetric},
                      {"subvoxel", o.subvoxel},
                      {"levels", levels},
                      {"times_ms", times},
                      {"register_stages_ms", stages}};
  if (!a.res.empty()) j["res"] = a.res;
  if (std::isfinite(nmi.second)) {
    j["nmi_initial"] = nmi.first;
    j["nmi"] = nmi.second;
  }
  return j;
}

void run_affine(const AffineArgs& a) {
  auto t0 = std::chrono::steady_clock::now();
  nlohmann::json times = nlohmann::json::object();
  AffineOptions o = a.o;
  o.levels_used = a.lp < 0 ? o.levels : a.lp;
  o.symmetric = !a.nosym;
  check_affine_options(o);
  parse_pad(a.pad);
  std::future<Plan> backend = start_backend(a.c);  // the device starts while the images are read
  const AffineInputs in = read_inputs(a);
  times["read"] = ms_since(t0);
  const Plan p = backend.get();
  verbose_line(a.c, std::string("backend: ") + (p.gpu() ? "gpu (" + p.info.device + ")" : "cpu") + " (" +
                        p.info.reason + ")");
  times["device_start"] = ms_since(t0);  // what the start took beyond the reading
  const AffineResult r =
      register_affine({.ref = in.ref, .flo = in.flo, .rmask = in.rmask, .fmask = in.fmask, .init = in.init, .options = o,
                       .progress = [&](const std::string& s) { verbose_line(a.c, "  " + s); }},
                      p);
  times["register"] = ms_since(t0);
  verbose_stages(a, p.gpu(), r.times, times["read"].get<double>());
  const auto nmi = write_outputs(a, in, r.affine);
  times["write"] = ms_since(t0);
  if (a.c.verbose) std::cerr << format_affine(r.affine);
  if (a.c.json) std::cout << affine_json(a, o, p, r, times, nmi).dump(2) << "\n";
}

}  // namespace

void add_affine_command(CLI::App& app) {
  auto a = std::make_shared<AffineArgs>();
  auto* cmd = app.add_subcommand("affine", "Global rigid/affine registration by block matching (reg_aladin's method)");
  cmd->add_option("--ref", a->ref, "Reference image (NIfTI)")->required();
  cmd->add_option("--flo", a->flo, "Floating image (NIfTI)")->required();
  cmd->add_option("-o,--output", a->out, "Output affine text (reference world -> floating world)")->required();
  cmd->add_option("--res", a->res, "Also write the floating image resampled into the reference (cubic; in the floating "
                                   "image's datatype, as NiftyReg)");
  cmd->add_flag("--res-float", a->res_float, "Write --res as float32 whatever the floating image's datatype");
  cmd->add_flag("--rigid-only", a->o.rigid_only, "Rigid registration only (default: rigid then affine)");
  cmd->add_flag("--aff-direct", a->o.affine_direct, "Affine from the start (no rigid step)");
  cmd->add_flag("--nosym", a->nosym, "Forward block matching only (default: symmetric, as reg_aladin)");
  cmd->add_flag("--subvoxel,!--no-subvoxel", a->o.subvoxel,
                "Refine each block match to sub-voxel precision (parabola through the NCC peak; the default, not "
                "in reg_aladin); --no-subvoxel: whole-voxel matches as reg_aladin");
  cmd->add_option("--ln", a->o.levels, "Pyramid levels")->capture_default_str();
  cmd->add_option("--lp", a->lp, "Levels used, the finest ones (default: --ln)");
  cmd->add_option("--maxit", a->o.maxit, "Iterations per level (twice as many on the first)")->capture_default_str();
  cmd->add_option("--pv", a->o.block_percent, "Percentage of blocks used (highest variance)")->capture_default_str();
  cmd->add_option("--pi", a->o.inlier_percent, "Percentage of correspondences kept as inliers (LTS)")
      ->capture_default_str();
  cmd->add_option("--rmask", a->rmask, "Reference mask (nonzero = used)");
  cmd->add_option("--fmask", a->fmask, "Floating mask (used by the symmetric matching)");
  auto* init_opt = cmd->add_option("--init", a->init, "Initial affine text (default: image centres aligned)");
  cmd->add_flag("--cog", a->cog, "Initialise from the centres of mass (within the masks when given)")->excludes(init_opt);
  cmd->add_option("--pad", a->pad, "--res value outside the floating image (number or nan)")->capture_default_str();
  cmd->add_option("--png", a->png,
                  "Also write a PNG check: reference/floating checkerboards of the middle axial and coronal slices, "
                  "before (initial matrix) and after");
  add_common_options(cmd, a->c);
  cmd->callback([a] { run_affine(*a); });
}

}  // namespace evk::reg_deform
