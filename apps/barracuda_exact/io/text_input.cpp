#include "io/text_input.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <isa-l/igzip_lib.h>
#include <libdeflate.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "evk/error.hpp"
#include "io/queue.hpp"

namespace evk::barracuda_exact {
namespace {

using Clock = std::chrono::steady_clock;
std::uint64_t ns_since(Clock::time_point t) {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t).count());
}

// A chunk that may still be inflating on the pool.
struct Pending {
  TextChunk chunk;
  std::exception_ptr err;
  std::mutex m;
  std::condition_variable cv;
  bool ready = false;
  void set_ready() {
    std::lock_guard<std::mutex> l(m);
    ready = true;
    cv.notify_all();
  }
  void wait() {
    std::unique_lock<std::mutex> l(m);
    cv.wait(l, [&] { return ready; });
  }
};
using PendingPtr = std::shared_ptr<Pending>;

// Compressed input read(2) from a file descriptor into a sliding buffer.
class Source {
 public:
  Source(int fd, TextInputStats& st) : fd_(fd), st_(st) {
    // a small regular file gets a buffer of its size, not 4 MiB (cheap for many small files)
    struct stat sb {};
    if (::fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size >= 0)
      read_ = std::clamp<std::size_t>(static_cast<std::size_t>(sb.st_size) + 1, 4096, kRead);
  }
  // Makes at least `want` unconsumed bytes available (fewer only at the end of the file).
  std::size_t fill(std::size_t want) {
    if (avail() >= want || eof_) return avail();
    if (pos_ > 0) {  // slide the unconsumed bytes to the front
      std::memmove(buf_.get(), buf_.get() + pos_, avail());
      end_ -= pos_;
      pos_ = 0;
    }
    if (cap_ < std::max(want, read_)) grow(std::max(want, read_));
    while (end_ < want && !eof_) {
      const auto t = Clock::now();
      const ssize_t n = ::read(fd_, buf_.get() + end_, cap_ - end_);
      st_.read_ns += ns_since(t);
      if (n < 0) {
        if (errno == EINTR) continue;
        throw_read_error();
      }
      if (n == 0) eof_ = true;
      end_ += static_cast<std::size_t>(n);
      st_.compressed_bytes += static_cast<std::uint64_t>(n);
    }
    return avail();
  }
  std::size_t fill_some() { return fill(avail() + 1); }  // at least one more byte unless at the end
  const std::uint8_t* data() const { return buf_.get() + pos_; }
  std::size_t avail() const { return end_ - pos_; }
  void consume(std::size_t n) {
    pos_ += n;
    offset_ += n;
  }
  bool eof() const { return eof_ && avail() == 0; }
  std::uint64_t offset() const { return offset_; }  // file offset of data()
  std::string path;

 private:
  [[noreturn]] void throw_read_error() { input_error(path, std::string("read failed: ") + std::strerror(errno)); }
  // A larger buffer keeping the bytes read so far; not zero-filled (read(2) fills it), which
  // matters for many small files (4 MiB of memset per file made the fuzz harness ~40 runs/s).
  void grow(std::size_t cap) {
    std::unique_ptr<std::uint8_t[]> b(new std::uint8_t[cap]);
    if (end_ > 0) std::memcpy(b.get(), buf_.get(), end_);
    buf_ = std::move(b);
    cap_ = cap;
  }
  static constexpr std::size_t kRead = std::size_t(4) << 20;
  std::size_t read_ = kRead;
  int fd_;
  TextInputStats& st_;
  std::unique_ptr<std::uint8_t[]> buf_;
  std::size_t cap_ = 0, pos_ = 0, end_ = 0;
  std::uint64_t offset_ = 0;
  bool eof_ = false;
};

bool is_gzip(const std::uint8_t* p, std::size_t n) { return n >= 2 && p[0] == 0x1f && p[1] == 0x8b; }

