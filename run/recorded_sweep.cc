#include "run/recorded_sweep.h"

#include <fmt/format.h>

#include "load/placeholders.h"

namespace sandprobe {
namespace {

constexpr std::string_view kIdPlaceholder = "{id}";

// `text` expanded with `scalars`, split at each {id}: the pieces a listed id joins. The same
// grammar as ExpandString ({name} up to the first '}', a lone '{' literal), which expands each
// piece between them.
StatusOr<std::vector<std::string>> ExpandAroundId(const std::string& text,
                                                  const std::map<std::string, std::string>& scalars) {
  std::vector<std::string> raw_pieces(1);
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t open = text.find('{', pos);
    std::size_t close = open == std::string::npos ? open : text.find('}', open);
    if (close == std::string::npos) {
      raw_pieces.back() += text.substr(pos);
      break;
    }
    raw_pieces.back() += text.substr(pos, open - pos);
    std::string_view placeholder(text.data() + open, close - open + 1);
    if (placeholder == kIdPlaceholder) raw_pieces.emplace_back();
    else raw_pieces.back() += placeholder;
    pos = close + 1;
  }
  std::vector<std::string> pieces;
  for (const std::string& raw : raw_pieces) {
    StatusOr<std::string> expanded = ExpandString(raw, scalars);
    if (!expanded.ok()) return expanded.status();
    pieces.push_back(std::move(*expanded));
  }
  return pieces;
}

}  // namespace

std::map<std::string, std::string> SweepScalars(const Profile& profile, const std::string& run_id,
                                                const std::string& workspace, const std::string& probe_dir) {
  std::map<std::string, std::string> scalars(profile.vars.begin(), profile.vars.end());
  scalars["run_id"] = run_id;
  scalars["instance"] = "";
  scalars["probe_dir"] = probe_dir;
  scalars["workspace"] = workspace;
  StatusOr<std::string> probe = ExpandString(profile.probe_path, scalars);
  scalars["probe"] = probe.ok() ? *probe : profile.probe_path;
  return scalars;
}

StatusOr<std::vector<RecordedSweep>> ExpandSweepsForRecord(const Profile& profile,
                                                           const std::map<std::string, std::string>& scalars) {
  std::vector<RecordedSweep> recorded;
  for (std::size_t i = 0; i < profile.sweeps.size(); ++i) {
    const SweepSpec& spec = profile.sweeps[i];
    RecordedSweep sweep;
    StatusOr<std::vector<std::string>> list = ExpandArgv(spec.list, PlaceholderValues{scalars, {}});
    if (!list.ok()) return list.status().WithContext(fmt::format("{}: sweep {} list", profile.source_path, i));
    sweep.list = std::move(*list);
    for (const std::string& element : spec.remove) {
      StatusOr<std::vector<std::string>> pieces = ExpandAroundId(element, scalars);
      if (!pieces.ok()) return pieces.status().WithContext(fmt::format("{}: sweep {} remove", profile.source_path, i));
      sweep.remove.push_back(std::move(*pieces));
    }
    recorded.push_back(std::move(sweep));
  }
  return recorded;
}

}  // namespace sandprobe
