#include "witnesses/witness_docker_engine.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

// A directory of its own for one test, removed at its end.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "sp-engine-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data()) ? tmpl : "";
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) fs::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

EnvLookup Table(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    auto found = vars.find(name);
    return found == vars.end() ? nullptr : found->second.c_str();
  };
}

// The CLI's own order: DOCKER_HOST, DOCKER_CONTEXT, the config's currentContext, the default
// socket. Only a unix socket outside any context is asked directly.
TEST(DockerEngineTest, TheSocketIsTheOneTheDockerCliWouldUse) {
  TempDir config;
  ASSERT_FALSE(config.path().empty());
  struct Case {
    std::map<std::string, std::string> env;
    std::string config_json;  // "" for no config.json
    std::string socket;       // "" when the CLI must be asked
    std::string why;
  } cases[] = {
      {{{"HOME", "/nonexistent"}}, "", "/var/run/docker.sock", ""},
      {{{"DOCKER_HOST", "unix:///run/user/1000/docker.sock"}}, "", "/run/user/1000/docker.sock", ""},
      {{{"DOCKER_HOST", "tcp://127.0.0.1:2375"}}, "", "", "DOCKER_HOST=tcp://127.0.0.1:2375 is not a unix socket"},
      {{{"DOCKER_HOST", "unix://"}}, "", "", "is not a unix socket"},
      {{{"DOCKER_CONTEXT", "remote"}, {"HOME", "/nonexistent"}}, "", "", "DOCKER_CONTEXT=remote selects a context"},
      {{{"DOCKER_CONTEXT", "default"}, {"HOME", "/nonexistent"}}, "", "/var/run/docker.sock", ""},
      {{{"DOCKER_CONFIG", config.path()}}, R"({"currentContext": "rootless"})", "", "selects context rootless"},
      {{{"DOCKER_CONFIG", config.path()}}, R"({"currentContext": "default"})", "/var/run/docker.sock", ""},
      {{{"DOCKER_CONFIG", config.path()}}, R"({"auths": {}})", "/var/run/docker.sock", ""},
      {{{"DOCKER_CONFIG", config.path()}}, "{not json", "", "not a JSON object"},
      {{{"DOCKER_CONFIG", config.path()}}, R"({"currentContext": 7})", "", "currentContext is not a string"},
      // DOCKER_HOST wins over a context, as in the CLI.
      {{{"DOCKER_HOST", "unix:///x.sock"}, {"DOCKER_CONFIG", config.path()}}, R"({"currentContext": "rootless"})",
       "/x.sock", ""},
      {{}, "", "", "neither DOCKER_CONFIG nor HOME"},
  };
  for (const Case& c : cases) {
    fs::remove(config.path() + "/config.json");
    if (!c.config_json.empty()) std::ofstream(config.path() + "/config.json") << c.config_json;
    StatusOr<std::string> socket = DockerCliDaemonSocket(Table(c.env));
    if (c.socket.empty()) {
      ASSERT_FALSE(socket.ok()) << *socket << " for " << c.config_json;
      EXPECT_NE(socket.status().message().find(c.why), std::string::npos) << socket.status().message();
    } else {
      ASSERT_TRUE(socket.ok()) << socket.status().message();
      EXPECT_EQ(*socket, c.socket);
    }
  }
}

