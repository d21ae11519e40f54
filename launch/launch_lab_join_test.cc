// The launcher's lab join (LaunchSpec::lab_join): a child launched into a sandbox namespace
// joined to a lab this test starts sees the lab's resolv.conf and hosts, only lo and eth0, and
// resolves a lab name through the lab's resolver; the host's own files, mounts and interfaces
// are unchanged afterwards. Needs root (setns, mount), as the lab itself does.
#include <fcntl.h>
#include <net/if.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "lab/lab.h"
#include "lab/lab_sandbox_netns.h"
#include "launch/launcher.h"

namespace sandprobe {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The host's interfaces but docker's veth* (other users of this machine start containers).
std::set<std::string> HostInterfaces() {
  std::set<std::string> names;
  if (struct if_nameindex* list = ::if_nameindex()) {
    for (struct if_nameindex* i = list; i->if_index != 0; ++i) {
      if (std::string(i->if_name).rfind("veth", 0) != 0) names.insert(i->if_name);
    }
    ::if_freenameindex(list);
  }
  return names;
}

// A temporary directory removed at the end of the test, whatever happens.
struct TempDir {
  TempDir() {
    char pattern[] = "/tmp/sp-lab-join-XXXXXX";
    path = ::mkdtemp(pattern);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string Write(const std::string& name, const std::string& text) const {
    std::ofstream(path + "/" + name) << text;
    return path + "/" + name;
  }
  std::string path;
};

// The mounts at or under /etc, and any of the test's directory: what the join could have leaked
// (the rest of the table changes with whatever else runs on the machine).
std::string EtcMounts(const std::string& test_dir) {
  std::istringstream table(ReadFile("/proc/self/mountinfo"));
  std::string out;
  for (std::string line; std::getline(table, line);) {
    std::istringstream fields(line);
    std::string id, parent, device, root, point;
    fields >> id >> parent >> device >> root >> point;
    if (point.rfind("/etc", 0) == 0 || line.find(test_dir) != std::string::npos) out += line + "\n";
  }
  return out;
}

struct HostFile {
  std::string text;
  ino_t inode = 0;
  static HostFile Of(const char* path) {
    struct stat st {};
    ::stat(path, &st);
    return {ReadFile(path), st.st_ino};
  }
  bool operator==(const HostFile&) const = default;
};

TEST(LaunchLabJoinTest, ChildSeesTheLabsResolverAndLinksAndTheHostIsUnchanged) {
  const HostFile resolv_before = HostFile::Of("/etc/resolv.conf");
  const HostFile hosts_before = HostFile::Of("/etc/hosts");
  const std::set<std::string> interfaces_before = HostInterfaces();

  StatusOr<LabNames> names = MakeLabNames({*ParseAllowEntry("pkg.lab.test")});
  ASSERT_TRUE(names.ok()) << names.status().message();
  StatusOr<std::unique_ptr<Lab>> lab = Lab::Start(*names);
  ASSERT_TRUE(lab.ok()) << lab.status().message();
  StatusOr<SandboxNetns> sandbox = SandboxNetns::Create((*lab)->network_namespace());
  ASSERT_TRUE(sandbox.ok()) << sandbox.status().message();
  TempDir dir;
  const std::string mounts_before = EtcMounts(dir.path);
  LaunchSpec spec;
  spec.argv = {"/bin/sh", "-c",
               "cat /etc/resolv.conf; echo ==; cat /etc/hosts; echo ==; cat /proc/net/dev; echo ==; "
               "getent ahostsv4 pkg.lab.test; echo ==; echo x > /etc/resolv.conf && echo wrote"};
  spec.timeout = std::chrono::seconds(20);
  spec.lab_join = LabJoin{sandbox->network_namespace().fd(), dir.Write("resolv.conf", LabResolvConf()),
                          dir.Write("hosts", LabHostsFile() + "# sp-lab-join-test\n")};
  ProcessLauncher launcher;
  StatusOr<LaunchResult> result = launcher.Launch(spec);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_NE(result->exit_code.value_or(0), 0) << result->out << result->err;  // the last write fails: read-only
  std::vector<std::string> parts;
  std::string out = result->out;
  for (std::size_t at; (at = out.find("==\n")) != std::string::npos; out.erase(0, at + 3)) {
    parts.push_back(out.substr(0, at));
  }
  parts.push_back(out);
  ASSERT_EQ(parts.size(), 5u) << result->out;
  EXPECT_EQ(parts[0], LabResolvConf());
  EXPECT_THAT(parts[1], HasSubstr("# sp-lab-join-test"));
  // /proc/net/dev lists the reader's network namespace: lo and eth0, nothing else.
  std::set<std::string> links;
  std::istringstream dev(parts[2]);
  for (std::string line; std::getline(dev, line);) {
    if (const std::size_t colon = line.find(':'); colon != std::string::npos) {
      std::string name = line.substr(0, colon);
      name.erase(0, name.find_first_not_of(' '));
      links.insert(name);
    }
  }
  EXPECT_EQ(links, (std::set<std::string>{"lo", "eth0"})) << parts[2];
  EXPECT_THAT(parts[3], HasSubstr("192.0.2.10")) << "getent through the lab's resolver";
  EXPECT_THAT(result->err, HasSubstr("Read-only file system"));
  EXPECT_THAT(result->out, Not(HasSubstr("wrote")));
  bool asked = false;
  for (const DnsReceipt& receipt : (*lab)->DnsReceipts()) {
    asked = asked || (receipt.name == "pkg.lab.test" && receipt.peer.rfind("203.0.113.2:", 0) == 0);
  }
  EXPECT_TRUE(asked) << "the lab's resolver heard the child's query from the sandbox address";

  EXPECT_EQ(HostFile::Of("/etc/resolv.conf"), resolv_before);
  EXPECT_EQ(HostFile::Of("/etc/hosts"), hosts_before);
  EXPECT_EQ(EtcMounts(dir.path), mounts_before);
  EXPECT_EQ(HostInterfaces(), interfaces_before);
}

TEST(LaunchLabJoinTest, AMissingFileIsAnErrorNamingIt) {
  LaunchSpec spec;
  spec.argv = {"/bin/true"};
  spec.lab_join = LabJoin{0, "/nonexistent/sp-resolv.conf", "/etc/hosts"};
  ProcessLauncher launcher;
  StatusOr<LaunchResult> result = launcher.Launch(spec);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr("/nonexistent/sp-resolv.conf"));
}

TEST(LaunchLabJoinTest, ABadNamespaceFdFailsNamingSetns) {
  TempDir dir;
  LaunchSpec spec;
  spec.argv = {"/bin/true"};
  const int not_a_namespace = ::open("/etc/hosts", O_RDONLY | O_CLOEXEC);
  spec.lab_join = LabJoin{not_a_namespace, dir.Write("resolv.conf", LabResolvConf()), dir.Write("hosts", "")};
  ProcessLauncher launcher;
  StatusOr<LaunchResult> result = launcher.Launch(spec);
  ::close(not_a_namespace);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr("setns(lab network namespace, CLONE_NEWNET) for /bin/true: "));
}

}  // namespace
}  // namespace sandprobe
