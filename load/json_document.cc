#include "load/json_document.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace sandprobe {
namespace {

using json = nlohmann::json;

// `//` and `/* */` comments, as nlohmann's ignore_comments reads them.
std::size_t SkipSpaceAndComments(const std::string& t, std::size_t i) {
  while (i < t.size()) {
    char c = t[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
    } else if (c == '/' && i + 1 < t.size() && t[i + 1] == '/') {
      // As nlohmann ends a line comment: at '\n', '\r' or NUL.
      while (i < t.size() && t[i] != '\n' && t[i] != '\r' && t[i] != '\0') ++i;
    } else if (c == '/' && i + 1 < t.size() && t[i + 1] == '*') {
      std::size_t end = t.find("*/", i + 2);
      i = end == std::string::npos ? t.size() : end + 2;
    } else {
      break;
    }
  }
  return i;
}

// Offset just past the string literal whose opening quote is at `i`.
std::size_t SkipString(const std::string& t, std::size_t i) {
  for (++i; i < t.size(); ++i) {
    if (t[i] == '\\') {
      ++i;
    } else if (t[i] == '"') {
      return i + 1;
    }
  }
  return t.size();
}

// Offset of the first `{` or `[` that opens level kMaxJsonDepth + 1, or npos. Reliable up to
// the first syntax error, which is all the caller relies on.
std::size_t FindTooDeep(const std::string& t) {
  int depth = 0;
  for (std::size_t i = SkipSpaceAndComments(t, 0); i < t.size();
       i = SkipSpaceAndComments(t, i)) {
    char c = t[i];
    if (c == '"') {
      i = SkipString(t, i);
      continue;
    }
    if (c == '{' || c == '[') {
      if (++depth > kMaxJsonDepth) return i;
    } else if (c == '}' || c == ']') {
      --depth;
    }
    ++i;
  }
  return std::string::npos;
}

// nlohmann's message minus its "[json.exception.parse_error.101] parse error at line 1,
// column 2: " prefix, which would repeat the position in another format.
std::string ParseErrorDetail(const json::parse_error& e) {
  std::string what = e.what();
  std::size_t at = what.find(": ");
  if (at != std::string::npos) what = what.substr(at + 2);
  constexpr std::string_view kPrefix = "syntax error ";
  if (what.rfind(kPrefix, 0) == 0) what = what.substr(kPrefix.size());
  return what;
}

// Where nlohmann stopped on an error that is not a parse error (out_of_range.406, a number too
// big for a double): the DOM parser drops the position, the SAX interface has it. Only run on
// that error path. The offset is the start of the offending token.
class ErrorPositionSax : public json::json_sax_t {
 public:
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception&) override {
    offset = position >= last_token.size() ? position - last_token.size() : 0;
    found = true;
    return false;
  }
  std::size_t offset = 0;
  bool found = false;
};

// The pointer as text for a message; control characters (a NUL in a key) are shown escaped so
// the message stays one readable line.
std::string PointerText(const JsonPointer& ptr) {
  std::string out;
  for (char c : ptr.to_string()) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      out += fmt::format("\\u{:04x}", u);
    } else {
      out += c;
    }
  }
  return out;
}

// "a FIFO": what a file that is not a regular one is, for the error refusing it.
std::string_view FileKind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "of an unknown file type";
}

}  // namespace

// Walks text that nlohmann already accepted and records where each key and value starts.
// Recursion is bounded: FindTooDeep rejected documents deeper than kMaxJsonDepth.
class PositionScanner {
 public:
  explicit PositionScanner(JsonDocument& doc) : doc_(doc), t_(doc.text_) {}

  Status Run() {
    std::size_t start = t_.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;  // nlohmann skips a BOM too
    i_ = start;
    return Value();
  }

