#include "io/read_batch.hpp"

#include <atomic>
#include <cstring>
#include <exception>
#include <mutex>
#include <stdexcept>

#include "evk/error.hpp"
#include "io/read_rules.hpp"

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

void check_batch(const std::string& path, const ScanBatch& s, TaskPool& pool) {
  const std::size_t n = s.recs.size();
  std::mutex m;
  std::atomic<std::size_t> first_bad{n};
  std::exception_ptr err;
  pool.parallel_for(n, 4096, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) {
      if (i > first_bad.load(std::memory_order_relaxed)) return;  // an earlier record is already refused
      const RecordSpan& r = s.recs[i];
      try {
        read_rules::check_record(path, s.first + i, std::string_view(r.name, r.name_len),
                                 std::string_view(r.seq, r.seq_len), r.qual, s.max_len);
      } catch (const InputError&) {
        std::lock_guard<std::mutex> l(m);
        if (i < first_bad.load()) {
          first_bad = i;
          err = std::current_exception();
        }
        return;
      }
    }
  });
  if (err) std::rethrow_exception(err);
  if (s.error) std::rethrow_exception(s.error);
}

std::size_t ReadBatch::drop_empty() {
  const std::size_t n = size();
  std::size_t k = 0;
  for (std::size_t i = 0; i < n; ++i) k += codes.len[i] > 0;
  if (k == n) return 0;
  std::string kept_names;
  std::size_t j = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (codes.len[i] == 0) continue;
    kept_names.append(name(i));
    name_end[j] = static_cast<std::uint32_t>(kept_names.size());
    has_qual[j] = has_qual[i];
    codes.offset[j] = codes.offset[i];
    codes.len[j] = codes.len[i];
    ++j;
  }
  names.swap(kept_names);
  name_end.resize(k);
  has_qual.resize(k);
  codes.offset.resize(k);
  codes.len.resize(k);
  return n - k;
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
  append(trim_mate_suffix(name), seq, qual);
}

void ReadBatch::add(const ReadBatch& o, std::size_t i) { append(o.name(i), o.seq(i), o.has_qual[i] ? o.qual(i).data() : nullptr); }

void ReadBatch::append(std::string_view n, std::string_view seq, const char* qual) {
  names.append(n);
  name_end.push_back(static_cast<std::uint32_t>(names.size()));
  const std::size_t off = bases.size();
  bases.append(seq);
  quals.resize(bases.size());
  if (qual && !seq.empty()) std::memcpy(quals.data() + off, qual, seq.size());
  has_qual.push_back(qual && !seq.empty());
  codes.add(seq.data(), seq.size());
}

namespace {
// Fills out with the records rec(0..n-1) (the reads of one file, or two files interleaved).
template <class Rec>
void fill(std::size_t n, const Rec& rec, ReadBatch& out, TaskPool& pool) {
  out.name_end.resize(n);
  out.has_qual.resize(n);
  out.codes.offset.resize(n);
  out.codes.len.resize(n);
  std::size_t nb = 0, bb = 0;
  for (std::size_t i = 0; i < n; ++i) {  // offsets (serial: two sums per read)
    const RecordSpan& r = rec(i);
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
      const RecordSpan& r = rec(i);
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
}  // namespace

void parse_batch(const std::string& path, const ScanBatch& s, ReadBatch& out, TaskPool& pool) {
  check_batch(path, s, pool);
  out.clear();
  out.first = s.first;
  fill(s.recs.size(), [&](std::size_t i) -> const RecordSpan& { return s.recs[i]; }, out, pool);
}

void parse_pairs(const std::string& path1, const ScanBatch& s1, const std::string& path2, const ScanBatch& s2,
                 ReadBatch& out, TaskPool& pool) {
  check_batch(path1, s1, pool);
  check_batch(path2, s2, pool);
  if (s1.recs.size() != s2.recs.size()) throw std::logic_error("parse_pairs: the files' batches differ in size");
  out.clear();
  out.first = s1.first;
  fill(2 * s1.recs.size(), [&](std::size_t i) -> const RecordSpan& { return (i & 1 ? s2 : s1).recs[i >> 1]; }, out, pool);
}

void check_pairs(const std::string& path1, const ReadBatch& a, const std::string& path2, const ReadBatch& b) {
  if (a.size() != b.size()) {
    const bool short1 = a.size() < b.size();
    input_error(short1 ? path1 : path2,
                "has fewer reads than " + (short1 ? path2 : path1) + " (paired files must have the same number of reads)");
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a.name(i) != b.name(i))
      input_error(path2, "read " + std::to_string(a.first + i + 1) + " is named " + std::string(b.name(i)) +
                             " but its mate in " + path1 + " is " + std::string(a.name(i)) +
                             " (paired files must list the pairs in the same order)");
    if (a.qual(i).empty() != b.qual(i).empty())
      input_error(path2, "read " + std::string(b.name(i)) + ": one end has qualities (FASTQ), the other none (FASTA)");
  }
  // bwa drops empty reads from each file on its own, which would mispair them
  for (const ReadBatch* r : {&a, &b})
    for (std::size_t i = 0; i < r->size(); ++i)
      if (r->codes.len[i] == 0)
        input_error(r == &a ? path1 : path2, "read " + std::string(r->name(i)) + " is empty (paired reads need bases)");
}

void interleave_pairs(const ReadBatch& a, const ReadBatch& b, ReadBatch& out, TaskPool& pool) {
  if (a.size() != b.size()) throw std::logic_error("interleave_pairs: the ends' batches differ in size");
  const std::size_t n = a.size();
  const ReadBatch* end[2] = {&a, &b};
  out.clear();
  out.first = a.first;
  out.name_end.resize(2 * n);
  out.has_qual.resize(2 * n);
  out.codes.offset.resize(2 * n);
  out.codes.len.resize(2 * n);
  std::size_t nb = 0, bb = 0;
  for (std::size_t i = 0; i < 2 * n; ++i) {  // offsets (serial: two sums per read)
    const ReadBatch& e = *end[i & 1];
    const std::size_t j = i >> 1;
    nb += e.name(j).size();
    out.name_end[i] = static_cast<std::uint32_t>(nb);
    out.codes.offset[i] = bb;
    out.codes.len[i] = e.codes.len[j];
    bb += e.codes.len[j];
  }
  out.names.resize(nb);
  out.bases.resize(bb);
  out.quals.resize(bb);
  out.codes.codes.resize(bb);
  pool.parallel_for(2 * n, 4096, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) {
      const ReadBatch& e = *end[i & 1];
      const std::size_t j = i >> 1, len = e.codes.len[j], from = e.codes.offset[j], to = out.codes.offset[i];
      const std::string_view nm = e.name(j);
      if (!nm.empty()) std::memcpy(out.names.data() + (i ? out.name_end[i - 1] : 0), nm.data(), nm.size());
      out.has_qual[i] = e.has_qual[j];
      if (len == 0) continue;
      std::memcpy(out.bases.data() + to, e.bases.data() + from, len);
      std::memcpy(out.quals.data() + to, e.quals.data() + from, len);
      std::memcpy(out.codes.codes.data() + to, e.codes.codes.data() + from, len);
    }
  });
}

}  // namespace evk::barracuda_exact
