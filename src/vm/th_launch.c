/* th_launch.c: `th --nproc N script.lua args`, the launcher of lib/distributed:
   th replaces itself with `mpirun -np N --oversubscribe th script.lua args`
   (exec: Ctrl-C reaches mpirun, which stops every rank), after setting
   TH_RANK_PREFIX=1 (passed to the ranks with -x), MASTER_ADDR and
   MASTER_PORT where they are not set (127.0.0.1 and a port free now: the
   NCCL backend's rank 0 listens there) and, as root, OpenMPI's two consent
   variables (mpirun refuses root otherwise; the user asked th to launch). A rank started with TH_RANK_PREFIX set prefixes every line it
   writes to stdout and stderr with "[rank R] ": its fds 1 and 2 become pipes
   read by a small process of its own, which writes each line with the prefix
   to the real outputs and drains the pipes after the rank ends (even by
   _exit, as the distributed timeout does). */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "th_launch.h"

/* a TCP port of 127.0.0.1 that is free now (the kernel's pick), or 0 */
static int free_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = 0;
  if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0)
    port = ntohs(a.sin_port);
  close(fd);
  return port;
}

/* the N of --nproc N / --nproc=N at argv[i] (*used: how many argv entries
   it took); -1 with a message when N is not a positive integer */
static int nproc_value(int argc, char **argv, int i, int *used) {
  const char *v = NULL;
  if (!strncmp(argv[i], "--nproc=", 8)) { v = argv[i] + 8; *used = 1; }
  else if (i + 1 < argc) { v = argv[i + 1]; *used = 2; }
  char *end = NULL;
  long n = v ? strtol(v, &end, 10) : 0;
  if (!v || !*v || *end || n < 1 || n > 4096) {
    fprintf(stderr, "th: --nproc takes a number of ranks from 1 to 4096, got %s\n", v ? v : "nothing");
    return -1;
  }
  return (int)n;
}

int th_launch(int argc, char **argv) {
  int at = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--nproc") || !strncmp(argv[i], "--nproc=", 8)) { at = i; break; }
    if (argv[i][0] != '-' || !strcmp(argv[i], "--") || !strcmp(argv[i], "-")) break;   /* the script: th's own */
    if ((argv[i][1] == 'e' || argv[i][1] == 'l') && !argv[i][2]) i++;                  /* -e stat, -l mod */
  }
  if (!at) return 0;
  int used = 0;
  int n = nproc_value(argc, argv, at, &used);
  if (n < 0) return 2;
  char exe[PATH_MAX];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len <= 0) { fprintf(stderr, "th --nproc: cannot find th's own path\n"); return 2; }
  exe[len] = 0;
  char np[16];
  snprintf(np, sizeof np, "%d", n);
  /* mpirun -np N --oversubscribe -x TH_RANK_PREFIX -x MASTER_ADDR -x MASTER_PORT th <the other arguments> */
  char **args = calloc((size_t)argc + 12, sizeof *args);
  if (!args) { fprintf(stderr, "th --nproc: out of memory\n"); return 2; }
  int k = 0;
  args[k++] = "mpirun";
  args[k++] = "-np";
  args[k++] = np;
  args[k++] = "--oversubscribe";
  args[k++] = "-x";
  args[k++] = "TH_RANK_PREFIX";
  if (!getenv("MASTER_ADDR")) setenv("MASTER_ADDR", "127.0.0.1", 1);
  if (!getenv("MASTER_PORT")) {
    char port[16];
    int p = free_port();
    snprintf(port, sizeof port, "%d", p ? p : 29500);
    setenv("MASTER_PORT", port, 1);
  }
  args[k++] = "-x";
  args[k++] = "MASTER_ADDR";
  args[k++] = "-x";
  args[k++] = "MASTER_PORT";
  args[k++] = exe;
  for (int i = 1; i < argc; i++)
    if (i < at || i >= at + used) args[k++] = argv[i];
  args[k] = NULL;
  setenv("TH_RANK_PREFIX", "1", 1);
  if (geteuid() == 0) {
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
  }
  fflush(NULL);
  execvp("mpirun", args);
  fprintf(stderr, "th --nproc: cannot start mpirun (%s): install OpenMPI (apt-get install openmpi-bin "
          "libopenmpi-dev)\n", strerror(errno));
  free(args);
  return 2;
}

/* the prefixer: copies lines from in to out, each after prefix, each line
   (with its prefix) in one write so that mpirun, which merges the ranks'
   outputs, never splits a line between two ranks'; a line longer than the
   buffer goes out in pieces, a last line without a newline at the end */
static int put(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static void copy_lines(int in, int out, const char *prefix) {
  static char line[1 << 16];
  char buf[1 << 14];
  size_t plen = strlen(prefix), used = 0;
  memcpy(line, prefix, plen);
  for (;;) {
    ssize_t got = read(in, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    for (ssize_t i = 0; i < got; i++) {
      line[plen + used++] = buf[i];
      if (buf[i] == '\n' || plen + used == sizeof line) {
        if (put(out, line, plen + used)) return;
        used = 0;
      }
    }
  }
  if (used > 0) put(out, line, plen + used);
}

void th_rank_prefix(void) {
  const char *on = getenv("TH_RANK_PREFIX");
  const char *rank = getenv("OMPI_COMM_WORLD_RANK");
  if (!on || !*on || !rank) return;
  char prefix[48];
  snprintf(prefix, sizeof prefix, "[rank %s] ", rank);
  int out[2], err[2];
  if (pipe(out) || pipe(err)) return;
  pid_t pid = fork();
  if (pid < 0) return;
  if (pid == 0) {
    /* the prefixer: Ctrl-C stops the rank, which closes the pipes; drain them then */
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    close(out[1]);
    close(err[1]);
    pid_t pid2 = fork();   /* one process per stream */
    if (pid2 == 0) { close(out[0]); copy_lines(err[0], 2, prefix); _exit(0); }
    close(err[0]);
    copy_lines(out[0], 1, prefix);
    if (pid2 > 0) waitpid(pid2, NULL, 0);
    _exit(0);
  }
  dup2(out[1], 1);
  dup2(err[1], 2);
  close(out[0]); close(out[1]);
  close(err[0]); close(err[1]);
  setvbuf(stdout, NULL, _IOLBF, 0);   /* whole lines reach the prefixer */
}
