// `reg_deform register-many TEMPLATE LIST.tsv -o DIR`: a cohort registered to one template, each
// subject affine then non-rigid (the affine and register commands' defaults), in one process: the
// next subject is read while one registers and the last one's files are written. A subject that
// fails is reported and skipped; a finished subject (DIR/ID/done.json) is skipped on a rerun.
// Several subjects register at once: --jobs per device, on each GPU of --devices.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "cli/commands.hpp"
#include "core/affine/affine_init.hpp"
#include "core/field/resample_cpu.hpp"
#include "core/register/reg_jacobian_cpu.hpp"
#include "evk/atomic_file.hpp"
#include "evk/error.hpp"
#include "evk/queue.hpp"
#include "io/affine_text.hpp"
#include "io/nifti_io.hpp"

namespace evk::reg_deform {
namespace {
namespace fs = std::filesystem;
using clk = std::chrono::steady_clock;

struct CohortArgs {
  CommonOptions c;
  std::string templ, list, outdir, rmask, summary;  // summary: default DIR/summary.tsv
  RegisterOptions o;
  AffineOptions ao;
  int threads = 0, jobs = 1;
  std::string devices;  // empty: --device alone
  bool force = false, res_float = false;
};

struct Subject {
  std::string id;
  fs::path image, mask;
};

// LIST.tsv: "ID IMAGE [MASK]" per line (tab or spaces; paths relative to the list; '#' comments).
std::vector<Subject> read_list(const std::string& list) {
  std::ifstream in(list);
  if (!in) input_error(list, "cannot open the subject list");
  std::vector<Subject> out;
  std::set<std::string> ids;
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (const auto h = line.find('#'); h != std::string::npos) line.erase(h);
    std::istringstream f(line);
    Subject s;
    std::string image, mask;
    if (!(f >> s.id)) continue;
    if (!(f >> image)) input_error(list, "line " + std::to_string(n) + ": '" + s.id + "' has no image path");
    f >> mask;
    if (s.id.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") != std::string::npos ||
        s.id[0] == '.')
      input_error(list, "line " + std::to_string(n) + ": subject id '" + s.id + "' must be letters, digits, '.', '_' or '-'");
    if (!ids.insert(s.id).second) input_error(list, "line " + std::to_string(n) + ": subject id '" + s.id + "' twice");
    const fs::path base = fs::path(list).parent_path();
    s.image = fs::path(image).is_absolute() ? fs::path(image) : base / image;
    if (!mask.empty()) s.mask = fs::path(mask).is_absolute() ? fs::path(mask) : base / mask;
    out.push_back(s);
  }
  if (out.empty()) input_error(list, "no subjects (lines 'ID IMAGE [MASK]')");
  return out;
}

// A subject read (or why it could not be) and, after registering, what to write.
struct Job {
  std::size_t index = 0;
  Volume flo;
  StoredInfo flo_info;  // its datatype and scaling, for res.nii.gz
  Mask fmask;
  std::string error;
  Mat44 affine;
  Grid grid;
  Volume warped;  // the subject resampled into the template (on the registering device), for res.nii.gz
  double seconds = 0;
};

struct Row {  // one line of summary.tsv
  std::string status = "failed", message;
  double nmi = 0, min_jacobian = 0, seconds = 0;
  std::size_t folded = 0;
};

std::string row_text(const std::string& id, const Row& r) {
  char b[256];
  std::snprintf(b, sizeof b, "%s\t%s\t%.6f\t%.6f\t%zu\t%.3f\t", id.c_str(), r.status.c_str(), r.nmi, r.min_jacobian, r.folded,
                r.seconds);
  return b + r.message;
}

// done.json of a finished subject, read back for the summary of a rerun.
std::optional<Row> finished(const fs::path& dir) {
  std::ifstream in(dir / "done.json");
  if (!in) return std::nullopt;
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    Row r;
    r.status = "done before";
    r.nmi = j.at("nmi"), r.min_jacobian = j.at("min_jacobian"), r.folded = j.at("folded_voxels"), r.seconds = j.at("seconds");
    return r;
  } catch (const std::exception&) {
    return std::nullopt;  // an unreadable marker: the subject is done again
  }
}

