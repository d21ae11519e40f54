// The socket handshakes against real unix sockets this test serves itself: a Docker-like API
// answering GET /_ping, a gRPC-like server that speaks HTTP/2 SETTINGS first, one that answers
// only the HTTP/2 preface, a silent one, a stale socket file and a regular file; and the
// arguments the socket families take.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include <gtest/gtest.h>

#include "probes/unix_sockets.h"

namespace sandprobe {
namespace {

namespace fs = std::filesystem;

// A listener at `path` that runs `serve` on each accepted connection, on a thread of its own.
class FakeServer {
 public:
  FakeServer(const std::string& path, std::function<void(int)> serve) : serve_(std::move(serve)) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << path;
    EXPECT_EQ(::listen(fd_, 8), 0);
    thread_ = std::thread([this] {
      while (true) {
        const int conn = ::accept(fd_, nullptr, nullptr);
        if (conn < 0 || stop_) {
          if (conn >= 0) ::close(conn);
          return;
        }
        serve_(conn);
        ::close(conn);
      }
    });
  }
  ~FakeServer() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
  }

 private:
  int fd_ = -1;
  std::atomic<bool> stop_{false};
  std::function<void(int)> serve_;
  std::thread thread_;
};

std::string ReadSome(int fd) {
  char buf[256];
  const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
}

const char kSettings[9] = {0, 0, 0, 0x04, 0, 0, 0, 0, 0};

TEST(UnixSocketsTest, TellsRuntimesByWhatTheyAnswer) {
  std::string tmpl = (fs::temp_directory_path() / "sp-sock-XXXXXX").string();
  const std::string dir = ::mkdtemp(tmpl.data());
  FakeServer docker(dir + "/api.sock", [](int fd) {
    if (ReadSome(fd).rfind("GET /_ping HTTP/1.0", 0) != 0) return;
    const std::string reply = "HTTP/1.0 200 OK\r\nApi-Version: 1.41\r\nserver: Fake/1.0\r\n\r\nOK";
    ::send(fd, reply.data(), reply.size(), MSG_NOSIGNAL);
  });
  FakeServer grpc(dir + "/grpc.sock", [](int fd) { ::send(fd, kSettings, sizeof kSettings, MSG_NOSIGNAL); });
  FakeServer h2_only(dir + "/h2.sock", [](int fd) {
    if (ReadSome(fd).rfind("PRI * HTTP/2.0", 0) == 0) ::send(fd, kSettings, sizeof kSettings, MSG_NOSIGNAL);
  });
  FakeServer silent(dir + "/silent.sock", [](int fd) { ReadSome(fd); });
  {  // a socket file nothing listens on
    FakeServer gone(dir + "/stale.sock", [](int) {});
  }
  std::ofstream(dir + "/file") << "x";

  const auto start = std::chrono::steady_clock::now();
  const std::vector<SocketAnswer> a = TryUnixSockets(
      {dir + "/api.sock", dir + "/grpc.sock", dir + "/h2.sock", dir + "/silent.sock", dir + "/stale.sock",
       dir + "/file", dir + "/missing"});
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_EQ(a.size(), 7u);

  nlohmann::json api;
  AddSocketAnswerFacts(a[0], api);
  EXPECT_EQ(api["status_line"], "HTTP/1.0 200 OK");
  EXPECT_EQ(api["api_version"], "1.41");
  EXPECT_EQ(api["server"], "Fake/1.0");  // header names are case-insensitive
  EXPECT_TRUE(api.contains("mode"));
  EXPECT_FALSE(api.contains("h2"));

  EXPECT_TRUE(a[1].connected);
  EXPECT_TRUE(a[1].h2) << "a server that sends SETTINGS first";
  EXPECT_TRUE(a[2].h2) << "a server that answers the preface";
  EXPECT_TRUE(a[3].connected);
  EXPECT_FALSE(a[3].h2);
  nlohmann::json silent_fact;
  AddSocketAnswerFacts(a[3], silent_fact);
  EXPECT_EQ(silent_fact["reply_bytes"], 0);
  EXPECT_EQ(silent_fact["h2"], false);

  EXPECT_FALSE(a[4].connected);
  EXPECT_STREQ(a[4].failed_step, "connect");
  EXPECT_EQ(a[4].error, ECONNREFUSED);
  EXPECT_TRUE(a[5].exists);
  EXPECT_FALSE(S_ISSOCK(a[5].mode));
  EXPECT_FALSE(a[6].exists);
  EXPECT_EQ(a[6].stat_errno, ENOENT);
  // One silent socket costs one wait of each phase, not one per socket.
  EXPECT_LT(took, std::chrono::milliseconds(kPingWaitMs + kPrefaceWaitMs + 1000));
  fs::remove_all(dir);
}

TEST(UnixSocketsTest, PingReplyParsing) {
  PingReply r = ParsePingReply("HTTP/1.1 200 OK\r\nAPI-VERSION:  1.45 \r\nServer: Docker/27\r\n\r\nOK");
  EXPECT_EQ(r.status_line, "HTTP/1.1 200 OK");
  EXPECT_EQ(r.api_version, "1.45");
  EXPECT_EQ(r.server, "Docker/27");
  r = ParsePingReply("HTTP/1.0 404 Not Found\r\n\r\nApi-Version: 9");  // in the body: not a header
  EXPECT_EQ(r.api_version, "");
  EXPECT_EQ(ParsePingReply("garbage").api_version, "");
}

TEST(UnixSocketsTest, ArgumentsAreWalkDevicesThenAbsolutePaths) {
  std::vector<std::string> devs, paths;
  EXPECT_EQ(SplitSocketArgs("net.unix", {"--walk-devs", "254:0,0:23", "/run/x.sock"}, &devs, &paths), "");
  EXPECT_EQ(devs, (std::vector<std::string>{"254:0", "0:23"}));
  EXPECT_EQ(paths, (std::vector<std::string>{"/run/x.sock"}));
  EXPECT_EQ(SplitSocketArgs("net.unix", {}, nullptr, nullptr), "");
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--walk-devs"}, {"--walk-devs", "254"}, {"--walk-devs", "a:b"},
        {"--walk-devs", "1:2,"}, {"--walk-devs", "1:2:3"}, {"relative"}, {"--walk-devs", "1:2", "x"}}) {
    EXPECT_NE(SplitSocketArgs("net.unix", bad, nullptr, nullptr), "") << bad.size();
  }
}

}  // namespace
}  // namespace sandprobe
