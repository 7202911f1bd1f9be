/* lt_data.c: what lib/data needs from C -- IDX files, mapped files, and the
   plumbing of DataLoader worker processes: fork, socket pairs, and messages
   whose tensors travel in shared memory (a memfd passed with SCM_RIGHTS and
   mapped by the receiver: the data is written once and never serialized). */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "lt.h"
#include "../tensor/mt_io.h"

/* torch._read_idx(path) -> tensor */
static int d_read_idx(lua_State *L) {
  const char *path = lt_check_path(L, 1, "read_idx");
  mt_tensor *r = lt_push(L);
  LT_TRY(L, mt_read_idx(r, path));
  return 1;
}

/* torch._map_file(path, dtype) -> 1-D tensor over the file */
static int d_map_file(lua_State *L) {
  const char *path = lt_check_path(L, 1, "map_file");
  int dtype = lt_check_dtype_name(L, 2, "map_file");
  mt_tensor *r = lt_push(L);
  LT_TRY(L, mt_map_file(r, path, dtype));
  return 1;
}

/* ---- processes ---- */
static int d_socketpair(lua_State *L) {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0)
    luaL_error(L, "DataLoader: socketpair failed: %s", strerror(errno));
  lua_pushinteger(L, fds[0]);
  lua_pushinteger(L, fds[1]);
  return 2;
}

static int d_fork(lua_State *L) {
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) luaL_error(L, "DataLoader: fork failed: %s", strerror(errno));
  if (pid == 0) signal(SIGINT, SIG_IGN);          /* Ctrl-C is the main process's */
  lua_pushinteger(L, pid);
  return 1;
}

/* torch._exit(code): leaves a worker at once (no Lua state teardown) */
static int d_exit(lua_State *L) {
  fflush(stdout);
  fflush(stderr);
  _exit((int)luaL_optinteger(L, 1, 0));
  return 0;
}

static int d_close(lua_State *L) {
  close((int)luaL_checkinteger(L, 1));
  return 0;
}

static int d_getpid(lua_State *L) { lua_pushinteger(L, getpid()); return 1; }

/* torch._isatty(fd=1): is the file descriptor a terminal? (progress bars) */
static int d_isatty(lua_State *L) { lua_pushboolean(L, isatty((int)luaL_optinteger(L, 1, 1))); return 1; }

/* torch._waitpid(pid, block) -> 'running' | 'exited', code | 'signaled', signal */
static int d_waitpid(lua_State *L) {
  pid_t pid = (pid_t)luaL_checkinteger(L, 1);
  int status = 0;
  pid_t r;
  do r = waitpid(pid, &status, lua_toboolean(L, 2) ? 0 : WNOHANG);
  while (r < 0 && errno == EINTR);
  if (r == 0) { lua_pushliteral(L, "running"); return 1; }
  if (r < 0) { lua_pushliteral(L, "gone"); return 1; }
  if (WIFSIGNALED(status)) { lua_pushliteral(L, "signaled"); lua_pushinteger(L, WTERMSIG(status)); return 2; }
  lua_pushliteral(L, "exited");
  lua_pushinteger(L, WEXITSTATUS(status));
  return 2;
}

/* torch._sleep(seconds): pauses the process (waiting for a worker to exit) */
static int d_sleep(lua_State *L) {
  double s = luaL_checknumber(L, 1);
  luaL_argcheck(L, s >= 0 && s <= 60, 1, "_sleep: seconds must be in [0, 60]");
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
  return 0;
}

static int d_kill(lua_State *L) {
  kill((pid_t)luaL_checkinteger(L, 1), (int)luaL_optinteger(L, 2, SIGTERM));
  return 0;
}

/* ---- messages: text plus tensors in shared memory ----
   One SOCK_SEQPACKET packet: a header, per-tensor records, the text; the
   tensors' bytes lie in a memfd (64-byte aligned each) passed alongside. */
#define MSG_MAGIC 0x6d744442u
#define MSG_MAX (1 << 20)

typedef struct { uint32_t magic, text_len, ntensors, pad; uint64_t shm_bytes; } msg_head;
typedef struct { int32_t dtype, ndim; int64_t shape[MT_MAX_DIMS]; uint64_t offset; } msg_tensor;

