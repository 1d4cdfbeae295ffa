// evokernels._ext: the Python package's native part. Thin: arrays arrive as contiguous buffers
// checked and converted by the Python layer (evokernels/*.py), which also allocates the outputs
// and passes them in writable; here they become the core libraries' types, the same calls as the
// CLIs' run with the GIL released, and evk::InputError / evk::CudaError become
// evokernels.InputError (a ValueError) / evokernels.CudaError (a RuntimeError) with the CLI's
// messages. Only Python's buffer protocol is used (no numpy C API), so any numpy version works.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/matcher.hpp"
#include "core/rectify.hpp"
#include "core/rig.hpp"
#include "core/ssd_gpu.hpp"
#include "evk/cli.hpp"
#include "evk/cuda_check.hpp"
#include "evk/cuda_library.hpp"
#include "evk/device.hpp"
#include "evk/dispatch.hpp"
#include "evk/error.hpp"
#include "evk/install_dirs.hpp"
#include "io/rig.hpp"
#include "module.hpp"

#ifndef EVK_VERSION
#define EVK_VERSION "0.0.0"
#endif
#ifndef EVK_CUDA_ARCHS
#define EVK_CUDA_ARCHS ""
#endif

namespace st = evk::stereo;

namespace evk_py {

// A contiguous buffer of `n` elements of `itemsize` bytes (the Python layer guarantees layout;
// this re-checks so a misuse of the private API cannot read or write out of bounds).
py::buffer_info contiguous(const py::buffer& b, std::size_t n, std::size_t itemsize, const char* what, bool writable) {
  py::buffer_info info = b.request(writable);
  if (static_cast<std::size_t>(info.itemsize) != itemsize || static_cast<std::size_t>(info.size) != n)
    throw evk::InputError(std::string(what) + ": expected " + std::to_string(n) + " elements of " +
                          std::to_string(itemsize) + " bytes, got " + std::to_string(info.size) + " of " +
                          std::to_string(info.itemsize));
  py::ssize_t expect = info.itemsize;
  bool c_order = true;
  for (int d = static_cast<int>(info.ndim) - 1; d >= 0; --d) {
    if (info.shape[d] != 1 && info.strides[d] != expect) c_order = false;
    expect *= info.shape[d];
  }
  if (!c_order) throw evk::InputError(std::string(what) + ": buffer is not contiguous");
  return info;
}

py::dict info_dict(const std::string& backend, const std::string& kernel, const std::string& device,
                   const std::string& reason) {
  py::dict d;
  d["backend"] = backend;
  d["kernel"] = kernel;
  d["device"] = device;
  d["reason"] = reason;
  return d;
}

}  // namespace evk_py

namespace {
using namespace evk_py;

// ---- devices --------------------------------------------------------------------------------
evk::Registry all_kernels() {
  evk::Registry reg = st::make_registry();  // stereo, with the installed variants
  reg.add_kernel("reg_deform");
  reg.add_kernel("barracuda_exact");
  reg.add_builtin();  // the variants built into this module (stereo's are there already)
  evk::add_installed_variants(reg);
  const auto overlay = evk::default_overlay_dir();
  if (!overlay.empty()) reg.load_overlay(overlay);
  return reg;
}

py::dict environment() {
  const evk::GpuEnvironment& env = evk::gpu_environment();
  py::dict j;
  j["version"] = EVK_VERSION;
  j["built_with_cuda"] = env.built_with_cuda;
  j["cuda_architectures"] = EVK_CUDA_ARCHS;
  j["driver_version"] = evk::format_cuda_version(env.driver_version);
  j["runtime_version"] = evk::format_cuda_version(env.runtime_version);
  j["nvrtc_version"] = evk::nvrtc_version();
  j["status"] = env.status;
  j["backend"] = env.usable() ? "gpu" : "cpu";
  j["overlay_dir"] = evk::default_overlay_dir().string();
  j["data_dir"] = evk::data_dir().string();
  j["module"] = evk::this_binary().string();
  return j;
}

py::list devices(const std::string& kernel) {
  const evk::GpuEnvironment& env = evk::gpu_environment();
  const evk::Registry reg = all_kernels();
  py::list out;
  for (const auto& d : env.devices) {
    py::dict dj;
    dj["index"] = d.index;
    dj["name"] = d.name;
    dj["compute_capability"] = std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor);
    dj["sm_count"] = d.sm_count;
    dj["memory_bytes"] = d.total_mem;
    dj["l2_bytes"] = d.l2_bytes;
    dj["clock_khz"] = d.clock_khz;
    py::dict ks;
    for (const auto& k : reg.kernels()) {
      const evk::Selection s = reg.select(k, evk::DeviceKey{d.cc(), d.name}, kernel);
      py::dict kj;
      kj["variant"] = s.variant.id;
      kj["source"] = evk::to_string(s.variant.source);
      kj["rule"] = s.rule;
      ks[py::str(k)] = kj;
    }
    dj["kernels"] = ks;
    out.append(dj);
  }
  return out;
}

