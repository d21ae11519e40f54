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

class [[nodiscard]] Status {
 public:
  static Status Ok() { return Status(); }
  static Status Error(std::string message) { return Status(std::move(message)); }

  bool ok() const { return !message_.has_value(); }
  const std::string& message() const {
    static const std::string kEmpty;
    return message_ ? *message_ : kEmpty;
  }
  // Prepends context: Status::Error("EACCES").WithContext("open(/x)") -> "open(/x): EACCES".
  Status WithContext(const std::string& context) const {
    if (ok()) return *this;
    return Status(context + ": " + *message_);
  }

 private:
  Status() = default;
  explicit Status(std::string message) : message_(std::move(message)) {}
  std::optional<std::string> message_;
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