static size_t align64(size_t n) { return (n + 63) & ~(size_t)63; }

/* torch._send_msg(fd, text, {tensors}) */
static int d_send_msg(lua_State *L) {
  int fd = (int)luaL_checkinteger(L, 1);
  size_t text_len;
  const char *text = luaL_checklstring(L, 2, &text_len);
  int nt = lua_istable(L, 3) ? (int)lua_rawlen(L, 3) : 0;
  size_t packet = sizeof(msg_head) + (size_t)nt * sizeof(msg_tensor) + text_len;
  if (packet > MSG_MAX) luaL_error(L, "DataLoader: a message of %I bytes is too large", (lua_Integer)packet);
  char *buf = lua_newuserdatauv(L, packet, 0);
  msg_head *h = (msg_head *)buf;
  msg_tensor *recs = (msg_tensor *)(buf + sizeof *h);
  memset(h, 0, sizeof *h);
  h->magic = MSG_MAGIC;
  h->text_len = (uint32_t)text_len;
  h->ntensors = (uint32_t)nt;
  size_t total = 0;
  for (int i = 0; i < nt; i++) {
    lua_rawgeti(L, 3, i + 1);
    mt_tensor *t = lt_check(L, -1, "DataLoader message");
    lua_pop(L, 1);
    memset(&recs[i], 0, sizeof recs[i]);
    recs[i].dtype = t->dtype;
    recs[i].ndim = t->ndim;
    memcpy(recs[i].shape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
    recs[i].offset = total;
    total += align64(mt_numel(t) * mt_dtypes[t->dtype].size);
  }
  h->shm_bytes = total;
  memcpy(buf + sizeof *h + (size_t)nt * sizeof(msg_tensor), text, text_len);
  int mfd = -1;
  if (total > 0) {
    mfd = memfd_create("moontorch-batch", MFD_CLOEXEC);
    if (mfd < 0 || ftruncate(mfd, (off_t)total) != 0) {
      if (mfd >= 0) close(mfd);
      luaL_error(L, "DataLoader: shared memory of %I bytes: %s", (lua_Integer)total, strerror(errno));
    }
    char *map = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    if (map == MAP_FAILED) { close(mfd); luaL_error(L, "DataLoader: mmap: %s", strerror(errno)); }
    for (int i = 0; i < nt; i++) {
      lua_rawgeti(L, 3, i + 1);
      mt_tensor *t = lt_test(L, -1);
      mt_tensor dst = {0};
      dst.storage = mt_storage_mapped(map, total);   /* a borrowed view: never released */
      if (!dst.storage) { munmap(map, total); close(mfd); luaL_error(L, "DataLoader: out of memory"); }
      dst.offset = (int64_t)(recs[i].offset / mt_dtypes[t->dtype].size);
      dst.dtype = t->dtype;
      dst.ndim = t->ndim;
      memcpy(dst.shape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
      mt_contiguous_strides(t->ndim, t->shape, dst.stride);
      int rc = mt_copy(&dst, t);
      dst.storage->nbytes = 0;                        /* the storage must not unmap */
      mt_storage_release(dst.storage);
      lua_pop(L, 1);
      if (rc) { munmap(map, total); close(mfd); lt_error(L); }
    }
    munmap(map, total);
  }
  struct iovec iov = {buf, packet};
  struct msghdr msg = {0};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  union { struct cmsghdr align; char bytes[CMSG_SPACE(sizeof(int))]; } ctl;
  if (mfd >= 0) {
    msg.msg_control = ctl.bytes;
    msg.msg_controllen = sizeof ctl.bytes;
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &mfd, sizeof(int));
  }
  ssize_t sent;
  do sent = sendmsg(fd, &msg, MSG_NOSIGNAL);
  while (sent < 0 && errno == EINTR);
  if (mfd >= 0) close(mfd);
  if (sent < 0) {
    lua_pushnil(L);
    lua_pushstring(L, strerror(errno));
    return 2;
  }
  lua_pushboolean(L, 1);
  return 1;
}

/* torch._recv_msg(fd, timeout_seconds or nil) -> text, {tensors}
   | nil, 'timeout' | nil, 'closed' | nil, 'interrupted' (a signal came: back to
   Lua, where th's Ctrl-C hook can raise) */
static int d_recv_msg(lua_State *L) {
  int fd = (int)luaL_checkinteger(L, 1);
  double timeout = luaL_optnumber(L, 2, -1);
  struct pollfd p = {fd, POLLIN, 0};
  int ms = timeout < 0 ? -1 : (int)(timeout * 1000);
  int pr = poll(&p, 1, ms);
  if (pr < 0 && errno == EINTR) { lua_pushnil(L); lua_pushliteral(L, "interrupted"); return 2; }
  if (pr == 0) { lua_pushnil(L); lua_pushliteral(L, "timeout"); return 2; }
  char *buf = lua_newuserdatauv(L, MSG_MAX, 0);
  struct iovec iov = {buf, MSG_MAX};
  struct msghdr msg = {0};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  union { struct cmsghdr align; char bytes[CMSG_SPACE(sizeof(int))]; } ctl;
  msg.msg_control = ctl.bytes;
  msg.msg_controllen = sizeof ctl.bytes;
  ssize_t got;
  do got = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
  while (got < 0 && errno == EINTR);
  int mfd = -1;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) memcpy(&mfd, CMSG_DATA(c), sizeof(int));
  if (got <= 0) {
    if (mfd >= 0) close(mfd);
    lua_pushnil(L);
    lua_pushliteral(L, "closed");
    return 2;
  }
  msg_head *h = (msg_head *)buf;
  if ((size_t)got < sizeof *h || h->magic != MSG_MAGIC ||
      (size_t)got != sizeof *h + (size_t)h->ntensors * sizeof(msg_tensor) + h->text_len ||
      (h->ntensors > 0) != (mfd >= 0)) {
    if (mfd >= 0) close(mfd);
    luaL_error(L, "DataLoader: a malformed message from a worker");
  }
  msg_tensor *recs = (msg_tensor *)(buf + sizeof *h);
  lua_pushlstring(L, buf + sizeof *h + (size_t)h->ntensors * sizeof(msg_tensor), h->text_len);
  lua_createtable(L, (int)h->ntensors, 0);
  if (mfd >= 0) {
    char *map = mmap(NULL, h->shm_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    close(mfd);
    if (map == MAP_FAILED) luaL_error(L, "DataLoader: mmap of a batch: %s", strerror(errno));
    /* the collector cannot see this memory: let it know, as the allocator does */
    lua_gc(L, LUA_GCSTEP, (int)(h->shm_bytes >> 10));
    mt_storage *s = mt_storage_mapped(map, h->shm_bytes);  /* shared by the batch's tensors */
    if (!s) { munmap(map, h->shm_bytes); luaL_error(L, "DataLoader: out of memory"); }
    for (uint32_t i = 0; i < h->ntensors; i++) {
      msg_tensor *rec = &recs[i];
      if (rec->dtype < 0 || rec->dtype >= MT_NDTYPES || rec->ndim < 0 || rec->ndim > MT_MAX_DIMS) {
        mt_storage_release(s);
        luaL_error(L, "DataLoader: a malformed tensor record from a worker");
      }
      mt_tensor *t = lt_push(L);
      mt_storage_retain(s);
      t->storage = s;
      t->dtype = rec->dtype;
      t->ndim = rec->ndim;
      memcpy(t->shape, rec->shape, sizeof(int64_t) * (size_t)rec->ndim);
      mt_contiguous_strides(rec->ndim, rec->shape, t->stride);
      t->offset = (int64_t)(rec->offset / mt_dtypes[rec->dtype].size);
      lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    mt_storage_release(s);
  }
  return 2;
}

static const luaL_Reg functions[] = {
  {"_read_idx", d_read_idx}, {"_map_file", d_map_file}, {"_socketpair", d_socketpair},
  {"_fork", d_fork}, {"_exit", d_exit}, {"_close", d_close}, {"_getpid", d_getpid}, {"_isatty", d_isatty},
  {"_waitpid", d_waitpid}, {"_kill", d_kill}, {"_sleep", d_sleep}, {"_send_msg", d_send_msg}, {"_recv_msg", d_recv_msg},
  {NULL, NULL}};

void lt_open_data(lua_State *L) { lt_setfuncs(L, NULL, functions); }
