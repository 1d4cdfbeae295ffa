// Where batch and video find their frames: a pair list or a directory of pairs (batch), numbered
// frames, two directories or video files (video).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>

#include "evk/error.hpp"
#include "cli/commands.hpp"

namespace stereo_cli {

namespace {
struct Pair {
  fs::path left, right;
  std::string name;
};

std::vector<Pair> list_pairs(const fs::path& in) {
  std::vector<Pair> pairs;
  std::error_code ec;
  if (!fs::exists(in, ec)) evk::input_error(in.string(), "no such file or directory");
  if (fs::is_directory(in, ec)) {
    // <prefix>L.<ext> with a sibling <prefix>R.<ext>, anywhere below the directory.
    for (auto it = fs::recursive_directory_iterator(in, ec); it != fs::recursive_directory_iterator(); ++it) {
      if (!it->is_regular_file()) continue;
      const fs::path p = it->path();
      std::string stem = p.stem().string();
      if (stem.empty() || stem.back() != 'L') continue;
      fs::path r = p.parent_path() / (stem.substr(0, stem.size() - 1) + "R" + p.extension().string());
      if (!fs::exists(r)) continue;
      std::string name = fs::relative(p.parent_path(), in).string();
      if (name == ".") name.clear();
      std::replace(name.begin(), name.end(), '/', '_');
      std::string pre = stem.substr(0, stem.size() - 1);
      name = name.empty() ? pre : (pre.empty() ? name : name + "_" + pre);
      if (name.empty()) name = "pair";
      pairs.push_back({p, r, name});
    }
    std::sort(pairs.begin(), pairs.end(), [](const Pair& a, const Pair& b) { return a.left < b.left; });
    if (pairs.empty()) evk::input_error(in.string(), "no <name>L.<ext> / <name>R.<ext> pairs found");
  } else {
    std::ifstream f(in);
    if (!f) evk::input_error(in.string(), "cannot open");
    std::string line;
    int n = 0;
    while (std::getline(f, line)) {
      ++n;
      std::istringstream ss(line);
      std::string l, r, name;
      if (!(ss >> l) || l[0] == '#') continue;
      if (!(ss >> r)) evk::input_error(in.string() + ":" + std::to_string(n), "expected 'LEFT RIGHT [NAME]'");
      fs::path base = in.parent_path();
      fs::path lp = fs::path(l).is_absolute() ? fs::path(l) : base / l;
      fs::path rp = fs::path(r).is_absolute() ? fs::path(r) : base / r;
      if (!(ss >> name)) name = "pair" + std::to_string(pairs.size() + 1);
      pairs.push_back({lp, rp, name});
    }
    if (pairs.empty()) evk::input_error(in.string(), "no pairs listed");
  }
  return pairs;
}

// printf-style pattern with one integer conversion (%d, %05d, ...)
bool is_pattern(const std::string& s) { return s.find('%') != std::string::npos; }
std::string expand(const std::string& pattern, int i) {
  char buf[4096];
  std::snprintf(buf, sizeof buf, pattern.c_str(), i);
  return buf;
}
}  // namespace

FrameSource batch_frames(const fs::path& input) {
  FrameSource src;
  for (const Pair& p : list_pairs(input)) {
    src.left.push_back(p.left);
    src.right.push_back(p.right);
    src.names.push_back(p.name);
  }
  return src;
}

namespace {
// Video files: frames --first (default 0) on, at most --count; named <left file's stem>_<frame>.
FrameSource video_file_frames(const VideoCmd& c) {
  FrameSource src;
  src.video = std::make_shared<evk::stereo::VideoPair>(c.left, c.right);
  src.left.push_back(c.left);
  src.right.push_back(c.right);
  src.first = std::max(c.first, 0);
  const int n = src.video->frames();
  if (src.first >= n)
    evk::input_error(c.left, "has " + std::to_string(n) + " frames; --first " + std::to_string(src.first) + " is past them");
  const std::string stem = fs::path(c.left).stem().string();
  for (int i = src.first; i < n && (c.count <= 0 || static_cast<int>(src.names.size()) < c.count); ++i) {
    char num[16];
    std::snprintf(num, sizeof num, "%06d", i);
    src.names.push_back(stem + "_" + num);
  }
  return src;
}
}  // namespace

FrameSource video_frames(const VideoCmd& c) {
  FrameSource src;
  std::error_code ec;
  if (!is_pattern(c.left) && (c.right.empty() || evk::stereo::looks_like_video(c.left)) &&
      !fs::is_directory(c.left, ec)) {
    if (!evk::stereo::looks_like_video(c.left) && !fs::exists(c.left, ec)) evk::input_error(c.left, "no such file or directory");
    if (!evk::stereo::looks_like_video(c.left))
      evk::input_error(c.left, "one input is a side-by-side video file (.avi, .mp4, .mkv, ...); frames need LEFT and RIGHT");
    if (!c.right.empty() && !evk::stereo::looks_like_video(c.right))
      evk::input_error(c.right, "LEFT is a video file, so RIGHT must be one too");
    return video_file_frames(c);
  }
  if (c.right.empty()) evk::input_error(c.left, "RIGHT is missing (only a side-by-side video file comes alone)");
  if (is_pattern(c.left) != is_pattern(c.right))
    evk::input_error(c.left + ", " + c.right, "give two directories or two numbered patterns");
  if (is_pattern(c.left)) {
    static const std::regex one_number("^[^%]*%(0[0-9]{1,2})?d[^%]*$");
    for (const std::string& p : {c.left, c.right})
      if (!std::regex_match(p, one_number)) evk::input_error(p, "a numbered pattern needs exactly one %d (or %0Nd)");
    int i = c.first;
    if (i < 0) i = fs::exists(expand(c.left, 0)) ? 0 : 1;  // frames from 0, else from 1
    for (; c.count <= 0 || static_cast<int>(src.left.size()) < c.count; ++i) {
      const fs::path l = expand(c.left, i), r = expand(c.right, i);
      if (!fs::exists(l, ec)) break;
      if (!fs::exists(r, ec)) evk::input_error(r.string(), "right frame missing (its left frame exists)");
      src.left.push_back(l);
      src.right.push_back(r);
      src.names.push_back(fs::path(expand(c.left, i)).stem().string());
    }
    if (src.left.empty()) evk::input_error(expand(c.left, i), "no such frame");
    return src;
  }
  for (const std::string& d : {c.left, c.right})
    if (!fs::is_directory(d, ec)) evk::input_error(d, "not a directory (or give numbered patterns with %d)");
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(c.left, ec))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& l : files) {
    if (c.count > 0 && static_cast<int>(src.left.size()) >= c.count) break;
    const fs::path r = fs::path(c.right) / l.filename();
    if (!fs::exists(r, ec)) evk::input_error(r.string(), "no right frame of this name");
    src.left.push_back(l);
    src.right.push_back(r);
    src.names.push_back(l.stem().string());
  }
  if (src.left.empty()) evk::input_error(c.left, "no frames");
  return src;
}

}  // namespace stereo_cli
