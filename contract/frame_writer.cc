#include "contract/frame_writer.h"

#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "contract/protocol.h"
#include "contract/errno_name.h"

namespace sandprobe {

std::string FormatFrame(std::string_view nonce, const nlohmann::json& fact) {
  std::string line(kFramePrefix);
  line += nonce;
  line += ' ';
  line += fact.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  line += '\n';
  return line;
}

void FrameWriter::Emit(const nlohmann::json& fact) const {
  const std::string line = FormatFrame(nonce_, fact);
  // Facts are small (a few hundred bytes, below PIPE_BUF), so one write(2) puts the whole line
  // into a pipe atomically; the loop only finishes a short write or retries EINTR.
  std::size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string msg =
          "sandprobe-probe: write(stdout): " + ErrnoName(n < 0 ? errno : EIO) + "\n";
      ssize_t ignored = ::write(2, msg.data(), msg.size());
      (void)ignored;
      return;
    }
    done += static_cast<std::size_t>(n);
  }
}

bool IsValidUtf8(std::string_view bytes) {
  std::size_t i = 0;
  while (i < bytes.size()) {
    const auto c = static_cast<std::uint8_t>(bytes[i]);
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > bytes.size()) return false;
    for (std::size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<std::uint8_t>(bytes[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are invalid (RFC 3629).
    const bool overlong = (len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
                          (len == 4 && cp < 0x10000);
    if (overlong || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return false;
    i += len;
  }
  return true;
}

std::string HexEncode(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char ch : bytes) {
    const auto b = static_cast<std::uint8_t>(ch);
    out += kDigits[b >> 4];
    out += kDigits[b & 0x0F];
  }
  return out;
}

void SetBytesField(nlohmann::json& fact, const std::string& key, std::string_view value) {
  fact[key] = std::string(value);
  if (!IsValidUtf8(value)) fact[key + "_hex"] = HexEncode(value);
}

}  // namespace sandprobe