// The BGZF block size (BSIZE + 1) when p starts a BGZF header (gzip, deflate, FEXTRA with a BC
// subfield of length 2), else 0. n must be >= 18; the extra field may be longer than 6 bytes.
std::size_t bgzf_block_size(const std::uint8_t* p, std::size_t n) {
  if (n < 18 || p[0] != 0x1f || p[1] != 0x8b || p[2] != 8 || (p[3] & 4) == 0) return 0;
  const std::size_t xlen = p[10] | (std::size_t(p[11]) << 8);
  if (12 + xlen > n) return 0;
  for (std::size_t i = 12; i + 4 <= 12 + xlen;) {
    const std::size_t slen = p[i + 2] | (std::size_t(p[i + 3]) << 8);
    if (p[i] == 'B' && p[i + 1] == 'C' && slen == 2 && i + 6 <= 12 + xlen)
      return (p[i + 4] | (std::size_t(p[i + 5]) << 8)) + 1;
    i += 4 + slen;
  }
  return 0;
}
std::uint32_t le32(const std::uint8_t* p) {
  return p[0] | (std::uint32_t(p[1]) << 8) | (std::uint32_t(p[2]) << 16) | (std::uint32_t(p[3]) << 24);
}
std::size_t bgzf_header_size(const std::uint8_t* p) { return 12 + (p[10] | (std::size_t(p[11]) << 8)); }

struct DeflateDeleter {
  void operator()(libdeflate_decompressor* d) const { libdeflate_free_decompressor(d); }
};
libdeflate_decompressor* thread_decompressor() {
  thread_local std::unique_ptr<libdeflate_decompressor, DeflateDeleter> d(libdeflate_alloc_decompressor());
  if (!d) throw std::bad_alloc();
  return d.get();
}

const char* isal_error(int r) {
  switch (r) {
    case ISAL_INVALID_BLOCK: return "invalid deflate block";
    case ISAL_INVALID_SYMBOL: return "invalid deflate symbol";
    case ISAL_INVALID_LOOKBACK: return "invalid back-reference distance";
    case ISAL_INVALID_WRAPPER: return "invalid gzip header";
    case ISAL_UNSUPPORTED_METHOD: return "unsupported compression method";
    case ISAL_INCORRECT_CHECKSUM: return "CRC-32 or length check failed";
    default: return "invalid data";
  }
}

}  // namespace

struct TextInput::Impl {
  std::string path;
  TaskPool& pool;
  std::size_t chunk_bytes;
  int fd = -1;
  TextInputStats stats;
  std::atomic<TextFormat> format{TextFormat::plain};
  Queue<PendingPtr> q;
  std::thread thread;

  std::atomic<std::size_t> ahead_bytes;

  Impl(const std::string& p, TaskPool& tp, std::size_t cb, std::size_t ahead)
      : path(p), pool(tp), chunk_bytes(cb), q(base_chunks()), ahead_bytes(ahead) {}
  std::size_t base_chunks() const { return static_cast<std::size_t>(pool.workers() + 4); }
  // the queue's room: ahead_bytes of text for a gzip stream (format set first: end_read_ahead's order)
  void size_queue() {
    if (format == TextFormat::gzip)
      q.set_capacity(std::max(base_chunks(), ahead_bytes.load() / std::max<std::size_t>(chunk_bytes, 1)));
  }

  [[noreturn]] void fail(const std::string& what) { input_error(path, what); }

  // Hands a finished chunk on; false when the consumer has gone.
  bool emit(TextChunk&& c) {
    if (c.size == 0) return true;
    stats.text_bytes += c.size;
    auto p = std::make_shared<Pending>();
    p->chunk = std::move(c);
    p->ready = true;
    return q.push(std::move(p));
  }
  static TextChunk new_chunk(std::size_t cap) {
    TextChunk c;
    c.data.reset(new char[cap]);
    return c;
  }

  void run() {
    try {
      Source src(fd, stats);
      src.path = path;
      src.fill(18);
      if (!is_gzip(src.data(), src.avail())) {
        format = TextFormat::plain;
        run_plain(src);
      } else if (bgzf_block_size(src.data(), src.avail())) {
        format = TextFormat::bgzf;
        run_bgzf(src);
      } else {
        format = TextFormat::gzip;
        size_queue();
        run_gzip(src);
      }
    } catch (...) {
      auto p = std::make_shared<Pending>();
      p->err = std::current_exception();
      p->ready = true;
      q.push(std::move(p));
    }
    q.close();  // the consumer drains what is queued, then sees the end
  }

