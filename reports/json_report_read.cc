#include "reports/json_report_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>

#include <fmt/format.h>

#include "model/errno_text.h"

namespace sandprobe {
namespace {

using nlohmann::json;

std::optional<int> OptionalInt(const json& value) {
  if (value.is_null()) return std::nullopt;
  return value.get<int>();
}

std::vector<LeftoverProcess> Processes(const json& launch, const char* key) {
  std::vector<LeftoverProcess> out;
  if (!launch.contains(key)) return out;
  for (const json& p : launch.at(key)) out.push_back({p.at("pid").get<int>(), p.at("argv").get<std::string>()});
  return out;
}

LaunchRecord ReadLaunch(const json& l) {
  LaunchRecord r;
  r.id = l.at("id").get<std::string>();
  r.instance = l.at("instance").get<std::string>();
  r.purpose = l.at("purpose").get<std::string>();
  r.argv = l.at("argv").get<std::vector<std::string>>();
  r.exit_code = OptionalInt(l.at("exit_code"));
  r.signal = OptionalInt(l.at("signal"));
  r.timed_out = l.at("timed_out").get<bool>();
  r.wall_ms = l.at("wall_ms").get<std::int64_t>();
  r.error = l.at("error").get<std::string>();
  r.executable = l.at("executable").get<std::string>();
  r.executable_sha256 = l.at("executable_sha256").get<std::string>();
  r.executable_warning = l.at("executable_warning").get<std::string>();
  r.stdout_tail = l.at("stdout_tail").get<std::string>();
  r.stderr_tail = l.at("stderr_tail").get<std::string>();
  r.frames.done = l.at("done").get<bool>();
  r.frames.protocol_errors = l.at("protocol_errors").get<std::vector<std::string>>();
  r.frames.noise_lines = l.at("noise_lines").get<int>();
  r.frames.facts = l.at("frames").get<std::vector<json>>();
  r.leftover_processes = Processes(l, "leftover_processes");
  r.alive_at_timeout = Processes(l, "alive_at_timeout");
  r.spared_processes = Processes(l, "spared_processes");
  r.cut_short = l.value("cut_short", "");
  return r;
}

RunReport ReadFacts(const json& in) {
  RunReport r;
  r.tool_version = in.at("tool_version").get<std::string>();
  r.run_id = in.at("run_id").get<std::string>();
  r.started_at = ParseRfc3339(in.at("started_at").get<std::string>());
  r.finished_at = ParseRfc3339(in.at("finished_at").get<std::string>());
  r.duration_seconds = in.at("duration_seconds").get<double>();
  r.interrupted = in.at("interrupted").get<bool>();
  r.host = in.at("host");
  r.profile_name = in.at("profile").at("name").get<std::string>();
  r.profile_path = in.at("profile").at("path").get<std::string>();
  r.profile = in.at("profile").at("config");
  r.policy_name = in.at("policy").at("name").get<std::string>();
  r.policy_path = in.at("policy").at("path").get<std::string>();
  r.policy = in.at("policy").at("config");
  r.suite_name = in.at("suite").get<std::string>();
  for (const json& l : in.at("launches")) r.launches.push_back(ReadLaunch(l));
  r.witnesses = in.at("witnesses");
  r.cut_short = in.value("cut_short", std::vector<std::string>{});
  r.left_for_sweep = in.value("left_for_sweep", "");
  if (in.contains("plan")) r.plan = in.at("plan");
  return r;
}

// Reads at most kMaxReportBytes + 1 bytes from `fd` into `out`: one more than allowed says the
// input is too big without reading all of it.
Status ReadCapped(int fd, const std::string& path, std::string& out) {
  constexpr std::size_t kChunk = 1 << 16;
  for (;;) {
    const std::size_t at = out.size();
    out.resize(at + kChunk);
    const ssize_t n = ::read(fd, out.data() + at, kChunk);
    if (n < 0 && errno == EINTR) {
      out.resize(at);
      continue;
    }
    if (n < 0) return Status::Error(fmt::format("read({}): {}", path, ErrnoText(errno)));
    out.resize(at + static_cast<std::size_t>(n));
    if (n == 0) return Status::Ok();
    if (out.size() > kMaxReportBytes) {
      return Status::Error(fmt::format("{}: more than {} MiB: not a report this sandprobe reads", path,
                                       kMaxReportBytes >> 20));
    }
  }
}

// A regular file (opened without blocking, so a FIFO with no writer cannot hang the read, and
// checked on the descriptor that is read), or stdin for "-".
StatusOr<std::string> ReadReportText(const std::string& path) {
  std::string text;
  if (path == "-") {
    if (Status s = ReadCapped(STDIN_FILENO, "stdin", text); !s.ok()) return s;
    return text;
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return Status::Error(fmt::format("open({}): {}", path, ErrnoText(errno)));
  struct stat st {};
  Status status = Status::Ok();
  if (::fstat(fd, &st) != 0) {
    status = Status::Error(fmt::format("fstat({}): {}", path, ErrnoText(errno)));
  } else if (!S_ISREG(st.st_mode)) {
    status = Status::Error(fmt::format("{}: not a regular file", path));
  } else if (static_cast<std::uintmax_t>(st.st_size) > kMaxReportBytes) {
    status = Status::Error(fmt::format("{}: {} bytes, more than {} MiB: not a report this sandprobe reads", path,
                                       st.st_size, kMaxReportBytes >> 20));
  } else {
    text.reserve(static_cast<std::size_t>(st.st_size));
    status = ReadCapped(fd, path, text);
  }
  ::close(fd);
  if (!status.ok()) return status;
  return text;
}

// "LINE:COL" (1-based, columns in bytes) of the byte before offset `byte` (nlohmann's parse
// error position counts the offending byte as read).
std::string LineCol(const std::string& text, std::size_t byte) {
  const std::size_t at = std::min(byte > 0 ? byte - 1 : 0, text.size());
  std::size_t line = 1, line_start = 0;
  for (std::size_t i = 0; i < at; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return fmt::format("{}:{}", line, at - line_start + 1);
}

// nlohmann's message without its "[json.exception.parse_error.101] parse error at line 1,
// column 2: " head: the position is said once, as file:line:col.
std::string ParseErrorText(const json::parse_error& e) {
  std::string what = e.what();
  const std::size_t colon = what.find(": ", what.find("parse error"));
  return colon == std::string::npos ? what : what.substr(colon + 2);
}

}  // namespace

StatusOr<json> LoadJsonReport(const std::string& path) {
  StatusOr<std::string> text = ReadReportText(path);
  if (!text.ok()) return text.status();
  return ParseJsonReport(*text, path);
}

StatusOr<json> ParseJsonReport(const std::string& text, const std::string& file) {
  if (text.size() > kMaxReportBytes) {
    return Status::Error(fmt::format("{}: more than {} MiB: not a report this sandprobe reads", file,
                                     kMaxReportBytes >> 20));
  }
  json report;
  try {
    report = json::parse(text);
  } catch (const json::parse_error& e) {
    return Status::Error(fmt::format("{}:{}: not JSON: {}", file, LineCol(text, e.byte), ParseErrorText(e)));
  } catch (const json::exception& e) {
    return Status::Error(fmt::format("{}: not JSON: {}", file, e.what()));
  }
  if (Status s = CheckReportSchema(report, file); !s.ok()) return s;
  return report;
}

Status CheckReportSchema(const json& report, const std::string& file) {
  if (!report.is_object() || !report.contains("schema") || !report["schema"].is_string()) {
    return Status::Error(fmt::format("{}: not a sandprobe JSON report (no \"schema\")", file));
  }
  if (report["schema"] != kReportSchema) {
    return Status::Error(fmt::format("{}: report schema {} is not {}, the one this sandprobe reads",
                                     file, report["schema"].get<std::string>(), kReportSchema));
  }
  return Status::Ok();
}

StatusOr<RunReport> ReadJsonReportFacts(const json& report, const std::string& file) {
  if (Status s = CheckReportSchema(report, file); !s.ok()) return s;
  try {
    return ReadFacts(report);
  } catch (const json::exception& e) {
    return Status::Error(fmt::format("{}: read the report: {}", file, e.what()));
  }
}

}  // namespace sandprobe
