/* sandprobe-landlock-wrap: a Landlock-only sandbox for the tests. It restricts every kind of
 * filesystem write to the directories named with --allow-write (and everything below them),
 * then execs the command. No namespace, no seccomp filter, no capability change: root stays
 * root, and access(2) keeps answering W_OK for files it may not open for writing, because
 * Landlock mediates opens, not access(2) (the kernel's documentation says so). That is the
 * shape of sandbox that made access(W_OK)-based checks raise false alarms.
 *
 *   sandprobe-landlock-wrap [--allow-write DIR]... -- COMMAND [ARG]...
 *
 * The Landlock ABI is read with landlock_create_ruleset(NULL, 0, VERSION) and the rights are
 * masked to what it knows. Exit 126 when Landlock is unavailable or a step fails (naming it). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Rights newer than Debian 12's header. */
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif

enum { kMaxDirs = 64, kFailExit = 126 };

/* Every write-like right, per ABI version (1: the first set; 2: REFER; 3: TRUNCATE; 5: IOCTL_DEV). */
static uint64_t WriteRights(int abi) {
  uint64_t rights = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
                    LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
                    LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
                    LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
                    LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM;
  if (abi >= 2) rights |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3) rights |= LANDLOCK_ACCESS_FS_TRUNCATE;
  if (abi >= 5) rights |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
  return rights;
}

static int Fail(const char* what, const char* arg) {
  fprintf(stderr, "sandprobe-landlock-wrap: %s%s%s: %s\n", what, arg ? " " : "", arg ? arg : "",
          strerror(errno));
  return kFailExit;
}

int main(int argc, char** argv) {
  const char* dirs[kMaxDirs];
  int ndirs = 0, i = 1;
  for (; i < argc && strcmp(argv[i], "--") != 0; ++i) {
    if (strcmp(argv[i], "--allow-write") != 0 || i + 1 >= argc || ndirs == kMaxDirs) {
      fprintf(stderr, "usage: sandprobe-landlock-wrap [--allow-write DIR]... -- COMMAND [ARG]...\n");
      return 2;
    }
    dirs[ndirs++] = argv[++i];
  }
  if (i + 1 >= argc) {
    fprintf(stderr, "usage: sandprobe-landlock-wrap [--allow-write DIR]... -- COMMAND [ARG]...\n");
    return 2;
  }
  const int abi = (int)syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (abi < 1) return Fail("landlock_create_ruleset(VERSION)", NULL);
  const uint64_t rights = WriteRights(abi);
  struct landlock_ruleset_attr attr = {.handled_access_fs = rights};
  const int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
  if (ruleset < 0) return Fail("landlock_create_ruleset", NULL);
  for (int d = 0; d < ndirs; ++d) {
    struct landlock_path_beneath_attr beneath = {.allowed_access = rights};
    beneath.parent_fd = open(dirs[d], O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (beneath.parent_fd < 0) return Fail("open", dirs[d]);
    if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &beneath, 0) != 0) {
      return Fail("landlock_add_rule", dirs[d]);
    }
    close(beneath.parent_fd);
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return Fail("prctl(PR_SET_NO_NEW_PRIVS)", NULL);
  if (syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) return Fail("landlock_restrict_self", NULL);
  close(ruleset);
  execvp(argv[i + 1], argv + i + 1);
  return Fail("execvp", argv[i + 1]);
}
