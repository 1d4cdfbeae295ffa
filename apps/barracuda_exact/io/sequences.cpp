#include "io/sequences.hpp"

#include <htslib/bgzf.h>
#include <htslib/hts_log.h>
#include <htslib/kseq.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "evk/error.hpp"
#include "io/read_rules.hpp"

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
using read_rules::printable;
using read_rules::shown;

// A record name for a message: long names (a 100 MB header line) are cut.
std::string shown(const kstring_t& k) { return k.s ? shown(std::string_view(k.s, k.l)) : ""; }

struct SeqFile {
  Input in;
  kseq_t* ks = nullptr;
  char format = 0;  // '>' FASTA or '@' FASTQ: the first record's header character
  explicit SeqFile(const std::string& path) {
    hts_set_log_level(HTS_LOG_OFF);  // libraries do not print; errors become InputErrors
    in.fp = path == "-" ? bgzf_dopen(0, "r") : bgzf_open(path.c_str(), "r");
    if (!in.fp) input_error(path, std::string("cannot open: ") + std::strerror(errno));
    ks = kseq_init(&in);
  }
  ~SeqFile() {
    if (ks) kseq_destroy(ks);
    if (in.fp) bgzf_close(in.fp);
  }
  // kseq_read with our error reporting; false at a clean end of file. kseq is lenient where a cut
  // or foreign file must be an error: it skips any text before a header line, and it returns a
  // FASTQ record that stops before its '+' line (a file cut after the sequence line, or a header
  // with nothing after it) as a FASTA record. Both are checked here.
  bool read(const std::string& path, std::uint64_t record) {
    if (ks->last_char == 0) {  // find the next header ourselves: only blank lines may come first
      int c;
      while ((c = ks_getc(ks->f)) == '\n' || c == '\r') {
      }
      if (in.error) input_error(path, "damaged or truncated compressed data near record " + std::to_string(record + 1));
      if (c == -1) return false;
      if (c != '>' && c != '@') read_rules::not_a_header(path, record, static_cast<char>(c));
      ks->last_char = c;
    }
    const char header = static_cast<char>(ks->last_char);
    if (!format) format = header;
    if (header != format) read_rules::mixed_formats(path, record, header, format);
    const int r = kseq_read(ks);
    if (in.error) input_error(path, "damaged or truncated compressed data near record " + std::to_string(record + 1));
    if (r == -1) read_rules::no_name(path, record);
    const std::string_view name = ks->name.s ? std::string_view(ks->name.s, ks->name.l) : std::string_view();
    if (r == -2) read_rules::quality_length(path, record, name, ks->qual.l, ks->seq.l);
    if (r < 0) input_error(path, read_rules::record_named(record, name) + ": malformed");
    // kseq leaves last_char at 0 only after reading a '+' line and the qualities; otherwise it holds
    // the next record's header character, or a stale one when the record ended at the end of the file
    const bool had_quality = ks->last_char == 0;
    if (!had_quality && ks_eof(ks->f)) ks->last_char = 0;
    if (format == '@' && !had_quality) read_rules::no_quality(path, record, name);
    if (format == '>' && had_quality) read_rules::quality_in_fasta(path, record, name);
    return true;
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
    if (src.format != '>') input_error(path, "is FASTQ, not a FASTA reference");
    RefSeq r;
    if (s->name.l == 0) input_error(path, "record " + std::to_string(ref.size() + 1) + ": empty name");
    r.name.assign(s->name.s, s->name.l);
    const std::string shown_name = shown(s->name);
    if (s->comment.l) r.comment.assign(s->comment.s, s->comment.l);
    // a contig without bases is kept, as bwa index keeps it (an .ann entry of length 0), unless the
    // file ends at its header (below)
    static const auto iupac = [] {  // is_iupac as a table: one branch-free pass, the position only on a failure
      std::array<std::uint8_t, 256> t{};
      for (int c = 0; c < 256; ++c) t[static_cast<std::size_t>(c)] = is_iupac(static_cast<char>(c)) ? 1 : 0;
      return t;
    }();
    std::uint8_t all = 1;
    for (std::size_t i = 0; i < s->seq.l; ++i) all &= iupac[static_cast<unsigned char>(s->seq.s[i])];
    if (!all)
      for (std::size_t i = 0; i < s->seq.l; ++i)
        if (!is_iupac(s->seq.s[i]))
          input_error(path, "contig " + shown_name + " position " + std::to_string(i + 1) + ": character " +
                                printable(s->seq.s[i]) + " is not an IUPAC nucleotide code");
    r.seq.assign(s->seq.s, s->seq.l);
    ref.push_back(std::move(r));
  }
  if (ref.empty()) input_error(path, "no FASTA records (empty or not a FASTA file)");
  if (ref.back().seq.empty())  // a file cut after a header line looks just like this: refused
    input_error(path, "contig " + ref.back().name + " has no bases (the file ends at its header: truncated?)");
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
    const std::string_view name(s->name.s, s->name.l), seq(s->seq.s, s->seq.l);
    const char* qual = impl_->format == '@' ? (s->qual.s ? s->qual.s : "") : nullptr;
    read_rules::check_record(path_, n_, name, seq, qual, max_len);
    b.add(name, seq, s->qual.l ? s->qual.s : nullptr);
    bases += s->seq.l;
    ++n_;
  }
  if (n_ == 0) read_rules::no_reads(path_);
  return b.size() > 0;
}

}  // namespace evk::barracuda_exact