  void run_plain(Source& src) {
    while (src.fill(chunk_bytes) > 0) {
      const std::size_t n = std::min(src.avail(), chunk_bytes);
      TextChunk c = new_chunk(n);
      std::memcpy(c.data.get(), src.data(), n);
      c.size = n;
      src.consume(c.size);
      if (!emit(std::move(c))) return;
    }
  }

  // gzip members one after another on this thread (isa-l streaming inflate).
  void run_gzip(Source& src) {
    auto st = std::make_unique<inflate_state>();
    isal_inflate_init(st.get());
    st->crc_flag = ISAL_GZIP;
    TextChunk out = new_chunk(chunk_bytes);
    std::uint64_t member_start = src.offset();
    src.fill_some();
    for (;;) {
      if (src.avail() == 0) src.fill_some();
      st->next_in = const_cast<std::uint8_t*>(src.data());
      st->avail_in = static_cast<std::uint32_t>(std::min<std::size_t>(src.avail(), 1u << 30));
      st->next_out = reinterpret_cast<std::uint8_t*>(out.data.get() + out.size);
      st->avail_out = static_cast<std::uint32_t>(chunk_bytes - out.size);
      const std::uint32_t in0 = st->avail_in;
      const std::size_t produced0 = out.size;
      const auto t = Clock::now();
      const int r = isal_inflate(st.get());
      stats.inflate_ns += ns_since(t);
      src.consume(in0 - st->avail_in);
      out.size = chunk_bytes - st->avail_out;
      if (r < 0)
        fail("damaged compressed data (gzip: " + std::string(isal_error(r)) + ") in the member starting at byte " +
             std::to_string(member_start));
      if (out.size == chunk_bytes) {
        if (!emit(std::move(out))) return;
        out = new_chunk(chunk_bytes);
      }
      if (st->block_state == ISAL_BLOCK_FINISH) {  // a member ends; another may follow
        if (src.fill(2) == 0) break;
        if (!is_gzip(src.data(), src.avail()))
          fail("damaged compressed data (gzip): byte " + std::to_string(src.offset()) +
               " after a complete member is not the start of another (trailing garbage)");
        member_start = src.offset();
        isal_inflate_reset(st.get());
        st->crc_flag = ISAL_GZIP;
        continue;
      }
      // no member end yet: more input is needed unless the output filled up
      const bool progress = in0 != st->avail_in || out.size != produced0;
      if (st->avail_out > 0 && (src.avail() == 0 || !progress)) {
        const std::size_t had = src.avail();
        if (src.fill_some() == had)
          fail(src.offset() + src.avail() - member_start < 10  // a gzip header has 10 bytes at least
                   ? "truncated compressed data (gzip): the file ends inside the gzip header at byte " + std::to_string(member_start)
                   : "truncated compressed data (gzip): the file ends inside the member starting at byte " +
                         std::to_string(member_start));
      }
    }
    emit(std::move(out));
  }

  // BGZF: groups of whole blocks inflated in parallel on the pool, in order through the queue.
  void run_bgzf(Source& src) {
    struct Block {
      std::size_t off, size;  // within the group's bytes
      std::uint32_t isize;
      std::uint64_t file_off;
    };
    bool last_empty = false;
    for (;;) {
      std::vector<std::uint8_t> bytes;
      std::vector<Block> blocks;
      std::size_t text = 0;
      while (text < std::max<std::size_t>(chunk_bytes, 1) && blocks.size() < 64) {
        if (src.fill(18) == 0) break;  // the end of the file
        const std::size_t bs = bgzf_block_size(src.data(), src.avail());
        if (bs == 0) {
          if (src.avail() < 18 && !is_gzip(src.data(), src.avail()))
            fail("damaged compressed data (BGZF): byte " + std::to_string(src.offset()) + " does not start a block");
          if (src.avail() < 18) fail("truncated compressed data (BGZF): the file ends inside the block header at byte " + std::to_string(src.offset()));
          if (!is_gzip(src.data(), src.avail()))
            fail("damaged compressed data (BGZF): byte " + std::to_string(src.offset()) + " does not start a block (trailing garbage?)");
          // a plain gzip member: the rest of the file goes through the streaming path
          dispatch(std::move(bytes), std::move(blocks), text);
          format = TextFormat::gzip;
          run_gzip(src);
          return;
        }
        const std::size_t hs = bgzf_header_size(src.data());
        if (bs < hs + 8) fail("damaged compressed data (BGZF): block at byte " + std::to_string(src.offset()) + " is too small");
        if (src.fill(bs) < bs)
          fail("truncated compressed data (BGZF): the file ends inside the block starting at byte " + std::to_string(src.offset()));
        const std::uint32_t isize = le32(src.data() + bs - 4);
        if (isize > 65536) fail("damaged compressed data (BGZF): block at byte " + std::to_string(src.offset()) + " claims " +
                                std::to_string(isize) + " bytes");
        blocks.push_back(Block{bytes.size(), bs, isize, src.offset()});
        bytes.insert(bytes.end(), src.data(), src.data() + bs);
        src.consume(bs);
        text += isize;
        last_empty = isize == 0;
      }
      if (blocks.empty()) break;
      if (!dispatch(std::move(bytes), std::move(blocks), text)) return;
    }
    if (!last_empty)
      fail("truncated compressed data (BGZF): the end-of-file block is missing (the file was cut at a block boundary)");
  }

