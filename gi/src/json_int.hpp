// Integers read from JSON files a person may have edited (run directories, configs): a value that is
// not an integer of the target type's range is an error (nlohmann's own conversion of 1e36 to an
// int is undefined behaviour). The caller turns the exception into its InputError.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>

namespace evk::gi {

template <class T>
T json_int(const nlohmann::json& j, const char* key, T def) {
  static_assert(std::is_integral_v<T>);
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return def;
  const nlohmann::json& v = j[key];
  const auto bad = [&] { throw std::out_of_range(std::string(key) + " is not an integer in range"); };
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (!std::in_range<T>(u)) bad();
    return static_cast<T>(u);
  }
  if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    if (!std::in_range<T>(i)) bad();
    return static_cast<T>(i);
  }
  if (v.is_number_float()) {  // 3.0 is accepted as 3; 3.5, NaN and 1e36 are not
    const double d = v.get<double>();
    if (!std::isfinite(d) || d != std::floor(d) || d < static_cast<double>(std::numeric_limits<T>::min()) ||
        d >= std::ldexp(1.0, std::numeric_limits<T>::digits))
      bad();
    return static_cast<T>(d);
  }
  throw std::invalid_argument(std::string(key) + " is not a number");
}

}  // namespace evk::gi