// A one-connection server on a unix socket: reads the request head, records it, and answers
// `reply` (nothing at all when `reply` is empty, holding the connection until the client left).
class FakeDaemon {
 public:
  FakeDaemon(const std::string& path, std::string reply) : path_(path) {
    listener_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    path.copy(address.sun_path, sizeof address.sun_path - 1);
    bound_ = ::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
             ::listen(listener_, 1) == 0;
    thread_ = std::thread([this, reply = std::move(reply)] {
      const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) return;
      char buffer[4096];
      while (request_.find("\r\n\r\n") == std::string::npos) {
        const ssize_t n = ::read(client, buffer, sizeof buffer);
        if (n <= 0) break;
        request_.append(buffer, static_cast<std::size_t>(n));
      }
      if (!reply.empty()) {
        [[maybe_unused]] ssize_t sent = ::write(client, reply.data(), reply.size());
      } else {
        while (::read(client, buffer, sizeof buffer) > 0) {
        }
      }
      ::close(client);
    });
  }
  ~FakeDaemon() {
    ::shutdown(listener_, SHUT_RDWR);
    if (thread_.joinable()) thread_.join();
    ::close(listener_);
  }
  bool bound() const { return bound_; }
  // Only after the exchange (the client has its answer or gave up).
  const std::string& request() {
    if (thread_.joinable()) thread_.join();
    return request_;
  }

 private:
  std::string path_;
  int listener_ = -1;
  bool bound_ = false;
  std::string request_;
  std::thread thread_;
};

std::string Response(const std::string& status, const std::string& body) {
  return "HTTP/1.1 " + status + "\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

TEST(DockerEngineTest, AGetAnswersTheBodyAsJson) {
  TempDir dir;
  const std::string socket = dir.path() + "/docker.sock";
  FakeDaemon daemon(socket, Response("200 OK", R"({"Name": "bridge"})"));
  ASSERT_TRUE(daemon.bound());
  StatusOr<nlohmann::json> body = DockerEngineGet(socket, "/networks/bridge", milliseconds(5000));
  ASSERT_TRUE(body.ok()) << body.status().message();
  EXPECT_EQ((*body)["Name"], "bridge");
  EXPECT_EQ(daemon.request().rfind("GET /networks/bridge HTTP/1.1\r\n", 0), 0u) << daemon.request();
}

// The daemon may answer in chunks (Go's server does when it streams): the body is whole.
TEST(DockerEngineTest, AChunkedAnswerIsReadWhole) {
  TempDir dir;
  const std::string socket = dir.path() + "/docker.sock";
  FakeDaemon daemon(socket,
                    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n9\r\n{\"Name\": \r\n9\r\n\"bridge\"}\r\n0\r\n\r\n");
  ASSERT_TRUE(daemon.bound());
  StatusOr<nlohmann::json> body = DockerEngineGet(socket, "/networks/bridge", milliseconds(5000));
  ASSERT_TRUE(body.ok()) << body.status().message();
  EXPECT_EQ((*body)["Name"], "bridge");
}

// Whatever is not a 200 with a JSON body is an error that says what it was; never an answer.
TEST(DockerEngineTest, AnythingButAJsonAnswerIsAnErrorNamingIt) {
  struct Case {
    std::string reply;
    std::string why;
  } cases[] = {
      {Response("404 Not Found", R"({"message": "network bridge not found"})"), "HTTP 404"},
      {Response("200 OK", "<html>proxy</html>"), "the body is not JSON"},
      {"garbage\r\n\r\n", "read the response"},
      {"", "no answer within 200 ms"},
  };
  for (const Case& c : cases) {
    TempDir dir;
    const std::string socket = dir.path() + "/docker.sock";
    FakeDaemon daemon(socket, c.reply);
    ASSERT_TRUE(daemon.bound());
    StatusOr<nlohmann::json> body = DockerEngineGet(socket, "/networks/bridge", milliseconds(200));
    ASSERT_FALSE(body.ok()) << body->dump();
    EXPECT_NE(body.status().message().find(c.why), std::string::npos) << body.status().message();
    EXPECT_NE(body.status().message().find("GET /networks/bridge on unix://" + socket), std::string::npos)
        << body.status().message();
  }
}

TEST(DockerEngineTest, NoDaemonIsAConnectError) {
  TempDir dir;
  StatusOr<nlohmann::json> body = DockerEngineGet(dir.path() + "/none.sock", "/networks/bridge", milliseconds(1000));
  ASSERT_FALSE(body.ok());
  EXPECT_NE(body.status().message().find("connect"), std::string::npos) << body.status().message();
}

}  // namespace
}  // namespace sandprobe
