#include "evk/gi/option_genes.hpp"

#include "text.hpp"

namespace evk::gi {

std::vector<ConfigParam> nvrtc_option_params() {
  using K = ConfigParam::Kind;
  return {
      {"nvrtc:maxrregcount", K::number, {"0", "32", "40", "48", "64", "80", "96", "128", "168", "255"}, "0",
       "--maxrregcount=N: at most N registers per thread (0: the compiler's choice)"},
      {"nvrtc:ptxas-O", K::number, {"0", "1", "2", "3"}, "3", "-Xptxas=-ON: ptxas optimisation level"},
      {"nvrtc:vectorize", K::boolean, {"false", "true"}, "false", "--extra-device-vectorization"},
  };
}

std::vector<std::string> nvrtc_options(const Config& v) {
  std::vector<std::string> o;
  auto get = [&](const char* k, const char* d) {
    auto it = v.find(k);
    return it == v.end() ? std::string(d) : it->second;
  };
  if (std::string r = get("nvrtc:maxrregcount", "0"); r != "0") o.push_back("--maxrregcount=" + r);
  if (std::string l = get("nvrtc:ptxas-O", "3"); l != "3") o.push_back("-Xptxas=-O" + l);
  if (get("nvrtc:vectorize", "false") == "true") o.push_back("--extra-device-vectorization");
  return o;
}

std::vector<std::string> source_nvrtc_options(const std::string& source) {
  static const std::string tag = "// evk-gi-nvrtc-options:";
  if (source.compare(0, tag.size(), tag) != 0) return {};
  return text::split_ws(source.substr(tag.size(), source.find('\n') - tag.size()));
}

}  // namespace evk::gi
