// The mounted-canary witness ("mounted_canaries"): a canary file planted in each host directory
// the profile names in `canaries_in`, so a run proves whether the directories the user mounts
// into the sandbox leak, by the same hash-only rule as the run's own canary.
//
// Planted before the first launch (O_CREAT|O_EXCL under a random name: nothing is overwritten)
// and recorded in the run's owner.json, so `sandprobe sweep` removes them if this run dies;
// removed when the witness is destroyed (after the last launch, and on every error path, since
// the run holds the witness in a unique_ptr).
//
// Each canary is watched like the run's own (witness_canary_watch.h): an inotify watch from the
// witness's start to its Collect, re-verified after every launch. Collect gives each canary's
// watch as "watch" (CanaryWatch::Collect), which families/family_fs_canary_watch.cc judges.
//
// PlanValues: "count" and, per canary i, "<i>.label" (the host directory) and "<i>.inside" (the
// canary file's path inside the sandbox); the fs.read family expands one denied check per
// canary from them. Collect: [{"label", "host_path", "inside_path", "sha256", "present_at_collect"}].
#include <sys/stat.h>

#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "load/placeholders.h"
#include "launch/run_registry.h"
#include "witnesses/witness.h"
#include "witnesses/witness_canary_watch.h"
#include "witnesses/witnesses.h"

namespace sandprobe {
namespace {

struct Planted {
  std::string label;        // the host directory, placeholders expanded
  std::string inside_path;  // where the sandbox sees the canary file
  CanaryFile file;
  std::unique_ptr<CanaryWatch> watch;  // from just after planting to Collect
};

class MountedCanaryWitness final : public RunWitness {
 public:
  explicit MountedCanaryWitness(std::vector<Planted> planted) : planted_(std::move(planted)) {}

  std::string name() const override { return "mounted_canaries"; }

  std::map<std::string, std::string> PlanValues() const override {
    std::map<std::string, std::string> values = {{"count", std::to_string(planted_.size())}};
    for (std::size_t i = 0; i < planted_.size(); ++i) {
      values[fmt::format("{}.label", i)] = planted_[i].label;
      values[fmt::format("{}.inside", i)] = planted_[i].inside_path;
    }
    return values;
  }

  void AfterLaunch(const std::string& launch_id) override {
    for (Planted& p : planted_) p.watch->AfterLaunch(launch_id);
  }

  nlohmann::json Collect() override {
    nlohmann::json out = nlohmann::json::array();
    for (Planted& p : planted_) {
      // The launches are over: what the watch saw until now is the sandbox's doing.
      p.watch->Stop();
      struct stat st {};
      out.push_back({{"label", p.label},
                     {"host_path", p.file.path()},
                     {"inside_path", p.inside_path},
                     {"sha256", p.file.sha256()},
                     {"present_at_collect", ::lstat(p.file.path().c_str(), &st) == 0},
                     {"watch", p.watch->Collect()}});
    }
    return out;
  }

 private:
  std::vector<Planted> planted_;  // each CanaryFile unlinks its file when destroyed
};

StatusOr<std::unique_ptr<RunWitness>> StartMountedCanaryWitness(const WitnessSetup& setup) {
  std::vector<Planted> planted;
  for (const CanaryDir& dir : setup.profile.canaries_in) {
    StatusOr<std::string> host = ExpandString(dir.host, setup.profile.vars);
    StatusOr<std::string> inside = ExpandString(dir.inside, setup.profile.vars);
    if (!host.ok()) return host.status().WithContext(setup.profile.source_path + ": " + dir.where);
    if (!inside.ok()) return inside.status().WithContext(setup.profile.source_path + ": " + dir.where);
    std::string label = std::filesystem::path(*host).lexically_normal().string();
    if (label.size() > 1 && label.back() == '/') label.pop_back();
    if (label.empty() || label[0] != '/') {
      return Status::Error(fmt::format("{}: {}: canaries_in: host directory {} is not absolute",
                                       setup.profile.source_path, dir.where, *host));
    }
    StatusOr<CanaryFile> file = CanaryFile::Plant(label, "sandprobe-canary-");
    if (!file.ok()) {
      return file.status().WithContext(fmt::format("plant the canary of canaries_in {}", label));
    }
    RecordPlantedCanary(setup.run_dir, file->path());
    std::string name = std::filesystem::path(file->path()).filename().string();
    std::string inside_dir = *inside;
    while (inside_dir.size() > 1 && inside_dir.back() == '/') inside_dir.pop_back();
    std::unique_ptr<CanaryWatch> watch = CanaryWatch::Start(file->path(), file->sha256());
    planted.push_back({label, (inside_dir == "/" ? "" : inside_dir) + "/" + name, std::move(*file), std::move(watch)});
  }
  return std::unique_ptr<RunWitness>(new MountedCanaryWitness(std::move(planted)));
}

}  // namespace

std::vector<WitnessRow> FilesystemWitnesses() {
  return {{"mounted_canaries", {"fs.read"}, StartMountedCanaryWitness}};
}

}  // namespace sandprobe
