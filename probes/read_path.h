// ReadPathFacts: the read attempt fs.read and fs.alias share, as facts. What is read and hashed
// is defined once in contract/path_content.h, which the runner uses to hash the host's own copy.
#pragma once

#include <sys/types.h>

#include <string>

#include <nlohmann/json.hpp>

namespace sandprobe {

// Adds to `fact`: on success "ok":true, "kind":"dir" with "entries", "truncated" and
// "sha256" (of the sorted names joined by "\n"), or "kind":"file"|"other" with "bytes",
// "truncated" and "sha256" (of the bytes read); on failure "ok":false, "step"
// ("open"|"fstat"|"read"|"readdir") and "errno" ("EACCES"). Once fstat succeeded, also "dev"
// ("major:minor") and "ino" of the object opened.
void ReadPathFacts(const std::string& path, nlohmann::json& fact);

// "dir", "file", "socket", "pipe", "char", "block", "symlink" or "other" for a st_mode.
const char* FileKindName(mode_t mode);

}  // namespace sandprobe
