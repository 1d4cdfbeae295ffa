#include "io/sequences.hpp"

#include <htslib/bgzf.h>
#include <htslib/hts_log.h>
#include <htslib/kseq.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

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
std::string printable(char c) {
  if (c >= 33 && c <= 126) return std::string("'") + c + "'";
  char b[8];
  std::snprintf(b, sizeof b, "0x%02x", static_cast<unsigned char>(c));
  return b;
}

// A record name for a message: long names (a 100 MB header line) are cut.
std::string shown(const kstring_t& k) {
  if (!k.s) return "";
  if (k.l <= 80) return std::string(k.s, k.l);
  return std::string(k.s, 80) + "...";
}

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
    const std::string where = "record " + std::to_string(record + 1);
    if (ks->last_char == 0) {  // find the next header ourselves: only blank lines may come first
      int c;
      while ((c = ks_getc(ks->f)) == '\n' || c == '\r') {
      }
      if (in.error) input_error(path, "damaged or truncated compressed data near " + where);
      if (c == -1) return false;
      if (c == 0x1f && record == 0) input_error(path, "damaged or truncated gzip header");
      if (c != '>' && c != '@')
        input_error(path, record == 0 ? "not a FASTA or FASTQ file (starts with " + printable(static_cast<char>(c)) + ")"
                                      : "unexpected text after record " + std::to_string(record) +
                                            " (a '@' or '>' header line expected)");
      ks->last_char = c;
    }
    const char header = static_cast<char>(ks->last_char);
    if (!format) format = header;
    if (header != format)
      input_error(path, where + ": a " + (header == '>' ? "FASTA" : "FASTQ") + " record in a " +
                            (format == '>' ? "FASTA" : "FASTQ") + " file");
    const int r = kseq_read(ks);
    if (in.error) input_error(path, "damaged or truncated compressed data near " + where);
    if (r == -1) input_error(path, where + ": header line without a name (truncated?)");
    const std::string name = where + " (" + shown(ks->name) + ")";
    if (r == -2)
      input_error(path, name + ": quality length differs from sequence length (" + std::to_string(ks->qual.l) +
                            " qualities for " + std::to_string(ks->seq.l) + " bases" +
                            (ks->qual.l < ks->seq.l ? "; truncated?)" : ")"));
    if (r < 0) input_error(path, name + ": malformed");
    // kseq leaves last_char at 0 only after reading a '+' line and the qualities; otherwise it holds
    // the next record's header character, or a stale one when the record ended at the end of the file
    const bool had_quality = ks->last_char == 0;
    if (!had_quality && ks_eof(ks->f)) ks->last_char = 0;
    if (format == '@' && !had_quality)
      input_error(path, name + ": no '+' line and qualities (truncated FASTQ?)");
    if (format == '>' && had_quality) input_error(path, name + ": a '+' quality line in a FASTA file");
    if (ks->name.l == 0) input_error(path, where + ": empty name");
    for (std::size_t i = 0; i < ks->qual.l; ++i)
      if (ks->qual.s[i] < 33 || ks->qual.s[i] > 126)
        input_error(path, name + ": quality character " + printable(ks->qual.s[i]) + " outside '!'..'~'");
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
    r.name.assign(s->name.s, s->name.l);
    const std::string shown_name = shown(s->name);
    if (s->comment.l) r.comment.assign(s->comment.s, s->comment.l);
    if (s->seq.l == 0) input_error(path, "contig " + shown_name + " has no bases");
    for (std::size_t i = 0; i < s->seq.l; ++i)
      if (!is_iupac(s->seq.s[i]))
        input_error(path, "contig " + shown_name + " position " + std::to_string(i + 1) + ": character " +
                              printable(s->seq.s[i]) + " is not an IUPAC nucleotide code");
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
  std::size_t bases = 0;
  while (b.size() < max_reads && bases < max_bases) {
    if (!impl_->read(path_, n_)) break;
    const kseq_t* s = impl_->ks;
    if (s->seq.l > max_len)
      input_error(path_, "read " + shown(s->name) + " has " + std::to_string(s->seq.l) +
                             " bases; at most " + std::to_string(max_len) + " are supported");
    const std::string where = "record " + std::to_string(n_ + 1) + " (" + shown(s->name) + ")";
    if (s->seq.l == 0 && impl_->format == '>') input_error(path_, where + ": no bases (truncated FASTA?)");
    for (std::size_t i = 0; i < s->seq.l; ++i)
      if (!is_iupac(s->seq.s[i]) && s->seq.s[i] != '.')
        input_error(path_, where + " position " + std::to_string(i + 1) + ": character " + printable(s->seq.s[i]) +
                               " is not a base (IUPAC code or '.')");
    std::string name(s->name.s, s->name.l);
    if (name.size() > 2 && name[name.size() - 2] == '/' && (name.back() == '1' || name.back() == '2'))
      name.resize(name.size() - 2);  // bwa trims /1 and /2
    if (name.size() > 254)
      input_error(path_, "record " + std::to_string(n_ + 1) + ": name of " + std::to_string(name.size()) +
                             " characters; SAM allows at most 254");
    b.name.push_back(std::move(name));
    b.seq.emplace_back(s->seq.s, s->seq.l);
    b.qual.emplace_back(s->qual.l ? std::string(s->qual.s, s->qual.l) : std::string());
    bases += s->seq.l;
    ++n_;
  }
  if (n_ == 0) input_error(path_, "no reads (empty file)");
  return b.size() > 0;
}

}  // namespace evk::barracuda_exact
