// NetnsFixture: a network namespace with one veth link to the host, made and removed by a test.
//
// The namespace (sp-net-<random>) has "lo" and one veth end (10.213.R.2/30); the host keeps the
// other end (10.213.R.1/30). There is no default route, so from inside the only address
// reachable off the namespace is the host's veth address. R is chosen so that 10.213.R.0/30
// overlaps no route the host already has. Everything is created by this object and deleted by
// its destructor; traffic never leaves the machine. Needs root and iproute2.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/test_cli_runner.h"

namespace sandprobe::testing {

class NetnsFixture {
 public:
  // Empty when it could not be set up; `error()` says why.
  NetnsFixture() {
    if (::geteuid() != 0) {
      error_ = "needs root (ip netns add)";
      return;
    }
    std::random_device random;
    char tag_text[8];
    std::snprintf(tag_text, sizeof tag_text, "%06x", random() & 0xFFFFFF);
    const std::string tag = tag_text;
    name_ = "sp-net-" + tag;
    host_if_ = "spv" + tag + "h";
    ns_if_ = "spv" + tag + "n";
    CliRun routes = RunCommand({"ip", "-4", "route", "show", "table", "all"});
    int subnet = -1;
    for (int i = 0; i < 16 && subnet < 0; ++i) {
      int r = 1 + static_cast<int>(random() % 250);
      if (routes.out.find("10.213." + std::to_string(r) + ".") == std::string::npos) subnet = r;
    }
    if (subnet < 0) {
      error_ = "no free 10.213.R.0/30 subnet";
      return;
    }
    const std::string prefix = "10.213." + std::to_string(subnet) + ".";
    host_ip_ = prefix + "1";
    const std::vector<std::vector<std::string>> steps = {
        {"ip", "netns", "add", name_},
        {"ip", "link", "add", host_if_, "type", "veth", "peer", "name", ns_if_},
        {"ip", "link", "set", ns_if_, "netns", name_},
        {"ip", "addr", "add", host_ip_ + "/30", "dev", host_if_},
        {"ip", "link", "set", host_if_, "up"},
        {"ip", "-n", name_, "addr", "add", prefix + "2/30", "dev", ns_if_},
        {"ip", "-n", name_, "link", "set", ns_if_, "up"},
        {"ip", "-n", name_, "link", "set", "lo", "up"},
    };
    created_ = true;
    for (const auto& step : steps) {
      CliRun run = RunCommand(step);
      if (run.exit_code != 0) {
        error_ = step[0] + " " + step[1] + " " + step[2] + ": " + run.err;
        return;
      }
    }
  }
  ~NetnsFixture() {
    if (!created_) return;
    RunCommand({"ip", "netns", "del", name_});        // takes the namespace's veth end with it
    RunCommand({"ip", "link", "del", host_if_});      // in case the namespace never got it
  }
  NetnsFixture(const NetnsFixture&) = delete;
  NetnsFixture& operator=(const NetnsFixture&) = delete;

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  const std::string& name() const { return name_; }
  const std::string& host_if() const { return host_if_; }
  const std::string& host_ip() const { return host_ip_; }

 private:
  std::string name_, host_if_, ns_if_, host_ip_, error_;
  bool created_ = false;
};

}  // namespace sandprobe::testing