// The subject's files; the marker last, so a subject cut short is redone.
Row write_subject(const CohortArgs& a, const Volume& ref, const Mask& rmask, const Job& j, const fs::path& dir) {
  fs::create_directories(dir);
  write_affine(dir / "aff.txt", j.affine);
  write_grid(dir / "cpp.nii.gz", j.grid);
  const Volume warped = write_as_floating(dir / "res.nii.gz", j.warped, j.flo_info, a.res_float,
                                          "Warped image (reg_deform register-many)");
  const JacobianStats js = voxel_jacobian_stats(ref.geo, j.grid, rmask, a.threads);
  Row r;
  r.status = "ok";
  r.nmi = nmi_like_reg_measure(ref, warped);
  r.min_jacobian = js.min;
  r.folded = js.folded;
  r.seconds = j.seconds;
  AtomicOutput done(dir / "done.json");
  std::ofstream(done.temp_path()) << nlohmann::json{{"nmi", r.nmi}, {"min_jacobian", r.min_jacobian}, {"folded_voxels", r.folded},
                                                    {"seconds", r.seconds}}
                                         .dump(2);
  done.commit();
  return r;
}

// Registers one read subject (affine from the centres, then non-rigid from it) into j.
void register_subject(const CohortArgs& a, const Plan& pa, const Plan& pr, const Volume& ref, const Mask& rmask, Job& j,
                      const std::string& name) {
  const auto t0 = clk::now();
  AffineOptions ao = a.ao;
  ao.threads = a.threads;
  j.affine = register_affine({.ref = ref, .flo = j.flo, .rmask = rmask, .fmask = j.fmask,
                              .init = init_centres(ref.geo, j.flo.geo), .options = ao},
                             pa)
                 .affine;
  RegisterOptions o = a.o;
  o.threads = a.threads;
  o.affine = j.affine;
  o.has_affine = true;
  j.grid = register_nonrigid({.ref = ref, .flo = j.flo, .rmask = rmask, .fmask = j.fmask, .options = o,
                              .names = {a.templ, name, a.rmask, ""}},
                             pr)
               .grid;
  Transformation t;  // res.nii.gz as `register --res` makes it: cubic, NaN outside, on the plan's backend
  t.kind = TransKind::grid;
  t.grid = j.grid;
  ResampleOptions ro;
  ro.interp = Interp::cubic;
  ro.pad = parse_pad("nan");
  ro.threads = a.threads;
  j.warped = resample({.ref = ref.geo, .flo = j.flo, .trans = t, .options = ro}, pr).image;
  j.seconds = std::chrono::duration<double>(clk::now() - t0).count();
}

// One registering worker per device and job: its plans (affine, non-rigid) made for its device.
struct Worker {
  Plan pa, pr;
};
std::vector<Worker> make_workers(const CohortArgs& a, const Volume& ref) {
  std::vector<Worker> w;
  auto add = [&](const CommonOptions& c) {
    const Plan pa = plan_backend(run_options(c, a.threads));
    const Plan pr = plan_verbose(c, register_request(ref.geo, a.o.spacing), "field kernel", a.threads);
    for (int k = 0; k < a.jobs; ++k) w.push_back({pa, pr});
  };
  if (a.jobs < 1) input_error("--jobs", "must be >= 1");
  add(a.c);
  if (a.devices.empty() || !w.front().pr.gpu()) {
    if (!a.devices.empty() && a.c.backend == "cpu") input_error("--devices", "needs the GPU backend");
    return w;
  }
  w.clear();
  for (const int d : parse_devices(a.devices)) {
    CommonOptions c = a.c;
    c.device = d;
    add(c);
  }
  return w;
}

