// LabNamespace: a network namespace the harness makes for one run, held by a file descriptor
// and by nothing else: no name under /run/netns, no process inside. It goes away with the last
// descriptor or socket that refers to it, so a crashed run leaves nothing behind.
//
// The namespace has only its loopback link, up, carrying the lab's addresses (/32 and /128):
// there is no other interface, so no route out and nothing a packet could leave by. (The
// kernel here has no dummy driver; loopback needs none, and a veth pair to a sandbox's
// namespace is added by the launcher, lab/ design note in the report of issue 28.)
//
// The namespace is entered only on threads started for it (setns on a thread changes that
// thread alone): the harness's own threads stay in the host's namespace.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "load/network_allow.h"
#include "model/status.h"

namespace sandprobe {

class LabNamespace {
 public:
  // Unshares a new network namespace on a helper thread, brings its loopback up, puts
  // `addresses` on it and then runs `inside` (if set) on that same thread: one thread for the
  // whole set-up, since under load each hand-over to a new thread can wait out a scheduler slice.
  // Errors name the step (unshare needs CAP_SYS_ADMIN: "unshare(CLONE_NEWNET): EPERM").
  static StatusOr<LabNamespace> Create(const std::vector<IpAddress>& addresses,
                                       const std::function<Status(const LabNamespace&)>& inside = {});
  // Holds a namespace that already exists (a container's, "/proc/PID/ns/net") by a descriptor of
  // its own: the namespace then lives at least as long as this object, whoever else lets it go.
  // Nothing inside is changed.
  static StatusOr<LabNamespace> Open(const std::string& ns_path);
  LabNamespace() = default;  // holds no namespace (fd() < 0)
  LabNamespace(LabNamespace&& other) noexcept : fd_(other.fd_), link_table_fd_(other.link_table_fd_) {
    other.fd_ = -1;
    other.link_table_fd_ = -1;
  }
  LabNamespace& operator=(LabNamespace&& other) noexcept;
  ~LabNamespace();

  // The /proc/thread-self/ns/net descriptor that holds the namespace (setns(2) takes it).
  int fd() const { return fd_; }
  // Runs `inside` on a new thread that entered this namespace, waits, and returns its Status.
  // Sockets it opens belong to the namespace wherever they are used later.
  Status RunInside(const std::function<Status()>& inside) const;
  // The names of the namespace's links. Read without entering it when a thread inside kept its
  // link table open (KeepLinkTable: the /proc net files stay bound to the namespace they were
  // opened in), else on a thread inside.
  StatusOr<std::vector<std::string>> LinkNames() const;
  // Called on a thread inside this namespace: opens its link table for LinkNames.
  Status KeepLinkTable();

 private:
  explicit LabNamespace(int fd) : fd_(fd) {}
  int fd_ = -1;
  int link_table_fd_ = -1;  // /proc/thread-self/net/dev opened inside, -1 when not kept
};

// What a route must be before the lab lets anyone use the address it leads to.
enum class RouteReady {
  kLocal,    // delivered in this namespace (an address of its own)
  kOutward,  // sent out a link (to the other end of a veth pair)
};
// On a thread inside a namespace: waits until the kernel's route to `destination` is `ready`. The
// kernel puts a new IPv6 address's own route (and a peer address's route) in place from a work
// queue after the netlink request is acknowledged, even with IFA_F_NODAD. Until then a packet to
// the address is dropped (on loopback the address's prefix route is a reject route that a connect
// does not see: a TCP SYN is lost, the connect fails with ENETUNREACH a second later when the SYN
// is sent again) or finds no route. A lab that returned before that would race its first client.
// Asks the kernel (RTM_GETROUTE) every 100 us; an error naming the address after
// kAddressReadyLimitMs.
Status WaitForRoute(const IpAddress& destination, RouteReady ready);
inline constexpr int kAddressReadyLimitMs = 2000;

// Runs `inside` on a new thread after setns(ns_fd, CLONE_NEWNET); waits for it.
Status RunInNetworkNamespace(int ns_fd, const std::function<Status()>& inside);

// The network namespace inode of the calling thread (/proc/thread-self/ns/net), 0 when unreadable.
unsigned long ThreadNetworkNamespaceInode();

}  // namespace sandprobe
