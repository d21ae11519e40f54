// ReadPathFacts: the read attempt fs.read and fs.alias share.
//
// Opens with O_NONBLOCK|O_NOCTTY|O_CLOEXEC so a FIFO or a tty cannot hang the probe or become
// its controlling terminal; symlinks are followed (the fs.alias symlink variant relies on it).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace sandprobe {

// Adds to `fact`: on success "ok":true, "kind":"dir" with "entries", "truncated" and
// "sha256" (of the sorted names joined by "\n"), or "kind":"file"|"other" with "bytes",
// "truncated" and "sha256" (of the bytes read); on failure "ok":false, "step"
// ("open"|"fstat"|"read"|"readdir") and "errno" ("EACCES").
void ReadPathFacts(const std::string& path, nlohmann::json& fact);

}  // namespace sandprobe
