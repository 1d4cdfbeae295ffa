// evokernels._ext, reg_deform's part: field, resample, affine and register over the facade
// (core/compute.hpp), the GIL released while they run.
#include "module.hpp"

#include <pybind11/stl.h>

#include <array>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/affine/affine_init.hpp"
#include "core/compute.hpp"
#include "core/field/grid_make.hpp"
#include "core/register/reg_jacobian_cpu.hpp"
#include "core/types.hpp"
#include "evk/error.hpp"

namespace rd = evk::reg_deform;

namespace evk_py {
namespace {

// ---- arrays to reg_deform's types -------------------------------------------------------------
rd::Mat44 mat44(const std::array<double, 16>& a) {
  rd::Mat44 m;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) m.m[i][j] = a[static_cast<std::size_t>(4 * i + j)];
  return m;
}

// A geometry from dims and a 4x4 voxel-to-world matrix (nibabel's img.affine): both NIfTI
// transforms set to it, voxel sizes from its column norms.
rd::Geometry geometry(const std::array<int, 3>& dims, const std::array<double, 16>& affine, const char* what) {
  for (int d : dims)
    if (d < 1) throw evk::InputError(std::string(what) + ": every dimension must be >= 1");
  rd::Geometry g;
  g.nx = dims[0];
  g.ny = dims[1];
  g.nz = dims[2];
  const rd::Mat44 m = mat44(affine);
  double pix[3];
  for (int j = 0; j < 3; ++j) {
    double s = 0;
    for (int i = 0; i < 3; ++i) s += m.m[i][j] * m.m[i][j];
    pix[j] = std::sqrt(s);
  }
  if (!(pix[0] > 0 && pix[1] > 0 && pix[2] > 0) || m.m[3][0] != 0 || m.m[3][1] != 0 || m.m[3][2] != 0 || m.m[3][3] != 1)
    throw evk::InputError(std::string(what) + ": affine must be a 4x4 voxel-to-world matrix with last row 0 0 0 1");
  try {
    (void)m.inverse();
  } catch (const std::exception&) {
    throw evk::InputError(std::string(what) + ": affine is singular");
  }
  g.dx = pix[0];
  g.dy = pix[1];
  g.dz = pix[2];
  g.qform = g.sform = m;
  g.qform_code = g.sform_code = 1;
  g.update_world();
  return g;
}

// ---- reg ------------------------------------------------------------------------------------
rd::RunOptions run_options(const std::string& backend, const std::string& kernel, int device, int threads) {
  rd::RunOptions r;
  r.backend = backend;
  r.kernel = kernel;
  r.device = device;
  r.threads = threads;
  return r;
}

// info of a reg job: "kernel" is "cpu-reference" on the CPU, as the other tools' Python jobs say.
py::dict reg_info(const rd::RunInfo& info) {
  return info_dict(info.backend, info.backend == "cpu" ? "cpu-reference" : info.kernel, info.device, info.reason);
}

rd::Grid make_grid(const py::buffer& data, const std::array<int, 3>& dims, const std::array<double, 16>& affine,
                   const rd::Geometry& ref) {
  rd::Grid g;
  g.geo = geometry(dims, affine, "cpp");
  const std::size_t n = 3 * g.geo.voxels();
  const py::buffer_info bi = contiguous(data, n, 4, "cpp", false);
  g.data.assign(static_cast<const float*>(bi.ptr), static_cast<const float*>(bi.ptr) + n);
  for (float v : g.data)
    if (!std::isfinite(v)) throw evk::InputError("cpp: holds NaN or Inf");
  rd::attach_grid(g, ref, "cpp");
  return g;
}

py::dict reg_field(const std::array<int, 3>& ref_dims, const std::array<double, 16>& ref_affine, const py::buffer& cpp,
                   const std::array<int, 3>& cpp_dims, const std::array<double, 16>& cpp_affine,
                   const py::object& mask, bool displacement, const py::buffer& out, const std::string& backend,
                   const std::string& kernel, int device, int threads) {
  const rd::Geometry ref = geometry(ref_dims, ref_affine, "ref");
  const rd::Grid grid = make_grid(cpp, cpp_dims, cpp_affine, ref);
  rd::Mask m;
  if (!mask.is_none()) {
    const py::buffer_info mi = contiguous(mask.cast<py::buffer>(), ref.voxels(), 1, "mask", false);
    m.assign(static_cast<const std::uint8_t*>(mi.ptr), static_cast<const std::uint8_t*>(mi.ptr) + ref.voxels());
  }
  const py::buffer_info oi = contiguous(out, 3 * ref.voxels(), 4, "out", true);
  rd::RunInfo info;
  {
    py::gil_scoped_release nogil;
    const rd::Plan plan = rd::plan_run(run_options(backend, kernel, device, threads), rd::field_request(ref, grid));
    info = plan.info;
    const rd::Field f =
        rd::compute_field({.ref = ref, .grid = grid, .mask = &m, .displacement = displacement}, plan).field;
    std::memcpy(oi.ptr, f.data.data(), f.data.size() * sizeof(float));
  }
  py::dict j = reg_info(info);
  j["spacing_voxels"] = std::vector<double>{grid.sx, grid.sy, grid.sz};
  return j;
}

py::dict reg_resample(const std::array<int, 3>& ref_dims, const std::array<double, 16>& ref_affine,
                      const py::buffer& flo, const std::array<int, 3>& flo_dims, const std::array<double, 16>& flo_affine,
                      const py::buffer& trans, const std::array<int, 3>& trans_dims,
                      const std::array<double, 16>& trans_affine, const std::string& trans_type,
                      const std::string& interp, float pad, const py::buffer& out, const std::string& backend,
                      const std::string& kernel, int device, int threads) {
  const rd::Geometry ref = geometry(ref_dims, ref_affine, "ref");
  rd::Volume f;
  f.geo = geometry(flo_dims, flo_affine, "flo");
  {
    const py::buffer_info fi = contiguous(flo, f.geo.voxels(), 4, "flo", false);
    f.data.assign(static_cast<const float*>(fi.ptr), static_cast<const float*>(fi.ptr) + f.geo.voxels());
  }
  rd::ResampleOptions ro;
  ro.interp = rd::parse_interp(interp);
  ro.pad = pad;
  ro.threads = threads;
  const rd::RunOptions run = run_options(backend, kernel, device, threads);
  rd::Transformation t;
  if (trans_type == "grid") {
    t.kind = rd::TransKind::grid;
    t.grid = make_grid(trans, trans_dims, trans_affine, ref);
  } else if (trans_type == "deformation" || trans_type == "displacement") {
    if (trans_dims[0] != ref.nx || trans_dims[1] != ref.ny || trans_dims[2] != ref.nz)
      throw evk::InputError("trans: a deformation/displacement field must have the reference's dims");
    t.kind = trans_type == "displacement" ? rd::TransKind::displacement : rd::TransKind::deformation;
    t.field.geo = ref;
    t.field.displacement = trans_type == "displacement";
    const py::buffer_info ti = contiguous(trans, 3 * ref.voxels(), 4, "trans", false);
    t.field.data.assign(static_cast<const float*>(ti.ptr), static_cast<const float*>(ti.ptr) + 3 * ref.voxels());
  } else {
    throw evk::InputError("trans_type: '" + trans_type + "' is not deformation, displacement or grid");
  }
  const py::buffer_info oi = contiguous(out, ref.voxels(), 4, "out", true);
  rd::RunInfo info;
  {
    py::gil_scoped_release nogil;
    const rd::Plan plan =
        rd::plan_run(run, t.kind == rd::TransKind::grid ? rd::field_request(ref, t.grid) : evk::Request{});
    info = plan.info;
    const rd::Volume v = rd::resample({.ref = ref, .flo = f, .trans = t, .options = ro}, plan).image;
    std::memcpy(oi.ptr, v.data.data(), v.data.size() * sizeof(float));
  }
  return reg_info(info);
}

rd::Volume make_volume(const py::buffer& data, const std::array<int, 3>& dims, const std::array<double, 16>& affine,
                       const char* what) {
  rd::Volume v;
  v.geo = geometry(dims, affine, what);
  const py::buffer_info bi = contiguous(data, v.geo.voxels(), 4, what, false);
  v.data.assign(static_cast<const float*>(bi.ptr), static_cast<const float*>(bi.ptr) + v.geo.voxels());
  return v;
}

// An optional mask (uint8, the volume's voxel count, nonzero = used); the CLI's empty-mask error.
rd::Mask make_mask(const py::object& mask, const rd::Geometry& g, const char* what) {
  rd::Mask m;
  if (mask.is_none()) return m;
  const py::buffer_info mi = contiguous(mask.cast<py::buffer>(), g.voxels(), 1, what, false);
  m.assign(static_cast<const std::uint8_t*>(mi.ptr), static_cast<const std::uint8_t*>(mi.ptr) + g.voxels());
  bool any = false;
  for (auto v : m) any = any || v;
  if (!any) evk::input_error(what, "mask is empty (no nonzero voxel)");
  return m;
}

std::vector<double> flat44(const rd::Mat44& m) {
  std::vector<double> out;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) out.push_back(m.m[i][j]);
  return out;
}

