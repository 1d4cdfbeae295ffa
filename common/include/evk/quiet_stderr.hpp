// Libraries we wrap (nifticlib, libpng and libjpeg through OpenCV) print errors and warnings on
// stderr themselves; our tools print exactly one line per error. While a QuietStderr lives, file
// descriptor 2 points to /dev/null (the caller turns the library's failure into an InputError).
#pragma once
#include <fcntl.h>
#include <unistd.h>

namespace evk {

class QuietStderr {
 public:
  QuietStderr() : saved_(::dup(2)) {
    const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (saved_ >= 0 && null >= 0) ::dup2(null, 2);
    if (null >= 0) ::close(null);
  }
  ~QuietStderr() {
    if (saved_ >= 0) {
      ::dup2(saved_, 2);
      ::close(saved_);
    }
  }
  QuietStderr(const QuietStderr&) = delete;
  QuietStderr& operator=(const QuietStderr&) = delete;

 private:
  int saved_;
};

}  // namespace evk
