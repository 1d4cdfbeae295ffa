#include "io/sequences.hpp"

#include <htslib/bgzf.h>
#include <htslib/hts_log.h>
#include <htslib/kseq.h>

#include "evk/error.hpp"

namespace evk::barracuda_exact {
namespace {

// A BGZF handle that remembers a read error (kseq treats a failing read as the end of the file).
struct Input {
  BGZF* fp = nullptr;
  bool error = false;
};
int input_read(Input* in, void* buf, int n) {
  const ssize_t r = bgzf_read(in->fp, buf, static_cast<size_t>(n));
  if (r < 0) {
    in->error = true;
    return 0;
  }
  return static_cast<int>(r);
}

}  // namespace

KSEQ_INIT(Input*, input_read)

namespace {
struct SeqFile {
  Input in;
  kseq_t* ks = nullptr;
  explicit SeqFile(const std::string& path) {
    hts_set_log_level(HTS_LOG_OFF);  // libraries do not print; errors become InputErrors
    in.fp = path == "-" ? bgzf_dopen(0, "r") : bgzf_open(path.c_str(), "r");
    if (!in.fp) input_error(path, "cannot open");
    ks = kseq_init(&in);
  }
  ~SeqFile() {
    if (ks) kseq_destroy(ks);
    if (in.fp) bgzf_close(in.fp);
  }
  // kseq_read with our error reporting; false at a clean end of file.
  bool read(const std::string& path, std::uint64_t record) {
    const int r = kseq_read(ks);
    if (in.error) input_error(path, "damaged or truncated compressed data near record " + std::to_string(record + 1));
    if (r >= 0) return true;
    if (r == -1) return false;
    if (r == -2)
      input_error(path, "record " + std::to_string(record + 1) + " (" + std::string(ks->name.s ? ks->name.s : "") +
                            "): quality length differs from sequence length");
    input_error(path, "record " + std::to_string(record + 1) + ": malformed");
  }
};
}  // namespace

struct ReadSource::Impl : SeqFile {
  using SeqFile::SeqFile;
};

std::vector<RefSeq> read_reference(const std::string& path) {
  SeqFile src(path);
  std::vector<RefSeq> ref;
  while (src.read(path, ref.size())) {
    const kseq_t* s = src.ks;
    if (s->qual.l > 0) input_error(path, "is FASTQ, not a FASTA reference");
    RefSeq r;
    r.name.assign(s->name.s, s->name.l);
    if (s->comment.l) r.comment.assign(s->comment.s, s->comment.l);
    if (s->seq.l == 0) input_error(path, "contig " + r.name + " has no bases");
    for (std::size_t i = 0; i < s->seq.l; ++i)
      if (!is_iupac(s->seq.s[i]))
        input_error(path, "contig " + r.name + " position " + std::to_string(i + 1) + ": character '" +
                              std::string(1, s->seq.s[i]) + "' is not an IUPAC nucleotide code");
    r.seq.assign(s->seq.s, s->seq.l);
    ref.push_back(std::move(r));
  }
  if (ref.empty()) input_error(path, "no FASTA records (empty or not a FASTA file)");
  return ref;
}

ReadSource::ReadSource(const std::string& path) : impl_(std::make_unique<Impl>(path)), path_(path) {}
ReadSource::~ReadSource() = default;

bool ReadSource::next(ReadBatch& b, std::size_t max_reads, std::size_t max_bases, std::uint32_t max_len) {
  b.clear();
  b.first = n_;
  std::size_t bases = 0;
  while (b.size() < max_reads && bases < max_bases) {
    if (!impl_->read(path_, n_)) break;
    const kseq_t* s = impl_->ks;
    if (s->seq.l > max_len)
      input_error(path_, "read " + std::string(s->name.s) + " has " + std::to_string(s->seq.l) +
                             " bases; at most " + std::to_string(max_len) + " are supported");
    check_read_name(path_, n_ + 1, std::string_view(s->name.s, s->name.l));
    b.add(std::string_view(s->name.s, s->name.l), std::string_view(s->seq.s, s->seq.l), s->qual.l ? s->qual.s : nullptr);
    bases += s->seq.l;
    ++n_;
  }
  return b.size() > 0;
}

}  // namespace evk::barracuda_exact
