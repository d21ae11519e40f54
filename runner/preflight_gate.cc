#include "runner/preflight_gate.h"

namespace sandprobe {

PreflightGate::PreflightGate(PreflightWhen when, std::function<Status()> run_preflight)
    : when_(when), run_preflight_(std::move(run_preflight)) {}

const Status& PreflightGate::RunOnce() {
  if (!result_) result_ = run_preflight_();
  return *result_;
}

std::optional<std::string> PreflightGate::BeforeLaunch() {
  std::lock_guard lock(mu_);
  if (when_ == PreflightWhen::kBefore) RunOnce();
  if (result_ && !result_->ok()) return result_->message();
  return std::nullopt;
}

std::optional<std::string> PreflightGate::AfterIncompleteLaunch() {
  std::lock_guard lock(mu_);
  const Status& result = RunOnce();
  if (!result.ok()) return result.message();
  return std::nullopt;
}

std::string PreflightGate::Summary() {
  std::lock_guard lock(mu_);
  if (!result_) {
    return when_ == PreflightWhen::kBefore
               ? "not run: no probe launch"
               : "not run: every probe launch completed (profile preflight: on_failure)";
  }
  return result_->ok() ? "ok" : result_->message();
}

}  // namespace sandprobe
