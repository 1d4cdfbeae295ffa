// `reg_deform affine` (parsing and printing only; the method is core/affine_reg).
#include "cli_affine.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>

#include "affine_init.hpp"
#include "affine_reg.hpp"
#include "affine_text.hpp"
#include "evk/atomic_file.hpp"
#include "evk/cli.hpp"
#include "evk/error.hpp"
#include "block_match.hpp"
#include "nifti_io.hpp"
#include "png_slice.hpp"
#include "reg_register.hpp"
#include "resample_cpu.hpp"
#include "warp_affine.hpp"
#if defined(EVK_HAVE_CUDA)
#include <cuda_runtime.h>

#include "evk/cuda_check.hpp"
#include "gpu_affine.hpp"
#endif

namespace evk::reg_deform {

namespace {
struct AffineArgs {
  CommonOptions c;
  std::string ref, flo, out, res, rmask, fmask, init, png;
  bool cog = false, nosym = false;
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

float parse_pad(const std::string& s) {
  if (s == "nan" || s == "NaN") return std::numeric_limits<float>::quiet_NaN();
  try {
    std::size_t used = 0;
    const float v = std::stof(s, &used);
    if (used == s.size() && std::isfinite(v)) return v;
  } catch (const std::exception&) {
  }
  input_error("--pad", "'" + s + "' is not a number or nan");
}
}  // namespace

void add_affine_command(CLI::App& app) {
  auto a = std::make_shared<AffineArgs>();
  auto* cmd = app.add_subcommand("affine", "Global rigid/affine registration by block matching (reg_aladin's method)");
  cmd->add_option("--ref", a->ref, "Reference image (NIfTI)")->required();
  cmd->add_option("--flo", a->flo, "Floating image (NIfTI)")->required();
  cmd->add_option("-o,--output", a->out, "Output affine text (reference world -> floating world)")->required();
  cmd->add_option("--res", a->res, "Also write the floating image resampled into the reference (cubic)");
  cmd->add_flag("--rigid-only", a->o.rigid_only, "Rigid registration only (default: rigid then affine)");
  cmd->add_flag("--aff-direct", a->o.affine_direct, "Affine from the start (no rigid step)");
  cmd->add_flag("--nosym", a->nosym, "Forward block matching only (default: symmetric, as reg_aladin)");
  cmd->add_flag("--subvoxel", a->o.subvoxel,
                "Refine each block match to sub-voxel precision (parabola through the NCC peak; not in reg_aladin)");
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
  cmd->callback([a] {
    auto t0 = std::chrono::steady_clock::now();
    nlohmann::json times = nlohmann::json::object();
    AffineOptions o = a->o;
    o.levels_used = a->lp < 0 ? o.levels : a->lp;
    o.symmetric = !a->nosym;
    check_affine_options(o);
    const float pad = parse_pad(a->pad);
    const BackendChoice backend = choose_backend(a->c);
    const bool gpu = backend.backend == Backend::gpu;
    verbose_line(a->c, std::string("backend: ") + (gpu ? "gpu (" + backend.device.name + ")" : "cpu") + " (" +
                           backend.reason + ")");
    const Volume ref = read_volume(a->ref);
    const Volume flo = read_volume(a->flo);
    const Mask rmask = a->rmask.empty() ? Mask{} : read_mask(a->rmask, ref.geo);
    const Mask fmask = a->fmask.empty() ? Mask{} : read_mask(a->fmask, flo.geo);
    for (const auto* m : {&rmask, &fmask}) {
      if (m->empty()) continue;
      bool any = false;
      for (auto v : *m) any = any || v;
      if (!any) input_error(m == &rmask ? a->rmask : a->fmask, "mask is empty (no nonzero voxel)");
    }
    Mat44 init = a->init.empty() ? (a->cog ? init_centres_of_mass(ref, rmask, flo, fmask) : init_centres(ref.geo, flo.geo))
                                 : read_affine(a->init);
    { AtomicOutput probe(a->out); }  // unwritable outputs: fail before computing
    if (!a->res.empty()) {
      const std::string n = std::filesystem::path(a->res).filename().string();
      if (!(n.size() > 4 && (n.substr(n.size() - 4) == ".nii" || (n.size() > 7 && n.substr(n.size() - 7) == ".nii.gz"))))
        input_error(a->res, "output name must end in .nii or .nii.gz");
      AtomicOutput probe(a->res);
    }
    if (!a->png.empty()) {
      AtomicOutput probe(a->png);
    }
    times["read"] = ms_since(t0);
    AffineEngine engine = cpu_matcher();
#if defined(EVK_HAVE_CUDA)
    if (gpu) {
      EVK_CUDA(cudaSetDevice(backend.device.index));
      engine = gpu::affine_engine();
    }
#endif
    const AffineResult r = register_affine(ref, flo, rmask, fmask, init, o, engine,
                                           [&](const std::string& s) { verbose_line(a->c, "  " + s); });
    times["register"] = ms_since(t0);
    {
      const AffineStageTimes& st = r.times;
      char buf[320];
      std::snprintf(buf, sizeof buf,
                    "registration stages (ms; %s): pyramid %.1f, select %.1f, upload %.1f, warp %.1f, match %.1f, "
                    "download %.1f, lts %.1f; total %.1f (file reading %.1f apart)",
                    gpu ? "warp/match = GPU kernel time" : "CPU wall", st.pyramid, st.select, st.upload, st.warp,
                    st.match, st.download, st.lts, st.total, times["read"].get<double>());
      verbose_line(a->c, buf);
    }
    write_affine(a->out, r.affine);
    double nmi_initial = std::numeric_limits<double>::quiet_NaN(), nmi_final = nmi_initial;
    if (!a->res.empty()) {
      ResampleOptions ro;
      ro.interp = Interp::cubic;
      ro.pad = pad;
      const Volume warped = warp_affine_cpu(ref.geo, flo, r.affine, ro);
      write_volume(a->res, warped);
      if (a->c.verbose || a->c.json) {  // NMI as reg_measure gives it, of the initial and the final alignment
        nmi_final = nmi_like_reg_measure(ref, warped);
        nmi_initial = nmi_like_reg_measure(ref, warp_affine_cpu(ref.geo, flo, init, ro));
        char buf[160];
        std::snprintf(buf, sizeof buf, "NMI (reg_measure's, cubic): initial %.5f -> affine %.5f", nmi_initial, nmi_final);
        verbose_line(a->c, buf);
      }
    }
    if (!a->png.empty())
      write_checkerboards(a->png, ref, warp_linear_cpu(ref.geo, flo, init), warp_linear_cpu(ref.geo, flo, r.affine));
    times["write"] = ms_since(t0);
    if (a->c.verbose) std::cerr << format_affine(r.affine);
    if (a->c.json) {
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
                          {"backend", gpu ? "gpu" : "cpu"},
                          {"device", gpu ? backend.device.name : ""},
                          {"output", a->out},
                          {"matrix", m},
                          {"symmetric", o.symmetric},
                          {"subvoxel", o.subvoxel},
                          {"levels", levels},
                          {"times_ms", times},
                          {"register_stages_ms", stages}};
      if (!a->res.empty()) j["res"] = a->res;
      if (std::isfinite(nmi_final)) {
        j["nmi_initial"] = nmi_initial;
        j["nmi"] = nmi_final;
      }
      std::cout << j.dump(2) << "\n";
    }
  });
}

}  // namespace evk::reg_deform
