#include "load/placeholders.h"

#include <fmt/format.h>

namespace sandprobe {

StatusOr<std::string> ExpandString(std::string_view text,
                                   const std::map<std::string, std::string>& scalars) {
  std::string out;
  out.reserve(text.size());
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t open = text.find('{', pos);
    if (open == std::string_view::npos) {
      out.append(text.substr(pos));
      break;
    }
    std::size_t close = text.find('}', open);
    if (close == std::string_view::npos) {
      out.append(text.substr(pos));  // a lone '{' is literal text
      break;
    }
    out.append(text.substr(pos, open - pos));
    std::string name(text.substr(open + 1, close - open - 1));
    auto it = scalars.find(name);
    if (it == scalars.end()) {
      return Status::Error(fmt::format("unknown placeholder {{{}}} in \"{}\"", name, text));
    }
    out.append(it->second);
    pos = close + 1;
  }
  return out;
}

StatusOr<std::vector<std::string>> ExpandArgv(const std::vector<std::string>& argv_template,
                                              const PlaceholderValues& values) {
  std::vector<std::string> argv;
  for (const std::string& element : argv_template) {
    if (element == kProbeArgsPlaceholder) {
      argv.insert(argv.end(), values.probe_args.begin(), values.probe_args.end());
      continue;
    }
    StatusOr<std::string> expanded = ExpandString(element, values.scalars);
    if (!expanded.ok()) return expanded.status();
    argv.push_back(std::move(*expanded));
  }
  return argv;
}

}  // namespace sandprobe