void run_cohort(const CohortArgs& a) {
  const std::vector<Subject> subjects = read_list(a.list);
  if (!fs::is_directory(a.outdir)) input_error(a.outdir, "output directory does not exist");
  const fs::path sum_path = a.summary.empty() ? fs::path(a.outdir) / "summary.tsv" : fs::path(a.summary);
  { AtomicOutput probe(sum_path); }  // unwritable: refused before any work
  const Volume ref = read_volume(a.templ);
  const Mask rmask = a.rmask.empty() ? Mask{} : read_mask(a.rmask, ref.geo);
  const std::vector<Worker> workers = make_workers(a, ref);
  std::vector<Row> rows(subjects.size());
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < subjects.size(); ++i) {
    const auto f = a.force ? std::nullopt : finished(fs::path(a.outdir) / subjects[i].id);
    if (f) rows[i] = *f;
    else todo.push_back(i);
  }
  evk::Queue<Job> read_q(2), write_q(2);
  std::thread reader([&] {
    for (const std::size_t i : todo) {
      Job j;
      j.index = i;
      try {
        j.flo = read_volume(subjects[i].image);
        j.flo_info = stored_info(subjects[i].image);
        if (!subjects[i].mask.empty()) j.fmask = read_mask(subjects[i].mask, j.flo.geo);
      } catch (const std::exception& e) {
        j.error = e.what();
      }
      read_q.push(std::move(j));
    }
    read_q.close();
  });
  std::mutex rows_mu;
  std::size_t handled = 0;
  const auto start = clk::now();
  auto report = [&](std::size_t i) {  // called under rows_mu
    ++handled;
    const double el = std::chrono::duration<double>(clk::now() - start).count(), per_hour = 3600.0 * handled / std::max(1e-9, el);
    const Row& r = rows[i];
    std::fprintf(stderr, "[%zu/%zu] %s: %s%s; %.0f subjects/hour, %.0f s left\n", handled, todo.size(), subjects[i].id.c_str(),
                 r.status.c_str(), r.status == "ok" ? (", NMI " + std::to_string(r.nmi) + ", folded " + std::to_string(r.folded)).c_str()
                                                    : (": " + r.message).c_str(),
                 per_hour, (todo.size() - handled) * el / std::max<std::size_t>(1, handled));
  };
  std::thread writer([&] {
    while (auto j = write_q.pop()) {
      Row r;
      try {
        r = write_subject(a, ref, rmask, *j, fs::path(a.outdir) / subjects[j->index].id);
      } catch (const std::exception& e) {
        r.message = e.what();
      }
      std::lock_guard<std::mutex> lk(rows_mu);
      rows[j->index] = r;
      report(j->index);
    }
  });
  auto work = [&](const Worker& w) {
    bind_device(w.pr);
    while (auto j = read_q.pop()) {
      if (j->error.empty()) {
        try {
          register_subject(a, w.pa, w.pr, ref, rmask, *j, subjects[j->index].image.string());
          write_q.push(std::move(*j));
          continue;
        } catch (const std::exception& e) {
          j->error = e.what();
        }
      }
      std::lock_guard<std::mutex> lk(rows_mu);
      rows[j->index].message = j->error;
      report(j->index);
    }
  };
  std::vector<std::thread> running;
  for (std::size_t k = 1; k < workers.size(); ++k) running.emplace_back(work, std::cref(workers[k]));
  work(workers.front());
  for (auto& t : running) t.join();
  write_q.close();
  reader.join();
  writer.join();
  AtomicOutput sum(sum_path);
  std::size_t failed = 0;
  {
    std::ofstream o(sum.temp_path());
    o << "id\tstatus\tnmi\tmin_jacobian\tfolded_voxels\tseconds\tmessage\n";
    for (std::size_t i = 0; i < subjects.size(); ++i) {
      o << row_text(subjects[i].id, rows[i]) << "\n";
      failed += rows[i].status == "failed";
    }
  }
  sum.commit();
  std::printf("%zu subjects: %zu registered now, %zu done before, %zu failed; %s\n", subjects.size(), todo.size() - failed,
              subjects.size() - todo.size(), failed, sum_path.string().c_str());
  if (failed) throw InputError(std::to_string(failed) + " of " + std::to_string(subjects.size()) + " subjects failed (see " +
                               sum_path.string() + ")");
}

}  // namespace

void add_cohort_command(CLI::App& app) {
  auto a = std::make_shared<CohortArgs>();
  auto* cmd = app.add_subcommand("register-many", "A cohort registered to one template: affine then non-rigid per subject, "
                                                  "in one process, failed subjects skipped, finished ones kept on a rerun");
  cmd->add_option("TEMPLATE", a->templ, "Template (reference) image (NIfTI)")->required();
  cmd->add_option("LIST", a->list, "Subjects: 'ID IMAGE [MASK]' per line (paths relative to the list)")->required();
  cmd->add_option("-o,--output-dir", a->outdir, "Output directory (must exist): ID/{aff.txt,cpp.nii.gz,res.nii.gz,done.json}, "
                                                "summary.tsv")->required();
  cmd->add_option("--rmask", a->rmask, "Template mask (nonzero = used)");
  cmd->add_option("--summary", a->summary, "The summary table (default DIR/summary.tsv)");
  add_grid_options(cmd, a->o);
  cmd->add_flag("--res-float", a->res_float, "Write res.nii.gz as float32 whatever the subject's datatype");
  cmd->add_flag("--force", a->force, "Register every subject again, also those with a done.json");
  cmd->add_option("--threads", a->threads, "CPU threads (default: all cores)");
  cmd->add_option("--devices", a->devices, "GPUs that register subjects: all, or a list like 0,1 (default: --device)");
  cmd->add_option("--jobs", a->jobs, "Subjects registered at once on each device")->capture_default_str();
  add_common_options(cmd, a->c);
  cmd->callback([a] { run_cohort(*a); });
}

}  // namespace evk::reg_deform
