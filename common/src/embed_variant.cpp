#include "evk/embed_variant.hpp"

#if defined(EVK_HAVE_CUDA)
#include <cstdio>
#include <fstream>

namespace evk {
int embed_variant_main(int argc, char** argv, const std::function<NvrtcRequest(const Variant&)>& request) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s GENOME OUT.cu OUT.opts\n", argc > 0 ? argv[0] : "embed_variant");
    return 2;
  }
  try {
    const Variant v = read_genome_file(argv[1]);
    const NvrtcRequest req = request(v);
    std::ofstream cu(argv[2], std::ios::binary), opts(argv[3], std::ios::binary);
    cu << req.source;
    for (const auto& o : req.options) opts << o << "\n";
    cu.close();
    opts.close();
    if (!cu || !opts) {
      std::fprintf(stderr, "%s: cannot write %s or %s\n", argv[0], argv[2], argv[3]);
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 2;
  }
}
}  // namespace evk
#endif