// ---- stereo ---------------------------------------------------------------------------------
// A rig file as `--rig` reads it (io/rig.hpp: read_rig, then the Rectifier's remap tables, computed
// once); evokernels.stereo.Rig holds one and hands it to rectify and disparity.
struct RigHandle {
  st::Rig rig;
  std::shared_ptr<const st::RectifyMaps> maps;
};

// rig: None or a RigHandle (InputError otherwise, so a misuse of the private API says what it got).
std::shared_ptr<const st::RectifyMaps> maps_of(const py::object& rig) {
  if (rig.is_none()) return nullptr;
  if (!py::isinstance<RigHandle>(rig)) throw evk::InputError("rig: expected a rig from evokernels.stereo.load_rig");
  return rig.cast<const RigHandle&>().maps;
}

// Both methods through the stereo facade (evk::stereo::Matcher), as `stereo disparity` runs them:
// o on the pair, then put(out, left map) fills the caller's array.
// rig: None, or a RigHandle whose maps rectify the raw pair first (the facade's --rig path).
py::dict stereo_run(const py::buffer& left, const py::buffer& right, const py::buffer& out, int height, int width,
                    st::MatchOptions& o, const py::object& rig, void (*put)(void*, const st::DisparityQ&)) {
  if (height < 1 || width < 1) throw evk::InputError("left: empty image");
  const std::size_t n = static_cast<std::size_t>(height) * static_cast<std::size_t>(width);
  const py::buffer_info li = contiguous(left, n, 1, "left", false);
  const py::buffer_info ri = contiguous(right, n, 1, "right", false);
  const py::buffer_info oi = contiguous(out, n, 4, "out", true);
  const auto* lp = static_cast<const std::uint8_t*>(li.ptr);
  const auto* rp = static_cast<const std::uint8_t*>(ri.ptr);
  const st::Image16 l{width, height, 255, {lp, lp + n}}, r{width, height, 255, {rp, rp + n}};
  const std::shared_ptr<const st::RectifyMaps> maps = maps_of(rig);
  st::MatchInfo info;
  {
    py::gil_scoped_release nogil;
    o.finalize();
    if (maps) st::check_rectify_size(*maps, width, height);
    st::Matcher m(o, width, height, {}, maps);
    put(oi.ptr, m.run(l, r).left);
    info = m.info();
  }
  py::dict j = info_dict(info.backend, info.kernel, info.device, info.reason);
  j["method"] = o.method;
  if (!o.is_sgm()) j["kernel_ms"] = info.kernel_ms;
  return j;
}

st::MatchOptions stereo_options(const std::string& method, const std::string& backend, const std::string& kernel,
                               int device, int threads) {
  st::MatchOptions o;
  o.method = method;
  o.backend = backend;
  o.kernel = kernel;
  o.device = device;
  o.threads = threads;
  return o;
}

// method "ssd": out int32 (H, W), whole pixels, -1 where invalid.
py::dict stereo_disparity(const py::buffer& left, const py::buffer& right, const py::buffer& out, int height, int width,
                          int min_disparity, int max_disparity, int window, int min_ssd, const std::string& method,
                          const std::string& backend, const std::string& kernel, int device, int threads,
                          const py::object& rig) {
  if (method == "sgm") evk::input_error("--method sgm", "gives a sub-pixel map: use stereo_sgm");
  st::MatchOptions o = stereo_options(method, backend, kernel, device, threads);
  o.params = st::Params{min_disparity, max_disparity, window, min_ssd};
  return stereo_run(left, right, out, height, width, o, rig, [](void* dst, const st::DisparityQ& d) {
    for (std::size_t k = 0; k < d.q.size(); ++k)
      static_cast<std::int32_t*>(dst)[k] = d.q[k] == st::kInvalidQ ? -1 : d.q[k] / st::kDispScale;
  });
}

