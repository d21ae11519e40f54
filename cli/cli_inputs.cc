#include "cli/cli_inputs.h"

#include <cstdlib>

#include <fmt/format.h>

#include "io/run_root.h"

namespace sandprobe {

void RefuseEmptyValues(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) RefuseEmptyValues(*sub);
  const CLI::Validator non_empty(
      [](std::string& value) {
        return value.empty() ? std::string("an empty value: name what is meant (a file, or - for stdout)")
                             : std::string();
      },
      "", "NONEMPTY");
  for (CLI::Option* option : app.get_options()) {
    if (option->get_expected_min() == 0) continue;  // a flag: it takes no value
    option->check(non_empty);
  }
}

StatusOr<std::vector<std::string>> SplitCommaList(const std::string& option, const std::vector<std::string>& given) {
  std::vector<std::string> items;
  for (const std::string& value : given) {
    std::size_t start = 0;
    for (;;) {
      const std::size_t comma = value.find(',', start);
      std::string item = value.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (item.empty()) {
        return Status::Error(fmt::format("{} \"{}\": item {} is empty (a stray comma?)", option, value,
                                                items.size() + 1));
      }
      items.push_back(std::move(item));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return items;
}

Status CheckEnvironment() {
  const char* root = std::getenv(kRunRootEnv);
  if (root != nullptr && root[0] != '/') {
    return Status::Error(fmt::format("{}=\"{}\": must be an absolute path (unset it for {})", kRunRootEnv, root,
                                     kRunDirParent));
  }
  return Status::Ok();
}

}  // namespace sandprobe
