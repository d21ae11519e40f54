#include "contract/errno_name.h"

#include <string.h>

namespace sandprobe {

// glibc's own table (2.32+): the same names the runner uses (model/errno_text.h), and the
// aliases come out as one name each (EAGAIN, EDEADLK, EOPNOTSUPP).
std::string ErrnoName(int err) {
  const char* name = strerrorname_np(err);
  if (name != nullptr) return name;
  return "E" + std::to_string(err);
}

}  // namespace sandprobe