// method "sgm": out float32 (H, W), disparity in pixels (q / 16), NaN where invalid.
py::dict stereo_sgm(const py::buffer& left, const py::buffer& right, const py::buffer& out, int height, int width,
                    int min_disparity, int max_disparity, int paths, int p1, int p2, const std::string& cost,
                    int cost_window, int uniqueness, const std::string& subpixel, int lr_check, int median,
                    int speckle_size, int speckle_range, int bands, int copy_threads, int copy_chunk,
                    const std::string& backend, const std::string& kernel, int device, int threads,
                    const py::object& rig) {
  st::MatchOptions o = stereo_options("sgm", backend, kernel, device, threads);
  o.params.min_disparity = min_disparity;
  o.params.max_disparity = max_disparity;
  o.sgm.paths = paths;
  o.sgm.p1 = p1;
  o.sgm.p2 = p2;
  o.sgm.window = cost_window;
  o.cost = cost;
  o.subpixel = subpixel;
  o.post.uniqueness = uniqueness;
  o.post.lr_check = lr_check;
  o.post.median = median;
  o.post.speckle_size = speckle_size;
  o.post.speckle_range = speckle_range;
  o.tuning.bands = bands;
  o.tuning.copy_threads = copy_threads;
  o.tuning.copy_chunk_kib = copy_chunk;
  return stereo_run(left, right, out, height, width, o, rig, [](void* dst, const st::DisparityQ& d) {
    for (std::size_t k = 0; k < d.q.size(); ++k)
      static_cast<float*>(dst)[k] = d.q[k] == st::kInvalidQ ? std::nanf("") : static_cast<float>(d.q[k]) / st::kDispScale;
  });
}

// ---- rigs: depth and points through a rig's Q (core/rig.hpp), as `disparity --depth/--points`
st::Rig rig_of(const py::buffer& q) {
  const py::buffer_info qi = contiguous(q, 16, 8, "Q", false);
  st::Rig rig;
  std::memcpy(rig.Q.data(), qi.ptr, sizeof(double) * 16);
  return rig;
}

void stereo_depth(const py::buffer& disp, const py::buffer& q, const py::buffer& out, int height, int width) {
  const std::size_t n = static_cast<std::size_t>(height) * static_cast<std::size_t>(width);
  const st::Rig rig = rig_of(q);
  const auto* d = static_cast<const float*>(contiguous(disp, n, 4, "disparity", false).ptr);
  auto* z = static_cast<float*>(contiguous(out, n, 4, "out", true).ptr);
  for (std::size_t k = 0; k < n; ++k) z[k] = st::depth_from_disparity(rig, d[k]);
}

// The points of the pixels with a disparity, row by row, into xyz (n x 3) and their pixel index;
// returns how many.
std::size_t stereo_points(const py::buffer& disp, const py::buffer& q, const py::buffer& xyz, const py::buffer& index,
                          int height, int width) {
  const std::size_t n = static_cast<std::size_t>(height) * static_cast<std::size_t>(width);
  const st::Rig rig = rig_of(q);
  const auto* d = static_cast<const float*>(contiguous(disp, n, 4, "disparity", false).ptr);
  auto* p = static_cast<float*>(contiguous(xyz, n * 3, 4, "xyz", true).ptr);
  auto* idx = static_cast<std::int64_t*>(contiguous(index, n, 8, "index", true).ptr);
  std::size_t m = 0;
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const std::size_t k = static_cast<std::size_t>(y) * static_cast<std::size_t>(width) + static_cast<std::size_t>(x);
      std::array<float, 3> v{};
      if (!st::point_from_disparity(rig, x, y, d[k], v)) continue;
      std::memcpy(p + 3 * m, v.data(), sizeof v);
      idx[m++] = static_cast<std::int64_t>(k);
    }
  return m;
}

// ---- rig files and rectification, as `disparity --rig` and `--rectified` -------------------------
std::shared_ptr<RigHandle> stereo_load_rig(const std::string& path) {
  auto h = std::make_shared<RigHandle>();
  py::gil_scoped_release nogil;
  h->rig = st::read_rig(path);  // InputError naming the file and the field
  h->maps = st::Rectifier(h->rig).maps();
  return h;
}

// Rig-like maps without a rig file (core/rectify.hpp's synthetic_rectify_maps: each camera's view
// rotated by +-angle and distorted radially by k1), for tests on builds without OpenCV; the fields
// other than the size stay 0.
std::shared_ptr<RigHandle> stereo_synthetic_rig(int width, int height, double angle, double k1) {
  if (width < 1 || height < 1) throw evk::InputError("synthetic rig: empty size");
  auto h = std::make_shared<RigHandle>();
  h->rig.width = width;
  h->rig.height = height;
  h->maps = std::make_shared<const st::RectifyMaps>(st::synthetic_rectify_maps(width, height, angle, k1));
  return h;
}

