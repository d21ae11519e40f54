#include "load/data_dir.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace sandprobe {
namespace {

namespace fs = std::filesystem;

constexpr DataKind kAllKinds[] = {DataKind::kSandbox, DataKind::kPolicy, DataKind::kSuite};

constexpr DataLayout kLayouts[] = {
    {.name = "installed", .data = "../share/sandprobe", .probe = "../lib/sandprobe"},
    {.name = "build tree", .data = "sandprobe-data", .probe = "probe"},
};

// `dir` without symlinks and dot-dots when it exists, else lexically normal.
std::string Canonical(const fs::path& dir) {
  std::error_code ec;
  fs::path canonical = fs::canonical(dir, ec);
  return (ec ? dir.lexically_normal() : canonical).string();
}

bool LooksLikePath(const std::string& arg) {
  return arg.find('/') != std::string::npos ||
         (arg.size() >= 5 && arg.compare(arg.size() - 5, 5, ".json") == 0);
}

bool IsRegularFile(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

std::string BuiltinPath(DataKind kind, const std::string& name, const std::string& data_dir) {
  return (fs::path(data_dir) / DataKindSubdir(kind) / (name + ".json")).string();
}

// "; did you mean X?" or "".
std::string DidYouMean(const std::string& name, const std::vector<std::string>& names) {
  std::string near = NearestName(name, names);
  return near.empty() ? "" : fmt::format("; did you mean {}?", near);
}

}  // namespace

std::span<const DataLayout> DataLayouts() { return kLayouts; }

DataPaths DiscoverDataPaths(const std::string& executable) {
  const fs::path bin = fs::path(executable).parent_path();
  for (const DataLayout& layout : kLayouts) {
    std::error_code ec;
    if (fs::is_directory(bin / layout.data / "suites", ec)) {
      return {.data_dir = Canonical(bin / layout.data), .probe_dir = Canonical(bin / layout.probe)};
    }
  }
  return {.data_dir = Canonical(bin / kLayouts[0].data), .probe_dir = Canonical(bin / kLayouts[0].probe)};
}

std::string ProbeDirFor(const std::string& native_probe_dir, ProbeRuntime runtime) {
  std::string dir = native_probe_dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir + std::string(ProbeRuntimeInfo(runtime).dir_suffix);
}

std::string SelfExecutable() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "" : self.string();
}

std::string_view DataKindName(DataKind kind) {
  switch (kind) {
    case DataKind::kSandbox: return "sandbox";
    case DataKind::kPolicy: return "policy";
    case DataKind::kSuite: return "suite";
  }
  return "?";
}

std::string_view DataKindSubdir(DataKind kind) {
  switch (kind) {
    case DataKind::kSandbox: return "sandboxes";
    case DataKind::kPolicy: return "policies";
    case DataKind::kSuite: return "suites";
  }
  return "?";
}

