#pragma once
// Typed errors. The Python bindings translate each class into the Python
// exception of the same name; anything else a user can trigger is an Error
// (RuntimeError in Python).

#include <sstream>
#include <stdexcept>
#include <string>

#include "ember/core/Macros.h"

namespace ember {

class EMBER_CORE_API Error : public std::runtime_error {
 public:
  explicit Error(const std::string& msg) : std::runtime_error(msg) {}
};
class EMBER_CORE_API ValueError : public Error {
 public:
  using Error::Error;
};
class EMBER_CORE_API TypeError : public Error {
 public:
  using Error::Error;
};
class EMBER_CORE_API IndexError : public Error {
 public:
  using Error::Error;
};
class EMBER_CORE_API NotImplementedError : public Error {
 public:
  using Error::Error;
};

namespace detail {
inline void append(std::ostringstream&) {}
template <typename T, typename... Rest>
void append(std::ostringstream& os, const T& first, const Rest&... rest) {
  os << first;
  append(os, rest...);
}
}  // namespace detail

// Concatenates its arguments with operator<< into one string.
template <typename... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream os;
  detail::append(os, args...);
  return os.str();
}

// A warning for the user (Python's UserWarning once the bindings install
// their handler; stderr before that). The handler may throw.
using WarningHandler = void (*)(const std::string& msg);
EMBER_CORE_API void set_warning_handler(WarningHandler handler);
EMBER_CORE_API void warn(const std::string& msg);

[[noreturn]] EMBER_CORE_API void internal_assert_fail(const char* file, int line, const char* cond,
                                                      const std::string& msg);

}  // namespace ember

// EMBER_CHECK(cond, parts...): user-facing check, throws ember::Error.
#define EMBER_CHECK(cond, ...)                             \
  do {                                                     \
    if (EMBER_UNLIKELY(!(cond))) {                         \
      throw ::ember::Error(::ember::str_cat(__VA_ARGS__)); \
    }                                                      \
  } while (0)

// EMBER_CHECK_TYPE(ErrorClass, cond, parts...): same with a chosen error type.
#define EMBER_CHECK_TYPE(Kind, cond, ...)                 \
  do {                                                    \
    if (EMBER_UNLIKELY(!(cond))) {                        \
      throw ::ember::Kind(::ember::str_cat(__VA_ARGS__)); \
    }                                                     \
  } while (0)

// Internal invariant: failure is a bug in Ember, and says so.
#define EMBER_INTERNAL_ASSERT(cond, ...)                                                       \
  do {                                                                                         \
    if (EMBER_UNLIKELY(!(cond))) {                                                             \
      ::ember::internal_assert_fail(__FILE__, __LINE__, #cond, ::ember::str_cat(__VA_ARGS__)); \
    }                                                                                          \
  } while (0)
