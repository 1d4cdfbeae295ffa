#include "evk/main_guard.hpp"

#include <cctype>
#include <cstdio>
#include <new>

#include "evk/atomic_file.hpp"
#include "evk/cuda_check.hpp"

namespace evk {
namespace {
// Error messages are one line: newlines and other control characters (from file names or file
// contents quoted in a message) are shown escaped.
std::string one_line(std::string msg) {
  while (!msg.empty() && std::isspace(static_cast<unsigned char>(msg.back()))) msg.pop_back();
  std::string o;
  for (unsigned char c : msg) {
    if (c == '\n') o += "\\n";
    else if (c == '\r') o += "\\r";
    else if (c < 0x20 && c != '\t') {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", c);
      o += b;
    } else {
      o += static_cast<char>(c);
    }
  }
  return o;
}
}  // namespace

int report_error(const std::string& tool, const std::string& message, int code) {
  std::fprintf(stderr, "%s: %s\n", tool.c_str(), one_line(message).c_str());
  return code;
}

int run_guarded(const std::string& tool, const std::function<int()>& body) {
  install_cleanup_signal_handlers();
  try {
    return body();
  } catch (const InputError& e) {
    return report_error(tool, e.what(), kExitInput);
  } catch (const Refused& e) {
    return report_error(tool, e.what(), kExitInternal);
  } catch (const CudaError& e) {
    return report_error(tool, std::string("CUDA error: ") + e.what(), kExitInternal);
  } catch (const std::bad_alloc&) {
    return report_error(tool, "out of memory", kExitInternal);
  } catch (const std::exception& e) {
    return report_error(tool, std::string("internal error: ") + e.what(), kExitInternal);
  }
}

}  // namespace evk
