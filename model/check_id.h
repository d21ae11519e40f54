// Check ids are the same text in every report format and free of template placeholders: a
// check about the policy's "{host_canary}" is "fs.read.denied:host-canary", not a template that
// looks never expanded (and that JUnit once spelled "(host canary)" while JSON kept the braces).
#pragma once

#include <string>
#include <string_view>

namespace sandprobe {

// `text` with each policy placeholder spelled as a word: "{host_canary}" -> "host-canary",
// "{workspace}/out" -> "workspace/out", "{mounted_canary:/root}" -> "mounted-canary:/root".
// Only the placeholders policies and profiles have; other braces (a real path "/srv/{a}")
// stay. Used where ids are made, and on ids and globs written before ids changed (a waiver
// naming "fs.read.denied:{host_canary}", an older report), so both spellings mean one check.
std::string PlaceholderFreeId(std::string_view text);

}  // namespace sandprobe