 private:
  Status Value() {
    i_ = SkipSpaceAndComments(t_, i_);
    doc_.value_offsets_[ptr_.to_string()] = i_;
    char c = i_ < t_.size() ? t_[i_] : '\0';
    if (c == '{') return Object();
    if (c == '[') return Array();
    if (c == '"') {
      i_ = SkipString(t_, i_);
    } else {  // number or literal
      while (i_ < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[i_])) ||
                                t_[i_] == '.' || t_[i_] == '+' || t_[i_] == '-')) {
        ++i_;
      }
    }
    return Status::Ok();
  }

  // The character at `i`, or NUL past the end: the scanner never reads out of bounds, even
  // if it and nlohmann ever disagree about the text.
  char At(std::size_t i) const { return i < t_.size() ? t_[i] : '\0'; }

  Status Object() {
    ++i_;  // '{'
    i_ = SkipSpaceAndComments(t_, i_);
    if (At(i_) == '}') return ++i_, Status::Ok();
    while (i_ < t_.size()) {
      i_ = SkipSpaceAndComments(t_, i_);
      std::size_t key_start = i_;
      i_ = SkipString(t_, i_);
      // Let nlohmann decode escapes so the pointer matches the parsed key exactly.
      json key_json = json::parse(t_.substr(key_start, i_ - key_start), nullptr, false);
      // Out of step with the parser (a bug, never bad input: nlohmann accepted the text):
      // stop recording; Where() falls back to the nearest recorded ancestor.
      if (!key_json.is_string()) return Status::Ok();
      std::string key = key_json.get<std::string>();
      JsonPointer parent = ptr_;
      ptr_.push_back(key);
      auto [it, inserted] = doc_.key_offsets_.emplace(ptr_.to_string(), key_start);
      if (!inserted) {
        std::size_t first = it->second;
        it->second = key_start;  // so ErrorAtKey points at this, the second one
        return doc_.ErrorAtKey(parent, key,
                               fmt::format("duplicate key (first at {})", doc_.LineCol(first)));
      }
      i_ = SkipSpaceAndComments(t_, i_) + 1;  // ':'
      if (Status s = Value(); !s.ok()) return s;
      ptr_.pop_back();
      i_ = SkipSpaceAndComments(t_, i_);
      if (At(i_++) == '}') return Status::Ok();  // else ','
    }
    return Status::Ok();
  }

  Status Array() {
    ++i_;  // '['
    i_ = SkipSpaceAndComments(t_, i_);
    if (At(i_) == ']') return ++i_, Status::Ok();
    for (std::size_t index = 0; i_ < t_.size(); ++index) {
      ptr_.push_back(std::to_string(index));
      if (Status s = Value(); !s.ok()) return s;
      ptr_.pop_back();
      i_ = SkipSpaceAndComments(t_, i_);
      if (At(i_++) == ']') return Status::Ok();  // else ','
    }
    return Status::Ok();
  }

  JsonDocument& doc_;
  const std::string& t_;
  std::size_t i_ = 0;
  JsonPointer ptr_;
};

StatusOr<JsonDocument> JsonDocument::Parse(std::string text, std::string file_name) {
  if (text.size() > kMaxJsonBytes) {
    return Status::Error(fmt::format("{}: {} bytes, more than the limit of {} bytes (1 MiB)",
                                     file_name, text.size(), kMaxJsonBytes));
  }
  JsonDocument doc;
  doc.text_ = std::move(text);
  doc.file_name_ = std::move(file_name);
  doc.line_starts_.push_back(0);
  std::size_t chars = 0;
  for (std::size_t i = 0; i < doc.text_.size(); ++i) {
    if (doc.text_[i] == '\n') doc.line_starts_.push_back(i + 1);
    if (i % JsonDocument::kCharsPerCheckpoint == 0) doc.chars_before_checkpoint_.push_back(chars);
    if ((static_cast<unsigned char>(doc.text_[i]) & 0xC0) != 0x80) ++chars;  // not a UTF-8 tail
  }
  // Parse only up to the first too-deep bracket: a syntax error before it is the first
  // error; otherwise the prefix ends early (at that bracket) and the depth is the error.
  std::size_t too_deep = FindTooDeep(doc.text_);
  std::string_view input(doc.text_);
  if (too_deep != std::string::npos) input = input.substr(0, too_deep);
  try {
    doc.root_ = json::parse(input, nullptr, /*allow_exceptions=*/true, /*ignore_comments=*/true);
  } catch (const json::parse_error& e) {
    // e.byte counts characters read, including the offending one.
    std::size_t offset = e.byte == 0 ? 0 : e.byte - 1;
    if (too_deep == std::string::npos || offset < too_deep) {
      return Status::Error(fmt::format("{}:{}: syntax error: {}", doc.file_name_,
                                       doc.LineCol(offset), ParseErrorDetail(e)));
    }
  } catch (const json::exception& e) {
    // Not a syntax error but still unusable (out_of_range.406: a number beyond a double, such
    // as 1e400, which would be infinity). The DOM parser gives no position; SAX does.
    ErrorPositionSax sax;
    json::sax_parse(input, &sax, json::input_format_t::json, /*strict=*/true,
                    /*ignore_comments=*/true);
    if (sax.found) {
      return Status::Error(fmt::format("{}:{}: invalid JSON: {}", doc.file_name_,
                                       doc.LineCol(sax.offset), e.what()));
    }
    return Status::Error(fmt::format("{}: invalid JSON: {}", doc.file_name_, e.what()));
  }
  if (too_deep != std::string::npos) {
    return Status::Error(fmt::format("{}:{}: nesting deeper than {} levels", doc.file_name_,
                                     doc.LineCol(too_deep), kMaxJsonDepth));
  }
  if (Status s = PositionScanner(doc).Run(); !s.ok()) return s;
  return doc;
}

