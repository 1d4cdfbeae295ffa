// The worker pipes' framing, shared by the parent side (worker.cpp) and the worker side
// (worker_main.cpp): length-prefixed frames, with a deadline on reads.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace evk::gi::wire {

struct Timeout : std::runtime_error {  // no answer before the deadline
  using std::runtime_error::runtime_error;
};
struct Closed : std::runtime_error {  // the other end closed its pipe (or sent garbage)
  using std::runtime_error::runtime_error;
};

// write n bytes to fd; throws Closed
void write_all(int fd, const void* p, std::size_t n);
// read n bytes from fd within deadline_s seconds (< 0: wait forever); throws Timeout or Closed
void read_all(int fd, void* p, std::size_t n, double deadline_s);
// send one frame: its 8-byte length, then its bytes
void send_frame(int fd, const std::string& s);
void send_frame(int fd, const std::vector<char>& s);
// receive one frame within timeout_s seconds (< 0: wait forever)
std::string recv_frame(int fd, double timeout_s);

}  // namespace evk::gi::wire
