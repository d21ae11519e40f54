// Placeholder expansion for profile argv templates and policy paths.
//
// `{name}` is replaced by its value; an element that is exactly `{probe_args...}` expands to
// zero or more argv items. Values are inserted literally and never re-expanded, so a policy
// path or probe argument that happens to contain braces cannot inject anything.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "model/status.h"

namespace sandprobe {

inline constexpr std::string_view kProbeArgsPlaceholder = "{probe_args...}";

struct PlaceholderValues {
  std::map<std::string, std::string> scalars;  // name (without braces) -> value
  std::vector<std::string> probe_args;         // what {probe_args...} expands to
};

// Expands every `{name}` in `text`; an unknown name is an error naming it.
StatusOr<std::string> ExpandString(std::string_view text,
                                   const std::map<std::string, std::string>& scalars);

// Expands a whole argv template.
StatusOr<std::vector<std::string>> ExpandArgv(const std::vector<std::string>& argv_template,
                                              const PlaceholderValues& values);

}  // namespace sandprobe
