#include "model/check_id.h"

#include <array>

namespace sandprobe {
namespace {

struct Spelling {
  std::string_view placeholder;  // up to and including '}' or ':'
  std::string_view word;
  bool takes_argument;  // "{mounted_canary:DIR}": the argument stays, the closing brace goes
};

constexpr std::array<Spelling, 3> kSpellings = {{
    {"{host_canary}", "host-canary", false},
    {"{workspace}", "workspace", false},
    {"{mounted_canary:", "mounted-canary:", true},
}};

}  // namespace

std::string PlaceholderFreeId(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const Spelling* match = nullptr;
    for (const Spelling& s : kSpellings) {
      if (text.substr(i).starts_with(s.placeholder)) match = &s;
    }
    if (match == nullptr) {
      out.push_back(text[i++]);
      continue;
    }
    out += match->word;
    i += match->placeholder.size();
    if (match->takes_argument) {
      const std::size_t close = text.find('}', i);
      if (close == std::string_view::npos) {  // not a placeholder after all: keep it as written
        out.resize(out.size() - match->word.size());
        out += match->placeholder;
        continue;
      }
      out += text.substr(i, close - i);
      i = close + 1;
    }
  }
  return out;
}

}  // namespace sandprobe
