#include "probes/errno_name.h"

#include <cerrno>

namespace sandprobe {
namespace {

// Only values a filesystem, process or network probe can plausibly meet. A plain switch (not a
// map) so a static binary needs no initialisation for it; EAGAIN == EWOULDBLOCK and
// EDEADLK == EDEADLOCK and ENOTSUP == EOPNOTSUPP on Linux, so only one of each pair is listed.
const char* KnownErrnoName(int err) {
  switch (err) {
    case EPERM: return "EPERM";
    case ENOENT: return "ENOENT";
    case ESRCH: return "ESRCH";
    case EINTR: return "EINTR";
    case EIO: return "EIO";
    case ENXIO: return "ENXIO";
    case E2BIG: return "E2BIG";
    case ENOEXEC: return "ENOEXEC";
    case EBADF: return "EBADF";
    case ECHILD: return "ECHILD";
    case EAGAIN: return "EAGAIN";
    case ENOMEM: return "ENOMEM";
    case EACCES: return "EACCES";
    case EFAULT: return "EFAULT";
    case EBUSY: return "EBUSY";
    case EEXIST: return "EEXIST";
    case EXDEV: return "EXDEV";
    case ENODEV: return "ENODEV";
    case ENOTDIR: return "ENOTDIR";
    case EISDIR: return "EISDIR";
    case EINVAL: return "EINVAL";
    case ENFILE: return "ENFILE";
    case EMFILE: return "EMFILE";
    case ENOTTY: return "ENOTTY";
    case ETXTBSY: return "ETXTBSY";
    case EFBIG: return "EFBIG";
    case ENOSPC: return "ENOSPC";
    case ESPIPE: return "ESPIPE";
    case EROFS: return "EROFS";
    case EMLINK: return "EMLINK";
    case EPIPE: return "EPIPE";
    case ERANGE: return "ERANGE";
    case EDEADLK: return "EDEADLK";
    case ENAMETOOLONG: return "ENAMETOOLONG";
    case ENOLCK: return "ENOLCK";
    case ENOSYS: return "ENOSYS";
    case ENOTEMPTY: return "ENOTEMPTY";
    case ELOOP: return "ELOOP";
    case ENODATA: return "ENODATA";
    case EOVERFLOW: return "EOVERFLOW";
    case ENOTSOCK: return "ENOTSOCK";
    case EOPNOTSUPP: return "EOPNOTSUPP";
    case EAFNOSUPPORT: return "EAFNOSUPPORT";
    case EADDRINUSE: return "EADDRINUSE";
    case EADDRNOTAVAIL: return "EADDRNOTAVAIL";
    case ENETDOWN: return "ENETDOWN";
    case ENETUNREACH: return "ENETUNREACH";
    case ECONNABORTED: return "ECONNABORTED";
    case ECONNRESET: return "ECONNRESET";
    case ENOBUFS: return "ENOBUFS";
    case EISCONN: return "EISCONN";
    case ENOTCONN: return "ENOTCONN";
    case ETIMEDOUT: return "ETIMEDOUT";
    case ECONNREFUSED: return "ECONNREFUSED";
    case EHOSTUNREACH: return "EHOSTUNREACH";
    case EALREADY: return "EALREADY";
    case EINPROGRESS: return "EINPROGRESS";
    case ESTALE: return "ESTALE";
    case EDQUOT: return "EDQUOT";
    case ECANCELED: return "ECANCELED";
    case EOWNERDEAD: return "EOWNERDEAD";
    case ENOTRECOVERABLE: return "ENOTRECOVERABLE";
    case EUCLEAN: return "EUCLEAN";
    case ENOMEDIUM: return "ENOMEDIUM";
    case EPROTONOSUPPORT: return "EPROTONOSUPPORT";
  }
  return nullptr;
}

}  // namespace

std::string ErrnoName(int err) {
  const char* name = KnownErrnoName(err);
  if (name != nullptr) return name;
  return "E" + std::to_string(err);
}

}  // namespace sandprobe
