// Shared pieces of the resource families: argument parsing and small-file readings.
#include <time.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>

#include "probes/resource_families.h"

namespace sandprobe {

std::string ResourceArgs::Parse(const std::string& family, const FamilyArgs& args,
                                const std::map<std::string, long>& numeric_max, bool wants_dir) {
  for (std::size_t i = 0; i < args.size(); i += 2) {
    const std::string& name = args[i];
    if (i + 1 >= args.size()) return family + ": " + name + " needs a value";
    const std::string& value = args[i + 1];
    if (wants_dir && name == "--dir") {
      if (value.empty() || value[0] != '/') return family + ": --dir must be absolute";
      dir_ = value;
      continue;
    }
    auto limit = numeric_max.find(name.size() > 2 ? name.substr(2) : name);
    if (name.rfind("--", 0) != 0 || limit == numeric_max.end()) {
      return family + ": unknown argument " + name;
    }
    errno = 0;
    char* end = nullptr;
    long n = std::strtol(value.c_str(), &end, 10);
    if (errno != 0 || end == value.c_str() || *end != '\0' || n <= 0 || n > limit->second) {
      return family + ": " + name + ": expected 1.." + std::to_string(limit->second) + ", got " +
             value;
    }
    numbers_[limit->first] = n;
  }
  for (const auto& [name, max] : numeric_max) {
    if (!numbers_.count(name) && name.rfind("ceiling", 0) == 0) {
      return family + ": --" + name + " is required";
    }
  }
  if (wants_dir && dir_.empty()) return family + ": --dir is required";
  return "";
}

long ResourceArgs::Number(const std::string& name, long fallback) const {
  auto it = numbers_.find(name);
  return it == numbers_.end() ? fallback : it->second;
}

std::optional<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line.substr(0, 128);
}

void AddFileReading(nlohmann::json& fact, const std::string& key, const std::string& path) {
  std::optional<std::string> text = ReadSmallFile(path);
  if (!text) return;
  char* end = nullptr;
  errno = 0;
  long long n = std::strtoll(text->c_str(), &end, 10);
  if (errno == 0 && end != text->c_str() && *end == '\0') {
    fact[key] = n;
  } else {
    fact[key] = *text;
  }
}

long MonotonicMs() {
  struct timespec ts {};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000 + ts.tv_nsec / 1'000'000;
}

}  // namespace sandprobe
