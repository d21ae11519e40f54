// The host canary's watch ("canary_watch"): what the host itself saw happen to the run's canary
// file while the probes ran, whatever the probes reported.
//
// An inotify watch sits on the canary's inode from just before the first launch to just after
// the last one. inotify is per inode, so it sees an open through any path and any mount that
// reaches that inode: a bind mount, /proc/<pid>/root, a runtime's gofer. A refused open (EACCES,
// ENOENT, an LSM) creates no event; only a successful one does, and a read needs one. So
// any IN_OPEN is a leak, even when a launcher rewrites the probe's answer.
//
// After each launch (AfterLaunch) the canary is re-verified: its path still names the same
// inode (device, inode number), with the same mode, and its content still hashes to what was
// planted. The content is read through a descriptor opened before the watch started (pread on
// it makes IN_ACCESS, which is not watched; an open would look like the sandbox's). A canary that
// was written, chmod'ed, moved, replaced or deleted is a write to the host.
//
// Collect:
//   {"path", "watched": bool, "error"?: why the watch could not start,
//    "opens":   [{"after_launch": id, "count": n, "overflow"?: true}],   n is a lower bound:
//               inotify merges identical events queued in a row
//    "changes": [{"after_launch": id, "what": "..."}],   each change once, when first seen
//    "verified": number of re-verifications}
// "after_launch" is the launch whose end the events were read at; with --jobs > 1 other
// launches ran beside it.
#pragma once

#include <memory>
#include <string>

#include "model/status.h"
#include "witnesses/witness.h"

namespace sandprobe {

class CanaryWatch final : public RunWitness {
 public:
  // Watches the canary at `path` whose content hashes to `sha256`. Never fails: a watch that
  // cannot start says why in Collect ("watched": false), and the canary checks then rest on the
  // probe's word alone.
  static std::unique_ptr<CanaryWatch> Start(const std::string& path, const std::string& sha256);
  ~CanaryWatch() override;
  CanaryWatch(const CanaryWatch&) = delete;
  CanaryWatch& operator=(const CanaryWatch&) = delete;

  std::string name() const override { return "canary_watch"; }
  void AfterLaunch(const std::string& launch_id) override;
  // Reads the last events and re-verifies once more, then closes the watch: what happens to the
  // canary after the launches (the run dir's removal) is the harness's own doing.
  void Stop();
  nlohmann::json Collect() override;

 private:
  CanaryWatch(std::string path, std::string sha256) : path_(std::move(path)), sha256_(std::move(sha256)) {}
  void ReadEvents(const std::string& launch_id);
  void Reverify(const std::string& launch_id);
  void Changed(const std::string& launch_id, const std::string& what);

  std::string path_;
  std::string sha256_;
  int file_fd_ = -1;     // the canary, opened before the watch
  int inotify_fd_ = -1;  // non-blocking
  unsigned long long dev_ = 0, ino_ = 0;
  unsigned mode_ = 0;
  std::string error_;
  nlohmann::json opens_ = nlohmann::json::array();
  nlohmann::json changes_ = nlohmann::json::array();
  int verified_ = 0;
};

}  // namespace sandprobe