// `reg_deform affine`: init is 16 doubles, or empty for the CLI's default (centres, or centres of
// mass with cog). Returns the matrix (reference world -> floating world) in info["affine"].
py::dict reg_affine(const py::buffer& ref_data, const std::array<int, 3>& ref_dims,
                    const std::array<double, 16>& ref_affine, const py::buffer& flo_data,
                    const std::array<int, 3>& flo_dims, const std::array<double, 16>& flo_affine,
                    const py::object& rmask, const py::object& fmask, const std::vector<double>& init, bool cog,
                    bool rigid_only, bool aff_direct, bool nosym, bool subvoxel, int ln, int lp, int maxit, int pv,
                    int pi, const std::string& backend, const std::string& kernel, int device, int threads) {
  const rd::Volume ref = make_volume(ref_data, ref_dims, ref_affine, "ref");
  const rd::Volume flo = make_volume(flo_data, flo_dims, flo_affine, "flo");
  const rd::Mask rm = make_mask(rmask, ref.geo, "rmask");
  const rd::Mask fm = make_mask(fmask, flo.geo, "fmask");
  rd::AffineOptions o;
  o.levels = ln;
  o.levels_used = lp < 0 ? ln : lp;
  o.maxit = maxit;
  o.block_percent = pv;
  o.inlier_percent = pi;
  o.rigid_only = rigid_only;
  o.affine_direct = aff_direct;
  o.symmetric = !nosym;
  o.subvoxel = subvoxel;
  o.threads = threads;
  rd::check_affine_options(o);
  if (!init.empty() && init.size() != 16) throw evk::InputError("init: expected a 4x4 matrix");
  rd::RunInfo info;
  rd::Mat44 result;
  {
    py::gil_scoped_release nogil;
    rd::Mat44 start;
    if (init.size() == 16) {
      std::array<double, 16> a{};
      std::copy(init.begin(), init.end(), a.begin());
      start = mat44(a);
    } else {
      start = cog ? rd::init_centres_of_mass(ref, rm, flo, fm) : rd::init_centres(ref.geo, flo.geo);
    }
    const rd::Plan plan = rd::plan_backend(run_options(backend, kernel, device, threads));
    info = plan.info;
    result = rd::register_affine({.ref = ref, .flo = flo, .rmask = rm, .fmask = fm, .init = start, .options = o}, plan)
                 .affine;
  }
  py::dict j = reg_info(info);
  j["affine"] = flat44(result);
  return j;
}

