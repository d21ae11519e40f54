// Status and StatusOr: how library code reports failure without exceptions.
//
// Exceptions from nlohmann/json, Boost.Process and the standard library are caught in the
// file that calls them and turned into a Status whose message names the operation and its
// arguments (`open("/etc/x"): ENOENT`). Only main.cc prints a Status and exits.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace sandprobe {

// What kind of failure a Status is: the CLI turns it into an exit code (contract/exit_code.h).
enum class StatusCode {
  kInvalidInput,  // the user's input is wrong (a profile, policy, suite, flag): exit 2
  kHarness,       // the harness could not do its job (a run dir, a witness, the probe): exit 3
};

class [[nodiscard]] Status {
 public:
  static Status Ok() { return Status(); }
  // Invalid input: what the user gave cannot be used as it is.
  static Status Error(std::string message) {
    return Status(std::move(message), StatusCode::kInvalidInput);
  }
  // The harness failed on a valid input: a full /var/tmp, a listener that cannot bind.
  static Status HarnessError(std::string message) {
    return Status(std::move(message), StatusCode::kHarness);
  }

  bool ok() const { return !message_.has_value(); }
  const std::string& message() const {
    static const std::string kEmpty;
    return message_ ? *message_ : kEmpty;
  }
  // Meaningful only when !ok().
  StatusCode code() const { return code_; }
  // Prepends context, keeping the code:
  // Status::Error("EACCES").WithContext("open(/x)") -> "open(/x): EACCES".
  Status WithContext(const std::string& context) const {
    if (ok()) return *this;
    return Status(context + ": " + *message_, code_);
  }
  // The same message as a harness error: a step that only fails when the harness does.
  Status AsHarnessError() const { return ok() ? *this : Status(*message_, StatusCode::kHarness); }

 private:
  Status() = default;
  Status(std::string message, StatusCode code) : message_(std::move(message)), code_(code) {}
  std::optional<std::string> message_;
  StatusCode code_ = StatusCode::kInvalidInput;
};

// Either a value or a non-ok Status.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : state_(std::move(value)) {}  // NOLINT: implicit by design
  StatusOr(Status status) : state_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(state_).ok() && "StatusOr needs a value or an error");
  }

  bool ok() const { return std::holds_alternative<T>(state_); }
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T& value() & { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  std::variant<T, Status> state_;
};

}  // namespace sandprobe
