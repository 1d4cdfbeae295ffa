#include "io/record_scan.hpp"

#include <chrono>
#include <cstring>
#include <vector>

#include "evk/error.hpp"
#include "io/read_rules.hpp"

namespace evk::barracuda_exact {
namespace {

using Clock = std::chrono::steady_clock;

enum class Scan { record, end, need_more };

inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

// A sequence or quality being collected line by line: a span into the text while it is one line,
// copied into `joined` from its second line on.
struct Field {
  const char* p = nullptr;
  std::size_t n = 0;
  std::string joined;
  bool is_joined = false;
  // Appends [a, b) and drops a trailing '\r' as kseq does (only when the field is then longer
  // than 1 character, and not when the line is one character that ended the file).
  void append(const char* a, const char* b, bool may_strip) {
    if (!is_joined && n == 0) {
      p = a;
      n = static_cast<std::size_t>(b - a);
    } else {
      if (!is_joined) {
        joined.assign(p, n);
        is_joined = true;
      }
      joined.append(a, b);
      n = joined.size();
    }
    if (may_strip && n > 1 && (is_joined ? joined.back() : p[n - 1]) == '\r') {
      --n;
      if (is_joined) joined.pop_back();
    }
  }
  const char* data() const { return is_joined ? joined.data() : p; }
};

struct Context {
  const std::string& path;
  std::uint64_t record;  // 0-based index of the record being scanned
  char format;           // the file's format ('>' or '@'), 0 before the first record
};

struct ScanResult {
  RecordSpan rec;
  Field seq, qual;
  char header = 0;
  bool fastq = false;
};

// One record starting at p (after the blank lines before it), exactly as kseq_read reads it, under
// the structural rules of read_rules.hpp. at_eof: nothing follows `end`. `consumed`: for a record,
// its bytes; for need_more, the blank bytes before its header that may be dropped; for end,
// everything.
Scan scan_record(const char* p, const char* end, bool at_eof, const Context& ctx, ScanResult& out,
                 std::size_t& consumed) {
  const char* s = p;
  while (s < end && (*s == '\n' || *s == '\r')) ++s;
  consumed = static_cast<std::size_t>(s - p);
  if (s == end) return at_eof ? Scan::end : Scan::need_more;
  const char header = *s++;
  if (header != '>' && header != '@') read_rules::not_a_header(ctx.path, ctx.record, header);
  if (ctx.format && header != ctx.format) read_rules::mixed_formats(ctx.path, ctx.record, header, ctx.format);
  out.header = header;
  // the name: up to the first white space
  if (s == end) {
    if (!at_eof) return Scan::need_more;
    read_rules::no_name(ctx.path, ctx.record);
  }
  const char* name = s;
  while (s < end && !is_space(*s)) ++s;
  if (s == end && !at_eof) return Scan::need_more;
  out.rec.name = name;
  out.rec.name_len = static_cast<std::uint32_t>(s - name);
  const std::string_view name_v(name, out.rec.name_len);
  const int delim = s < end ? *s++ : 0;
  if (delim != '\n' && delim != 0) {  // a comment: the rest of the header line (ignored)
    const char* e = static_cast<const char*>(std::memchr(s, '\n', static_cast<std::size_t>(end - s)));
    if (!e && !at_eof) return Scan::need_more;
    s = e ? e + 1 : end;
  }
  // sequence lines up to a line starting with '>', '@' or '+' (or the end of the file)
  int c = -1;
  out.seq = Field{};
  for (;;) {
    if (s == end) {
      if (!at_eof) return Scan::need_more;
      c = -1;
      break;
    }
    c = static_cast<unsigned char>(*s);
    if (c == '>' || c == '@' || c == '+') break;
    const char* line = s++;
    if (c == '\n') continue;  // empty line
    const char* e = static_cast<const char*>(std::memchr(s, '\n', static_cast<std::size_t>(end - s)));
    if (!e && !at_eof) return Scan::need_more;
    const char* le = e ? e : end;
    out.seq.append(line, le, !(line + 1 == end));  // kseq keeps the '\r' of a 1-character last line
    s = e ? e + 1 : end;
  }
  if (out.seq.n > 0xffffffffu) input_error(ctx.path, read_rules::record_named(ctx.record, name_v) + ": sequence too long");
  out.rec.seq_len = static_cast<std::uint32_t>(out.seq.n);
  out.fastq = c == '+';
  const char format = ctx.format ? ctx.format : header;
  if (!out.fastq) {
    if (format == '@') read_rules::no_quality(ctx.path, ctx.record, name_v);
    consumed = static_cast<std::size_t>(s - p);  // a FASTA record ends before the next header
    return Scan::record;
  }
  ++s;  // the '+' line
  {
    const char* e = static_cast<const char*>(std::memchr(s, '\n', static_cast<std::size_t>(end - s)));
    if (!e) {
      if (!at_eof) return Scan::need_more;
      read_rules::quality_length(ctx.path, ctx.record, name_v, 0, out.seq.n);  // kseq: no quality string
    }
    s = e + 1;
  }
  // quality lines until it is at least as long as the sequence (one line at least)
  out.qual = Field{};
  do {
    if (s == end) {
      if (!at_eof) return Scan::need_more;
      break;
    }
    const char* line = s;
    const char* e = static_cast<const char*>(std::memchr(s, '\n', static_cast<std::size_t>(end - s)));
    if (!e && !at_eof) return Scan::need_more;
    out.qual.append(line, e ? e : end, true);
    s = e ? e + 1 : end;
  } while (out.qual.n < out.seq.n);
  if (out.qual.n != out.seq.n) read_rules::quality_length(ctx.path, ctx.record, name_v, out.qual.n, out.seq.n);
  if (format == '>') read_rules::quality_in_fasta(ctx.path, ctx.record, name_v);
  consumed = static_cast<std::size_t>(s - p);
  return Scan::record;
}

std::shared_ptr<const TextChunk> join(const char* a, std::size_t na, const char* b, std::size_t nb) {
  auto c = std::make_shared<TextChunk>();
  c->data.reset(new char[na + nb + 1]);
  std::memcpy(c->data.get(), a, na);
  std::memcpy(c->data.get() + na, b, nb);
  c->size = na + nb;
  return c;
}

}  // namespace

bool RecordScanner::next_record(ScanBatch& b, RecordSpan& r) {
  ScanResult res;
  auto accept = [&](const std::shared_ptr<const TextChunk>& chunk) {
    r = res.rec;
    r.seq = res.seq.data();
    if (res.seq.is_joined) r.seq = b.joined.emplace_back(std::move(res.seq.joined)).data();
    r.qual = nullptr;
    if (res.fastq) {
      r.qual = res.qual.is_joined ? b.joined.emplace_back(std::move(res.qual.joined)).data() : res.qual.data();
      if (!r.qual) r.qual = "";  // a FASTQ record with no bases has an empty quality, not none (as kseq reads it)
    }
    if (b.keep.empty() || b.keep.back() != chunk) b.keep.push_back(chunk);
    if (!format_) format_ = res.header;
  };
  const Context ctx{in_.path(), n_, format_};
  for (;;) {
    if (p_ == end_) {
      if (done_) return false;
      const auto tw = Clock::now();
      cur_ = in_.next();
      busy_s_ -= std::chrono::duration<double>(Clock::now() - tw).count();
      if (!cur_) {
        done_ = true;
        return false;
      }
      p_ = cur_->data.get();
      end_ = p_ + cur_->size;
      continue;
    }
    std::size_t used = 0;
    const Scan st = scan_record(p_, end_, false, ctx, res, used);
    if (st == Scan::record) {
      p_ += used;
      accept(cur_);
      return true;
    }
    p_ += used;  // need_more: what lay before the record's header is dropped
    const std::size_t tail = static_cast<std::size_t>(end_ - p_);
    const auto tw = Clock::now();
    std::shared_ptr<const TextChunk> nxt = in_.next();
    busy_s_ -= std::chrono::duration<double>(Clock::now() - tw).count();
    if (!nxt) {  // the end of the input: the tail as the file's last bytes
      done_ = true;
      if (scan_record(p_, end_, true, ctx, res, used) == Scan::end) {
        p_ = end_;
        return false;
      }
      p_ += used;
      accept(cur_);
      return true;
    }
    if (tail == 0) {  // nothing but skipped text was left: go on in the next chunk
      cur_ = nxt;
      p_ = cur_->data.get();
      end_ = p_ + cur_->size;
      continue;
    }
    // the record continues in the next chunk: scan it from a joined copy of the tail and the
    // start of the next chunk, growing that start until the record is complete
    for (std::size_t k = std::size_t(64) << 10;; k *= 2) {
      const std::size_t take = std::min(k, nxt->size);
      auto joined = join(p_, tail, nxt->data.get(), take);
      if (take < nxt->size) {
        const char* j = joined->data.get();
        const Scan js = scan_record(j, j + joined->size, false, ctx, res, used);
        if (js == Scan::need_more) continue;
        if (js == Scan::record && used >= tail) {
          accept(joined);
          cur_ = nxt;
          p_ = nxt->data.get() + (used - tail);
          end_ = nxt->data.get() + nxt->size;
          return true;
        }
      }
      // the whole next chunk is needed (or the record ended inside the tail): continue in tail + next.
      // A record longer than a chunk (a 100 MB line, pages of blank lines) would be rescanned from its
      // start once per chunk, quadratic in its length: so more chunks are joined until the text at
      // least doubles, and it is rescanned O(log) times (fuzz_fastx found 300 KB taking a minute).
      std::vector<std::shared_ptr<const TextChunk>> more{nxt};
      std::size_t total = tail + nxt->size;
      while (total < 2 * tail) {
        const auto tm = Clock::now();
        auto c = in_.next();  // null at the end (and again on the next call)
        busy_s_ -= std::chrono::duration<double>(Clock::now() - tm).count();
        if (!c) break;
        total += c->size;
        more.push_back(std::move(c));
      }
      if (more.size() == 1) {
        cur_ = take == nxt->size ? joined : join(p_, tail, nxt->data.get(), nxt->size);
      } else {
        auto c = std::make_shared<TextChunk>();
        c->data.reset(new char[total + 1]);
        std::memcpy(c->data.get(), p_, tail);
        std::size_t at = tail;
        for (const auto& m : more) {
          std::memcpy(c->data.get() + at, m->data.get(), m->size);
          at += m->size;
        }
        c->size = total;
        cur_ = std::move(c);
      }
      p_ = cur_->data.get();
      end_ = p_ + cur_->size;
      break;
    }
  }
}

bool RecordScanner::next(ScanBatch& b, std::size_t max_reads, std::size_t max_bases, std::uint32_t max_len) {
  const auto t0 = Clock::now();
  b.clear();
  b.first = n_;
  b.max_len = max_len;
  if (failed_) throw std::logic_error("RecordScanner::next after an error");
  RecordSpan r;
  try {
    while (b.recs.size() < max_reads && b.bases < max_bases && next_record(b, r)) {
      b.recs.push_back(r);
      b.bases += r.seq_len;
      ++n_;
    }
    if (b.recs.empty() && n_ == 0) read_rules::no_reads(in_.path());
  } catch (const InputError&) {
    b.error = std::current_exception();
    failed_ = true;
  }
  busy_s_ += std::chrono::duration<double>(Clock::now() - t0).count();
  return !b.recs.empty() || b.error;
}

}  // namespace evk::barracuda_exact
