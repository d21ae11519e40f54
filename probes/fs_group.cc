// The filesystem and environment families (fs_read.cc, fs_write.cc, fs_alias.cc, fs_mounts.cc,
// fs_storage.cc, env_secret.cc).
#include "probes/families.h"

namespace sandprobe {

std::vector<ProbeFamilyRow> FilesystemProbeFamilies() {
  return {
      {"fs.read", "PATH...", CheckFsReadArgs, RunFsRead},
      {"fs.write", "DIR...", CheckFsWriteArgs, RunFsWrite},
      {"fs.alias", "--scratch DIR PATH...", CheckFsAliasArgs, RunFsAlias},
      {"fs.mounts", "", CheckFsMountsArgs, RunFsMounts},
      {"fs.storage", "[DIR...]", CheckFsStorageArgs, RunFsStorage},
      {"env.secret", "PREFIX", CheckEnvSecretArgs, RunEnvSecret},
  };
}

}  // namespace sandprobe
