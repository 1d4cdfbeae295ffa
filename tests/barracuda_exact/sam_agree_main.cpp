// bc_sam_agree: our SAM against bwa's, record by record (tests/barracuda_exact/sam_agree.hpp).
//   bc_sam_agree [--label L] [--ref REF.fa] [--list N] OURS.sam BWA.sam
// Prints one markdown row (| label | records | identical | core identical | ties | unexplained |),
// the fields that differ, and up to N differing records (default 20). Exit 1 on unexplained
// differences or when the files do not pair up record by record.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "core/index.hpp"
#include "io/sequences.hpp"
#include "sam_agree.hpp"

int main(int argc, char** argv) {
  std::string label = "reads", ref;
  std::size_t list = 20;
  int i = 1;
  for (; i + 1 < argc && argv[i][0] == '-' && argv[i][1] == '-'; i += 2) {
    if (!std::strcmp(argv[i], "--label")) label = argv[i + 1];
    else if (!std::strcmp(argv[i], "--ref")) ref = argv[i + 1];
    else if (!std::strcmp(argv[i], "--list")) list = std::stoul(argv[i + 1]);
    else break;
  }
  if (argc - i != 2) {
    std::fprintf(stderr, "usage: bc_sam_agree [--label L] [--ref REF.fa] [--list N] OURS.sam BWA.sam\n");
    return 2;
  }
  auto slurp = [](const char* p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream o;
    o << in.rdbuf();
    return o.str();
  };
  std::map<std::string, std::string> contigs;
  if (!ref.empty())
    for (const auto& s : evk::barracuda_exact::read_reference(ref)) {
      std::string up;
      for (char c : s.seq) up += "ACGTN"[evk::barracuda_exact::base_code(c)];
      contigs[s.name] = up;
    }
  const bct::Agreement a = bct::sam_agree(slurp(argv[i]), slurp(argv[i + 1]), contigs);
  if (!a.error.empty()) {
    std::fprintf(stderr, "bc_sam_agree: %s\n", a.error.c_str());
    return 1;
  }
  std::printf("%s\n", bct::agreement_row(label, a).c_str());
  if (!a.by_field.empty()) {
    std::printf("  differing fields:");
    for (const auto& [k, v] : a.by_field) std::printf(" %s %zu", k.c_str(), v);
    std::printf("\n");
  }
  for (std::size_t k = 0; k < a.listing.size() && k < list; ++k) std::printf("  %s\n", a.listing[k].c_str());
  return a.unexplained ? 1 : 0;
}