  template <class Blocks>
  bool dispatch(std::vector<std::uint8_t>&& bytes_in, Blocks&& blocks_in, std::size_t text) {
    if (blocks_in.empty()) return true;
    auto p = std::make_shared<Pending>();
    auto bytes = std::make_shared<std::vector<std::uint8_t>>(std::move(bytes_in));
    auto blocks = std::make_shared<std::decay_t<Blocks>>(std::move(blocks_in));
    p->chunk.data.reset(new char[text ? text : 1]);
    p->chunk.size = text;
    stats.text_bytes += text;
    const std::string file = path;
    TextInputStats* s = &stats;
    pool.submit([p, bytes, blocks, file, s] {
      const auto t = Clock::now();
      try {
        libdeflate_decompressor* d = thread_decompressor();
        std::size_t out = 0;
        for (const auto& b : *blocks) {
          const std::uint8_t* blk = bytes->data() + b.off;
          const std::size_t hs = bgzf_header_size(blk);
          char* dst = p->chunk.data.get() + out;
          const auto r = libdeflate_deflate_decompress(d, blk + hs, b.size - hs - 8, dst, b.isize, nullptr);
          if (r != LIBDEFLATE_SUCCESS || libdeflate_crc32(0, dst, b.isize) != le32(blk + b.size - 8))
            input_error(file, "damaged compressed data (BGZF): the block at byte " + std::to_string(b.file_off) +
                                  (r != LIBDEFLATE_SUCCESS ? " does not inflate" : " fails its CRC-32 check"));
          out += b.isize;
        }
      } catch (...) {
        p->err = std::current_exception();
      }
      s->inflate_ns += ns_since(t);
      p->set_ready();
    });
    return q.push(std::move(p));
  }
};

TextInput::TextInput(const std::string& path, TaskPool& pool, std::size_t chunk_bytes, std::size_t ahead_bytes)
    : impl_(std::make_unique<Impl>(path, pool, chunk_bytes, ahead_bytes)) {
  Impl& m = *impl_;
  if (path == "-") {
    m.fd = 0;
  } else {
    m.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (m.fd < 0) input_error(path, std::string("cannot open: ") + std::strerror(errno));
  }
  m.thread = std::thread([&m] { m.run(); });
}

void TextInput::end_read_ahead() {
  impl_->ahead_bytes = 0;
  impl_->size_queue();
}

TextInput::~TextInput() {
  impl_->q.close();
  if (impl_->thread.joinable()) impl_->thread.join();
  if (impl_->fd > 0) ::close(impl_->fd);
}

std::shared_ptr<const TextChunk> TextInput::next() {
  auto p = impl_->q.pop();
  if (!p) return nullptr;
  (*p)->wait();
  if ((*p)->err) {
    impl_->q.close();
    std::rethrow_exception((*p)->err);
  }
  // the chunk lives as long as the Pending that holds it
  return std::shared_ptr<const TextChunk>(*p, &(*p)->chunk);
}

const std::string& TextInput::path() const { return impl_->path; }
TextFormat TextInput::format() const { return impl_->format; }
const TextInputStats& TextInput::stats() const { return impl_->stats; }

}  // namespace evk::barracuda_exact
