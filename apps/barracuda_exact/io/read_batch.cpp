#include "io/read_batch.hpp"

#include <cstring>

#include "evk/error.hpp"

namespace evk::barracuda_exact {

namespace {
// base_code as a table (the hot loop of parsing)
struct CodeTable {
  std::uint8_t t[256];
  CodeTable() {
    for (int c = 0; c < 256; ++c) t[c] = static_cast<std::uint8_t>(base_code(static_cast<char>(c)));
  }
};
const CodeTable kCodes;
}  // namespace

std::string_view trim_mate_suffix(std::string_view n) {
  if (n.size() > 2 && n[n.size() - 2] == '/' && (n.back() == '1' || n.back() == '2')) n.remove_suffix(2);
  return n;
}

void check_read_name(const std::string& path, std::uint64_t record, std::string_view name) {
  if (trim_mate_suffix(name).size() > 254)
    input_error(path, "record " + std::to_string(record) + " (" + std::string(name.substr(0, 40)) +
                          "...): read name longer than 254 characters (the SAM/BAM limit)");
}

void ReadBatch::clear() {
  first = 0;
  names.clear();
  name_end.clear();
  bases.clear();
  quals.clear();
  has_qual.clear();
  codes.clear();
}

void ReadBatch::add(std::string_view name, std::string_view seq, const char* qual) {
  const std::string_view n = trim_mate_suffix(name);
  names.append(n);
  name_end.push_back(static_cast<std::uint32_t>(names.size()));
  const std::size_t off = bases.size();
  bases.append(seq);
  quals.resize(bases.size());
  if (qual && !seq.empty()) std::memcpy(quals.data() + off, qual, seq.size());
  has_qual.push_back(qual && !seq.empty());
  codes.add(seq.data(), seq.size());
}

void parse_batch(const ScanBatch& s, ReadBatch& out, TaskPool& pool) {
  const std::size_t n = s.recs.size();
  out.clear();
  out.first = s.first;
  out.name_end.resize(n);
  out.has_qual.resize(n);
  out.codes.offset.resize(n);
  out.codes.len.resize(n);
  std::size_t nb = 0, bb = 0;
  for (std::size_t i = 0; i < n; ++i) {  // offsets (serial: two sums per read)
    const RecordSpan& r = s.recs[i];
    nb += trim_mate_suffix(std::string_view(r.name, r.name_len)).size();
    out.name_end[i] = static_cast<std::uint32_t>(nb);
    out.codes.offset[i] = bb;
    out.codes.len[i] = r.seq_len;
    bb += r.seq_len;
  }
  out.names.resize(nb);
  out.bases.resize(bb);
  out.quals.resize(bb);
  out.codes.codes.resize(bb);
  pool.parallel_for(n, 4096, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) {
      const RecordSpan& r = s.recs[i];
      const std::string_view nm = trim_mate_suffix(std::string_view(r.name, r.name_len));
      std::memcpy(out.names.data() + (i ? out.name_end[i - 1] : 0), nm.data(), nm.size());
      const std::size_t off = out.codes.offset[i];
      if (r.seq_len) std::memcpy(out.bases.data() + off, r.seq, r.seq_len);
      std::uint8_t* code = out.codes.codes.data() + off;
      for (std::uint32_t j = 0; j < r.seq_len; ++j) code[j] = kCodes.t[static_cast<unsigned char>(r.seq[j])];
      out.has_qual[i] = r.qual && r.seq_len > 0;
      if (r.qual && r.seq_len) std::memcpy(out.quals.data() + off, r.qual, r.seq_len);
    }
  });
}

}  // namespace evk::barracuda_exact
