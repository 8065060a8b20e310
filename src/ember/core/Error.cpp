#include "ember/core/Error.h"

#include <cstdio>

namespace ember {

namespace {
WarningHandler g_warning_handler = nullptr;
}  // namespace

void set_warning_handler(WarningHandler handler) { g_warning_handler = handler; }

void warn(const std::string& msg) {
  if (g_warning_handler) return g_warning_handler(msg);
  std::fprintf(stderr, "Warning: %s\n", msg.c_str());
}

void internal_assert_fail(const char* file, int line, const char* cond, const std::string& msg) {
  throw Error(str_cat("Internal assertion failed: ", cond, " at ", file, ":", line, msg.empty() ? "" : ": ", msg,
                      "\nThis is a bug in Ember; please report it with the code that triggered it."));
}

}  // namespace ember
