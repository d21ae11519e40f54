// Sha256Hex: how probes report content without carrying it out of the sandbox.
//
// A fact holds the hash of what was read, never the bytes: the host compares it with the hash
// of a token it planted, so a leak is proven without the probe exfiltrating secrets into a
// report. Backed by libcrypto (statically linked into the probe and the harness).
#pragma once

#include <string>
#include <string_view>

namespace sandprobe {

// Lower-case hex SHA-256 of `bytes` (64 characters).
std::string Sha256Hex(std::string_view bytes);

}  // namespace sandprobe
