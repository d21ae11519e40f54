#include "cli/color_choice.h"

#include <unistd.h>

#include <cstdlib>

namespace sandprobe {
namespace {

// Set to something: an empty value counts as unset (no-color.org, force-color.org).
bool NonEmpty(const std::optional<std::string>& value) { return value && !value->empty(); }

std::optional<std::string> Env(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::optional<std::string>(value) : std::nullopt;
}

}  // namespace

bool UseColor(const ColorInputs& inputs) {
  if (inputs.no_color_flag || NonEmpty(inputs.no_color)) return false;
  // "0" is how FORCE_COLOR is commonly switched off (Node, CLICOLOR_FORCE): not a force.
  if (NonEmpty(inputs.force_color) && *inputs.force_color != "0") return true;
  return inputs.is_terminal;
}

bool UseColor(bool no_color_flag, std::FILE* stream) {
  return UseColor({.no_color_flag = no_color_flag,
                   .no_color = Env("NO_COLOR"),
                   .force_color = Env("FORCE_COLOR"),
                   .is_terminal = ::isatty(::fileno(stream)) == 1});
}

}  // namespace sandprobe
