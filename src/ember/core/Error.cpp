#include "ember/core/Error.h"

namespace ember {

void internal_assert_fail(const char* file, int line, const char* cond, const std::string& msg) {
  throw Error(str_cat("Internal assertion failed: ", cond, " at ", file, ":", line, msg.empty() ? "" : ": ", msg,
                      "\nThis is a bug in Ember; please report it with the code that triggered it."));
}

}  // namespace ember