StatusOr<JsonDocument> JsonDocument::Load(const std::string& path) {
  // O_NONBLOCK: opening a FIFO with no writer (or a terminal) returns at once instead of
  // waiting; the fstat of this very descriptor then refuses it (no stat-then-open race).
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return Status::Error(fmt::format("open({}): {}", path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return Status::Error(fmt::format("fstat({}): {}", path, std::strerror(err)));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::Error(fmt::format("{}: is {}, not a regular file", path, FileKind(st.st_mode)));
  }
  std::string text;
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return Status::Error(fmt::format("read({}): {}", path, std::strerror(err)));
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > kMaxJsonBytes) break;  // enough to report it as too big
  }
  ::close(fd);
  if (text.size() > kMaxJsonBytes) {
    return Status::Error(
        fmt::format("{}: larger than the limit of {} bytes (1 MiB)", path, kMaxJsonBytes));
  }
  return Parse(std::move(text), path);
}

std::size_t JsonDocument::CharsBefore(std::size_t offset) const {
  offset = std::min(offset, text_.size());
  if (chars_before_checkpoint_.empty()) return 0;  // empty text
  std::size_t checkpoint = std::min(offset / kCharsPerCheckpoint, chars_before_checkpoint_.size() - 1);
  std::size_t chars = chars_before_checkpoint_[checkpoint];
  for (std::size_t i = checkpoint * kCharsPerCheckpoint; i < offset; ++i) {
    if ((static_cast<unsigned char>(text_[i]) & 0xC0) != 0x80) ++chars;
  }
  return chars;
}

SourcePosition JsonDocument::PositionAt(std::size_t offset) const {
  auto next = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  std::size_t line = static_cast<std::size_t>(next - line_starts_.begin());
  std::size_t col = CharsBefore(offset) - CharsBefore(line_starts_[line - 1]) + 1;
  return {static_cast<int>(line), static_cast<int>(col)};
}

std::string JsonDocument::LineCol(std::size_t offset) const {
  const SourcePosition pos = PositionAt(offset);
  return fmt::format("{}:{}", pos.line, pos.column);
}

SourcePosition JsonDocument::PositionOf(const JsonPointer& ptr) const {
  return PositionAt(OffsetOf(ptr));
}

PolicyRef JsonDocument::RefTo(const JsonPointer& ptr) const {
  return PolicyRef{.file = file_name_, .pointer = ptr.to_string(), .position = PositionOf(ptr)};
}

std::size_t JsonDocument::OffsetOf(const JsonPointer& ptr) const {
  for (JsonPointer p = ptr;; p = p.parent_pointer()) {
    if (auto it = value_offsets_.find(p.to_string()); it != value_offsets_.end()) {
      return it->second;
    }
    if (p.empty()) return 0;
  }
}

std::string JsonDocument::Where(const JsonPointer& ptr) const {
  return fmt::format("{}:{}", file_name_, LineCol(OffsetOf(ptr)));
}

std::string JsonDocument::WhereKey(const JsonPointer& object_ptr, const std::string& key) const {
  auto it = key_offsets_.find((object_ptr / key).to_string());
  if (it == key_offsets_.end()) return Where(object_ptr);
  return fmt::format("{}:{}", file_name_, LineCol(it->second));
}

Status JsonDocument::ErrorAt(const JsonPointer& ptr, std::string_view what) const {
  if (ptr.empty()) return Status::Error(fmt::format("{}: {}", Where(ptr), what));
  return Status::Error(fmt::format("{}: {}: {}", Where(ptr), PointerText(ptr), what));
}

Status JsonDocument::ErrorAtKey(const JsonPointer& object_ptr, const std::string& key,
                                std::string_view what) const {
  return Status::Error(fmt::format("{}: {}: {}", WhereKey(object_ptr, key),
                                   PointerText(object_ptr / key), what));
}

}  // namespace sandprobe
