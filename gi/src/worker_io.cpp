// The worker pipes' framing: length-prefixed frames over blocking pipes, reads with a deadline.
#include "worker_io.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>

namespace evk::gi::wire {

void write_all(int fd, const void* p, std::size_t n) {
  auto* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t w = ::write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw Closed("worker pipe closed");
    c += w;
    n -= static_cast<std::size_t>(w);
  }
}

// deadline < 0: wait forever
void read_all(int fd, void* p, std::size_t n, double deadline_s) {
  auto* c = static_cast<char*>(p);
  auto t0 = std::chrono::steady_clock::now();
  while (n > 0) {
    if (deadline_s >= 0) {
      double left = deadline_s - std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (left <= 0) throw Timeout("timeout");
      pollfd pf{fd, POLLIN, 0};
      int r = ::poll(&pf, 1, static_cast<int>(std::ceil(left * 1000)));
      if (r < 0 && errno == EINTR) continue;
      if (r == 0) throw Timeout("timeout");
    }
    ssize_t got = ::read(fd, c, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) throw Closed("worker pipe closed");
    c += got;
    n -= static_cast<std::size_t>(got);
  }
}

void send_frame(int fd, const std::string& s) {
  std::uint64_t n = s.size();
  write_all(fd, &n, sizeof n);
  write_all(fd, s.data(), s.size());
}
void send_frame(int fd, const std::vector<char>& s) {
  std::uint64_t n = s.size();
  write_all(fd, &n, sizeof n);
  write_all(fd, s.data(), s.size());
}
std::string recv_frame(int fd, double timeout_s) {
  auto t0 = std::chrono::steady_clock::now();
  std::uint64_t n = 0;
  read_all(fd, &n, sizeof n, timeout_s);
  if (n > (1ull << 32)) throw Closed("corrupt frame");
  std::string s(n, '\0');
  double left = timeout_s < 0 ? -1 : timeout_s - std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (timeout_s >= 0 && left <= 0) left = 0.001;
  read_all(fd, s.data(), n, left);
  return s;
}

}  // namespace evk::gi::wire