std::vector<std::string> DataNames(DataKind kind, const std::string& data_dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(data_dir) / DataKindSubdir(kind), ec)) {
    if (entry.path().extension() == ".json" && IsRegularFile(entry.path())) {
      names.push_back(entry.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

StatusOr<std::string> ResolveDataFile(DataKind kind, const std::string& arg,
                                      const std::string& data_dir) {
  if (LooksLikePath(arg)) return arg;
  std::string builtin = BuiltinPath(kind, arg, data_dir);
  if (IsRegularFile(builtin)) return builtin;
  if (IsRegularFile(arg)) return arg;
  std::vector<std::string> names = DataNames(kind, data_dir);
  fs::path dir = fs::path(data_dir) / DataKindSubdir(kind);
  if (names.empty()) {
    return Status::Error(fmt::format("--{} {}: no such file, and {} holds no {} (--data-dir)",
                                     DataKindName(kind), arg, dir.string(), DataKindName(kind)));
  }
  return Status::Error(fmt::format("--{} {}: no such file or built-in {}{}; the {} in {}: {}",
                                   DataKindName(kind), arg, DataKindName(kind),
                                   DidYouMean(arg, names), DataKindSubdir(kind), dir.string(),
                                   fmt::join(names, ", ")));
}

Status ResolveRunInputs(const std::string& data_dir, std::string& sandbox, std::string& policy,
                        std::string& suite) {
  for (auto [kind, value] : {std::pair{DataKind::kSandbox, &sandbox},
                             std::pair{DataKind::kPolicy, &policy},
                             std::pair{DataKind::kSuite, &suite}}) {
    if (value->empty()) continue;
    StatusOr<std::string> path = ResolveDataFile(kind, *value, data_dir);
    if (!path.ok()) return path.status();
    *value = *path;
  }
  return Status::Ok();
}

StatusOr<std::vector<std::string>> ResolveSuites(const std::vector<std::string>& args,
                                                 const std::string& data_dir) {
  std::vector<std::string> names;
  for (const std::string& arg : args) {
    for (std::size_t start = 0; start <= arg.size();) {
      std::size_t comma = std::min(arg.find(',', start), arg.size());
      std::string name = arg.substr(start, comma - start);
      if (name.empty()) return Status::Error(fmt::format("--suite {}: an empty suite name", arg));
      if (name == kAllSuites) {
        std::vector<std::string> every = DataNames(DataKind::kSuite, data_dir);
        if (every.empty()) {
          return Status::Error(fmt::format("--suite all: {} holds no suite (--data-dir)",
                                           (fs::path(data_dir) / "suites").string()));
        }
        names.insert(names.end(), every.begin(), every.end());
      } else {
        names.push_back(std::move(name));
      }
      start = comma + 1;
    }
  }
  std::vector<std::string> files;
  for (const std::string& name : names) {
    StatusOr<std::string> path = ResolveDataFile(DataKind::kSuite, name, data_dir);
    if (!path.ok()) return path.status();
    if (std::find(files.begin(), files.end(), *path) == files.end()) files.push_back(*path);
  }
  return files;
}

StatusOr<std::vector<std::string>> ResolveAnyDataFile(const std::string& arg,
                                                      const std::string& data_dir) {
  if (LooksLikePath(arg)) return std::vector<std::string>{arg};
  std::vector<std::string> found;
  for (DataKind kind : kAllKinds) {
    std::string builtin = BuiltinPath(kind, arg, data_dir);
    if (IsRegularFile(builtin)) found.push_back(builtin);
  }
  if (found.empty() && IsRegularFile(arg)) found.push_back(arg);
  if (!found.empty()) return found;
  std::string message = fmt::format("{}: no such file or built-in sandbox, policy or suite", arg);
  std::vector<std::string> every;
  for (DataKind kind : kAllKinds) {
    std::vector<std::string> names = DataNames(kind, data_dir);
    every.insert(every.end(), names.begin(), names.end());
  }
  message += DidYouMean(arg, every);
  for (DataKind kind : kAllKinds) {
    message += fmt::format("; {}: {}", DataKindSubdir(kind), fmt::join(DataNames(kind, data_dir), ", "));
  }
  return Status::Error(message);
}

std::vector<std::string> ResolveValidateArgs(const std::vector<std::string>& args,
                                             const std::string& data_dir) {
  std::vector<std::string> out;
  for (const std::string& arg : args) {
    StatusOr<std::vector<std::string>> files = ResolveAnyDataFile(arg, data_dir);
    if (files.ok()) out.insert(out.end(), files->begin(), files->end());
    else out.push_back(arg);
  }
  return out;
}

std::size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string NearestName(std::string_view name, const std::vector<std::string>& candidates) {
  std::size_t limit = std::max<std::size_t>(1, name.size() / 3);
  std::string best;
  std::size_t best_distance = limit + 1;
  for (const std::string& candidate : candidates) {
    std::size_t d = EditDistance(name, candidate);
    if (d < best_distance) {
      best = candidate;
      best_distance = d;
    }
  }
  return best;
}

}  // namespace sandprobe
