// ErrnoName: the symbolic name of an errno value, as probes report it in facts (glibc's
// strerrorname_np).
//
// Facts carry "EACCES", never strerror() text: names are stable across libcs and locales, so the
// host side can compare them as strings.
#pragma once

#include <string>

namespace sandprobe {

// "EACCES" for EACCES; "E<number>" (e.g. "E133") for a value the table does not know.
std::string ErrnoName(int err);

}  // namespace sandprobe