// The rig's fields: width, height, rms, epipolar_error, views_used and the matrices as flat lists
// (row-major; D1, D2 as long as the file's).
py::dict stereo_rig_fields(const RigHandle& h) {
  const st::Rig& r = h.rig;
  auto list = [](const auto& a) { return std::vector<double>(a.begin(), a.end()); };
  py::dict j;
  j["width"] = r.width;
  j["height"] = r.height;
  j["M1"] = list(r.M1);
  j["D1"] = r.D1;
  j["M2"] = list(r.M2);
  j["D2"] = r.D2;
  j["R"] = list(r.R);
  j["T"] = list(r.T);
  j["R1"] = list(r.R1);
  j["R2"] = list(r.R2);
  j["P1"] = list(r.P1);
  j["P2"] = list(r.P2);
  j["Q"] = list(r.Q);
  j["rms"] = r.rms;
  j["epipolar_error"] = r.epipolar;
  j["views_used"] = r.views_used;
  return j;
}

// One camera's remap tables (0 left, 1 right) into float32 x and y (height x width each).
void stereo_rig_maps(const RigHandle& h, int camera, const py::buffer& x, const py::buffer& y) {
  const st::RectifyMaps& m = *h.maps;
  const int k = camera ? 1 : 0;
  const std::size_t n = m.x[k].size();
  std::memcpy(contiguous(x, n, 4, "x", true).ptr, m.x[k].data(), n * sizeof(float));
  std::memcpy(contiguous(y, n, 4, "y", true).ptr, m.y[k].data(), n * sizeof(float));
}

// One raw image of the rig's camera (0 left, 1 right), uint8 or uint16 (itemsize 1 or 2), into out
// (same size and type): core/rectify.hpp's check_rectify_size and remap_cpu, as --rectified.
void stereo_rectify(const RigHandle& h, int camera, const py::buffer& src, const py::buffer& out, int height, int width,
                    int itemsize) {
  if (itemsize != 1 && itemsize != 2) throw evk::InputError("rectify: 8- or 16-bit pixels expected");
  const st::RectifyMaps& m = *h.maps;
  st::check_rectify_size(m, width, height);
  const std::size_t n = static_cast<std::size_t>(height) * static_cast<std::size_t>(width);
  const auto isz = static_cast<std::size_t>(itemsize);
  const py::buffer_info si = contiguous(src, n, isz, camera ? "right" : "left", false);
  const py::buffer_info di = contiguous(out, n, isz, "out", true);
  const void* s = si.ptr;
  void* d = di.ptr;
  const int k = camera ? 1 : 0;
  py::gil_scoped_release nogil;
  const float *mx = m.x[k].data(), *my = m.y[k].data();
  if (itemsize == 1)
    st::remap_cpu(static_cast<const std::uint8_t*>(s), width, height, mx, my, static_cast<std::uint8_t*>(d));
  else
    st::remap_cpu(static_cast<const std::uint16_t*>(s), width, height, mx, my, static_cast<std::uint16_t*>(d));
}

}  // namespace

PYBIND11_MODULE(_ext, m) {
  m.doc() = "EvoKernels native module (use the evokernels package, not this module directly)";
  m.attr("__version__") = EVK_VERSION;
  static py::exception<evk::InputError> input_error(m, "InputError", PyExc_ValueError);
  static py::exception<evk::CudaError> cuda_error(m, "CudaError", PyExc_RuntimeError);
  static py::exception<evk::Refused> refused(m, "Refused", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const evk::InputError& e) {
      PyErr_SetString(input_error.ptr(), e.what());
    } catch (const evk::CudaError& e) {
      PyErr_SetString(cuda_error.ptr(), (std::string("CUDA error: ") + e.what()).c_str());
    } catch (const evk::Refused& e) {
      PyErr_SetString(refused.ptr(), e.what());
    }
  });
  m.def("environment", &environment, "Versions, GPU status, data and overlay directories");
  m.def("devices", &devices, py::arg("kernel") = "auto", "GPUs and, per kernel, the variant that would run");
  m.def("stereo_methods", &st::methods);
  m.def("stereo_disparity", &stereo_disparity);
  m.def("stereo_sgm", &stereo_sgm);
  m.def("stereo_depth", &stereo_depth);
  m.def("stereo_points", &stereo_points);
  py::class_<RigHandle, std::shared_ptr<RigHandle>>(m, "RigHandle");
  m.def("stereo_load_rig", &stereo_load_rig);
  m.def("stereo_synthetic_rig", &stereo_synthetic_rig);
  m.def("stereo_rig_fields", &stereo_rig_fields);
  m.def("stereo_rig_maps", &stereo_rig_maps);
  m.def("stereo_rectify", &stereo_rectify);
  evk_py::def_reg(m);
}
