// HostView: where the witnesses read the host's own objects: the files the filesystem checks
// deny (witness_host_paths.h), the critical directories and the mount table
// (witness_host_mounts.h). By default that is the harness's own root and /proc/self/mountinfo.
//
// In a pod (docs/fleet.md, the DaemonSet) the harness's root is its image's, not the node's: a
// sandbox that shows the node's /etc/shadow was compared with the image's and passed as "a
// decoy". `--host-root DIR` reads the node through DIR instead: /proc/1/root in a pod with
// hostPID (the node's init's root; any node process's /proc/PID/root works), or a hostPath of /
// mounted recursively. Each path is resolved inside DIR (openat2 RESOLVE_IN_ROOT), so an
// absolute symlink on the node stays on the node. The mount table: for /proc/PID/root that
// process's own (/proc/PID/mountinfo: the namespace DIR is the root of); for any other DIR the
// one of its init (DIR/proc/1/mountinfo).
//
// What the harness itself hands the sandbox (its workspace, its probe directory) is read where
// the harness sees it, not through the view: the engine binds those paths as the harness named
// them.
#pragma once

#include <string>

#include "contract/path_content.h"
#include "model/status.h"

namespace sandprobe {

class HostView {
 public:
  HostView() = default;  // the harness's own root and mount table
  // A view through `root`: an error (naming --host-root) when it is no directory or its
  // proc/1/mountinfo cannot be read, so a wrong mount is said before the first launch instead of
  // every denied path reading "ENOENT" and passing.
  static StatusOr<HostView> Through(const std::string& root);

  // What reading `path` (absolute, as on the host) shows: contract/path_content.h's reading.
  PathContent Read(const std::string& path) const;
  // The host's mount table; "" and `error` set when it cannot be read.
  std::string MountinfoText(int* error) const;

  // "" for the harness's own root.
  const std::string& root() const { return root_; }

 private:
  HostView(std::string root, std::string mountinfo_path, bool mountinfo_in_root)
      : root_(std::move(root)), mountinfo_path_(std::move(mountinfo_path)), mountinfo_in_root_(mountinfo_in_root) {}
  // openat2(RESOLVE_IN_ROOT) of `path` under root_ with `flags`; -1 and errno on failure.
  int OpenInRoot(const std::string& path, int flags) const;

  std::string root_;
  std::string mountinfo_path_;     // the host's mount table
  bool mountinfo_in_root_ = false;  // resolved under root_ (else as the harness sees it)
};

}  // namespace sandprobe