// `reg_deform register`: the grid (planar, NIfTI order) and its voxel-to-world matrix in info;
// the warped floating image (cubic, `pad` outside) into warped_out, as the CLI's --res.
py::dict reg_register(const py::buffer& ref_data, const std::array<int, 3>& ref_dims,
                      const std::array<double, 16>& ref_affine, const py::buffer& flo_data,
                      const std::array<int, 3>& flo_dims, const std::array<double, 16>& flo_affine,
                      const py::object& rmask, const py::object& fmask, const std::vector<double>& aff, double sx,
                      int ln, int lp, int maxit, double be, double le, double jl, bool allow_folding, int bins, bool ssd, double smoo_r,
                      double smoo_f, float pad, const py::buffer& warped_out, const std::string& backend,
                      const std::string& kernel, int device, int threads) {
  const rd::Volume ref = make_volume(ref_data, ref_dims, ref_affine, "ref");
  const rd::Volume flo = make_volume(flo_data, flo_dims, flo_affine, "flo");
  const rd::Mask rm = make_mask(rmask, ref.geo, "rmask");
  const rd::Mask fm = make_mask(fmask, flo.geo, "fmask");
  const py::buffer_info wi = contiguous(warped_out, ref.geo.voxels(), 4, "out", true);
  rd::RegisterOptions o;
  o.spacing = sx;
  o.levels = ln;
  o.levels_used = lp;
  o.max_iterations = maxit;
  o.bending = be;
  o.linear = le;
  o.jacobian_log = jl;
  o.unfold = !allow_folding;
  o.bins = bins;
  o.similarity = ssd ? rd::Similarity::ssd : rd::Similarity::nmi;
  o.smooth_ref = smoo_r;
  o.smooth_flo = smoo_f;
  o.threads = threads;
  if (o.levels_used > o.levels) evk::input_error("--lp", "must not exceed --ln (" + std::to_string(o.levels) + ")");
  if (!aff.empty() && aff.size() != 16) throw evk::InputError("aff: expected a 4x4 matrix");
  const rd::RunOptions run = run_options(backend, kernel, device, threads);
  rd::RunInfo info;
  rd::Grid grid;
  rd::UnfoldReport unfold;
  rd::JacobianStats js;
  {
    py::gil_scoped_release nogil;
    rd::check_register_inputs(ref, flo, rm, fm, o);
    if (aff.size() == 16) {
      std::array<double, 16> a{};
      std::copy(aff.begin(), aff.end(), a.begin());
      o.affine = mat44(a);
    } else {
      o.affine = rd::init_centres_of_mass(ref, rm, flo, fm);  // the CLI's start without --aff
    }
    o.has_affine = true;
    const rd::Plan plan = rd::plan_run(run, rd::register_request(ref.geo, o.spacing));
    info = plan.info;
    rd::RegisterResult res = rd::register_nonrigid({.ref = ref, .flo = flo, .rmask = rm, .fmask = fm, .options = o}, plan);
    grid = std::move(res.grid);
    unfold = res.unfold;
    js = rd::voxel_jacobian_stats(ref.geo, grid, rm, threads);
    // --res: the field on the chosen backend, resampled (cubic) on the CPU as the CLI does.
    const rd::Field f = rd::compute_field({.ref = ref.geo, .grid = grid}, plan).field;
    rd::ResampleOptions ro;
    ro.interp = rd::Interp::cubic;
    ro.pad = pad;
    ro.threads = threads;
    const rd::Volume w = rd::resample_cpu(flo, f, ro);
    std::memcpy(wi.ptr, w.data.data(), w.data.size() * sizeof(float));
  }
  py::dict j = reg_info(info);
  j["grid_dims"] = std::vector<int>{grid.geo.nx, grid.geo.ny, grid.geo.nz};
  j["grid_affine"] = flat44(grid.geo.vox2world);
  j["grid"] = py::bytes(reinterpret_cast<const char*>(grid.data.data()), grid.data.size() * sizeof(float));
  j["min_jacobian"] = js.min;
  j["max_jacobian"] = js.max;
  j["folded_voxels"] = js.folded;
  py::dict u;
  u["folded_before"] = unfold.folded_before;
  u["min_jacobian_before"] = unfold.min_det_before;
  u["rounds"] = unfold.rounds;
  u["control_point_moves"] = unfold.moves;
  u["seconds"] = unfold.seconds;
  j["unfold"] = u;
  return j;
}

}  // namespace

void def_reg(py::module_& m) {
  m.def("reg_field", &reg_field);
  m.def("reg_resample", &reg_resample);
  m.def("reg_affine", &reg_affine);
  m.def("reg_register", &reg_register);
}

}  // namespace evk_py
