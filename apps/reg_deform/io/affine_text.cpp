#include "io/affine_text.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <vector>

#include "evk/atomic_file.hpp"
#include "evk/error.hpp"

namespace evk::reg_deform {

namespace {

// One whitespace-separated token -> double, the whole token or an error.
double parse_number(const std::string& tok, const std::string& what, int line) {
  double v = 0;
  const char* b = tok.data();
  const char* e = b + tok.size();
  if (*b == '+') ++b;  // from_chars takes no leading '+'
  const auto r = std::from_chars(b, e, v);
  if (r.ec != std::errc() || r.ptr != e)
    input_error(what, "line " + std::to_string(line) + ": '" + tok + "' is not a number (need 4 rows of 4 numbers)");
  if (!std::isfinite(v)) input_error(what, "line " + std::to_string(line) + ": '" + tok + "' is not finite");
  return v;
}

}  // namespace

void check_affine(const Mat44& m, const std::string& what) {
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      if (!std::isfinite(m.m[i][j])) input_error(what, "affine matrix holds NaN or Inf");
  if (m.m[3][0] != 0 || m.m[3][1] != 0 || m.m[3][2] != 0 || m.m[3][3] != 1)
    input_error(what, "last row of the affine matrix must be 0 0 0 1");
  // Singular: the 3x3 part's determinant is tiny relative to the size of its columns.
  const auto& a = m.m;
  const double det = a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) -
                     a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
                     a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
  double scale = 1;
  for (int c = 0; c < 3; ++c)
    scale *= std::sqrt(a[0][c] * a[0][c] + a[1][c] * a[1][c] + a[2][c] * a[2][c]);
  if (!(scale > 0) || !(std::fabs(det) > 1e-9 * scale))
    input_error(what, "affine matrix is singular (determinant " + std::to_string(det) + ")");
}

Mat44 parse_affine(const std::string& text, const std::string& what) {
  std::istringstream in(text);
  std::string line;
  std::vector<std::vector<double>> rows;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::istringstream ls(line);
    std::vector<double> row;
    std::string tok;
    while (ls >> tok) row.push_back(parse_number(tok, what, lineno));
    if (row.empty()) continue;  // blank lines (e.g. a trailing one) carry nothing
    if (row.size() != 4)
      input_error(what, "line " + std::to_string(lineno) + " holds " + std::to_string(row.size()) +
                            " numbers, need 4 (a 4x4 matrix)");
    rows.push_back(std::move(row));
    if (rows.size() > 4) input_error(what, "more than 4 rows (need a 4x4 matrix)");
  }
  if (rows.size() != 4)
    input_error(what, rows.empty() ? "empty affine file (need a 4x4 matrix)"
                                   : "holds " + std::to_string(rows.size()) + " rows, need 4 (truncated?)");
  Mat44 m;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) m.m[i][j] = rows[i][j];
  check_affine(m, what);
  return m;
}

Mat44 read_affine(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) input_error(path.string(), "no such file");
  if (std::filesystem::is_directory(path, ec)) input_error(path.string(), "is a directory, not an affine text file");
  std::ifstream in(path, std::ios::binary);
  if (!in) input_error(path.string(), "cannot open affine matrix file");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) input_error(path.string(), "read error");
  const std::string text = ss.str();
  if (text.find('\0') != std::string::npos) input_error(path.string(), "binary data, not an affine text file");
  return parse_affine(text, path.string());
}

std::string format_affine(const Mat44& m) {
  std::string s;
  char buf[32];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const double v = m.m[i][j] == 0 ? 0.0 : m.m[i][j];  // no "-0"
      const auto r = std::to_chars(buf, buf + sizeof buf, v);
      s.append(buf, r.ptr);
      s.push_back(j == 3 ? '\n' : ' ');
    }
  return s;
}

void write_affine(const std::filesystem::path& path, const Mat44& m) {
  check_affine(m, path.string());
  AtomicOutput out(path);
  {
    std::ofstream f(out.temp_path(), std::ios::binary);
    if (!f) input_error(path.string(), "cannot open for writing");
    f << format_affine(m);
    f.flush();
    if (!f) input_error(path.string(), "write failed (disk full or not writable?)");
  }
  out.commit();
}

}  // namespace evk::reg_deform
