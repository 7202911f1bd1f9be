/* store.c: the rendezvous of init_process_group{backend='nccl'}
   (build/distributed/store.so): rank 0 hands a blob, NCCL's unique id, to
   the other ranks over TCP at MASTER_ADDR:MASTER_PORT, as PyTorch's env://.

   store.exchange(host, port, rank, world, blob, timeout_s) returns the blob
   on every rank, or nil and a message. The protocol, big-endian:
     a rank > 0 connects and sends a hello: magic, rank, world (3 x u32);
     rank 0 listens, and once every rank has said hello it answers each one
     with a status byte and a u32 length, then as many bytes: status 0 the
     blob, 1 "this rank was refused" and 2 "the rendezvous failed" with the
     reason as text; then it closes the connection.
   Every socket is nonblocking and every wait a poll() with the one deadline
   of the call, so nothing waits past timeout_s (name resolution aside:
   getaddrinfo of a host name may take the resolver's own time). */
#define _GNU_SOURCE
#include <lua.h>
#include <lauxlib.h>
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* "MTRV": tells a rank of this protocol from a stray connection */
#define STORE_MAGIC 0x4d545256u
/* NCCL's id is 128 bytes; 1 MiB leaves room for any other use and bounds
   what a length read from the network may make us allocate */
#define STORE_MAX_BLOB (1u << 20)
/* the longest error text a reply carries (longer ones are cut) */
#define STORE_MAX_REASON 2048
/* ranks a master can wait for; far above what the open-file limit allows */
#define STORE_MAX_WORLD 65536
/* connections accepted but not yet identified by their hello: when all are
   taken, the oldest is dropped, so strays cannot lock the ranks out */
#define STORE_MAX_PENDING 64
/* how often a rank retries connecting while the master is not listening */
#define STORE_RETRY_MS 50
/* the longest timeout_s: keeps the deadline in nanoseconds far from overflow */
#define STORE_MAX_TIMEOUT_S 1e7
/* rank ranges listed in a timeout message before "and N more" */
#define STORE_MAX_LISTED 16

#define HELLO_SIZE 12         /* magic, rank, world */
#define HEADER_SIZE 5         /* status, length */
#define ADDRESS_SIZE (INET_ADDRSTRLEN + 6)   /* "255.255.255.255:65535" */
#define TEXT_SIZE 4096
#define STATE_METATABLE "distributed.store.state"

enum { REPLY_BLOB = 0, REPLY_REFUSED = 1, REPLY_FAILED = 2 };
enum { IO_DONE, IO_TIMEOUT, IO_CLOSED, IO_FAILED };

/* a message built piece by piece; never overflows, cuts what does not fit */
struct text {
  char s[TEXT_SIZE];
  size_t len;
};

static void text_add(struct text *t, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void text_add(struct text *t, const char *format, ...) {
  if (t->len >= sizeof t->s - 1) return;
  va_list args;
  va_start(args, format);
  int n = vsnprintf(t->s + t->len, sizeof t->s - t->len, format, args);
  va_end(args);
  if (n < 0) return;
  size_t room = sizeof t->s - 1 - t->len;
  t->len += (size_t)n < room ? (size_t)n : room;
}

/* one connection at the master */
struct peer {
  int fd;                              /* -1: none */
  size_t got;                          /* hello bytes received so far */
  unsigned long serial;                /* order of acceptance: the oldest is dropped first */
  unsigned char hello[HELLO_SIZE];
  char address[ADDRESS_SIZE];
};

/* one call of exchange: a userdata closed (to-be-closed slot) on every way
   out, errors included, so no socket or buffer outlives the call */
struct rendezvous {
  int rank, world, port;
  const char *host;
  double timeout_s;
  int64_t deadline_ns;
  int listen_fd, client_fd;
  char *received;                      /* the blob a rank > 0 received (malloc'd) */
  size_t received_len;
  struct text reason;                  /* why it failed */
  int ignored;                         /* connections dropped at the master that were no rank */
  char last_ignored[512];              /* why the last one was dropped */
  unsigned long accepted;              /* connections accepted so far */
  struct pollfd *polls;                /* master: 1 + peer_count entries */
  int *poll_peer;                      /* which peer each poll entry watches (-1: the listener) */
  int peer_count;                      /* master: world + STORE_MAX_PENDING; other ranks: 0 */
  struct peer peers[];                 /* [1, world): the ranks that said hello, by rank;
                                          [world, peer_count): not yet identified */
};

static void release(struct rendezvous *r) {
  if (r->listen_fd >= 0) close(r->listen_fd);
  if (r->client_fd >= 0) close(r->client_fd);
  r->listen_fd = r->client_fd = -1;
  for (int i = 0; i < r->peer_count; i++) {
    if (r->peers[i].fd >= 0) close(r->peers[i].fd);
    r->peers[i].fd = -1;
  }
  free(r->received);
  r->received = NULL;
}

static int state_close(lua_State *L) {
  release(luaL_checkudata(L, 1, STATE_METATABLE));
  return 0;
}

/* ---- time and waiting ---- */

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* milliseconds left until deadline, rounded up (0: passed), as poll() takes them */
static int ms_until(int64_t deadline) {
  int64_t left = deadline - now_ns();
  if (left <= 0) return 0;
  int64_t ms = (left + 999999) / 1000000;
  return ms > INT_MAX ? INT_MAX : (int)ms;
}

static void sleep_ms(int ms) {
  poll(NULL, 0, ms);                   /* an interrupted sleep only retries sooner */
}

/* waits until fd is ready for events: 1 ready, 0 the deadline passed, -1
   failed (errno). Looks once even past the deadline, so that what is ready
   already (a refused connection) is seen as it is */
static int wait_fd(int fd, short events, int64_t deadline) {
  for (;;) {
    int ms = ms_until(deadline);
    struct pollfd entry = {.fd = fd, .events = events};
    int n = poll(&entry, 1, ms);
    if (n > 0) return 1;
    if (n < 0 && errno != EINTR) return -1;
    if (n == 0 && ms == 0) return 0;
  }
}

/* ---- whole messages over a nonblocking socket ---- */

static int send_all(int fd, const void *data, size_t len, int64_t deadline) {
  const char *bytes = data;
  size_t done = 0;
  while (done < len) {
    ssize_t n = send(fd, bytes + done, len - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += (size_t)n;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      int ready = wait_fd(fd, POLLOUT, deadline);
      if (ready == 0) return IO_TIMEOUT;
      if (ready < 0) return IO_FAILED;
    } else {
      if (n == 0) errno = EPIPE;
      return IO_FAILED;
    }
  }
  return IO_DONE;
}

static int recv_all(int fd, void *data, size_t len, int64_t deadline) {
  char *bytes = data;
  size_t done = 0;
  while (done < len) {
    ssize_t n = recv(fd, bytes + done, len - done, 0);
    if (n > 0) {
      done += (size_t)n;
    } else if (n == 0) {
      return IO_CLOSED;
    } else if (errno == EINTR) {
      continue;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      int ready = wait_fd(fd, POLLIN, deadline);
      if (ready == 0) return IO_TIMEOUT;
      if (ready < 0) return IO_FAILED;
    } else {
      return IO_FAILED;
    }
  }
  return IO_DONE;
}

static void put_u32(unsigned char *at, uint32_t value) {
  at[0] = (unsigned char)(value >> 24);
  at[1] = (unsigned char)(value >> 16);
  at[2] = (unsigned char)(value >> 8);
  at[3] = (unsigned char)value;
}

static uint32_t get_u32(const unsigned char *at) {
  return (uint32_t)at[0] << 24 | (uint32_t)at[1] << 16 | (uint32_t)at[2] << 8 | (uint32_t)at[3];
}

/* ---- rank 0, the master ---- */

/* an error answer, best effort and without waiting: the socket's buffer is
   empty at this point, so a short text fits at once */
static void reply_error(int fd, int status, const struct text *reason) {
  unsigned char message[HEADER_SIZE + STORE_MAX_REASON];
  size_t len = reason->len < STORE_MAX_REASON ? reason->len : STORE_MAX_REASON;
  message[0] = (unsigned char)status;
  put_u32(message + 1, (uint32_t)len);
  memcpy(message + HEADER_SIZE, reason->s, len);
  while (send(fd, message, HEADER_SIZE + len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && errno == EINTR) {
  }
}

/* tells every connection still open that the rendezvous failed, and why */
static void reply_failed_to_all(struct rendezvous *r) {
  for (int i = 1; i < r->peer_count; i++)
    if (r->peers[i].fd >= 0) reply_error(r->peers[i].fd, REPLY_FAILED, &r->reason);
}

static void close_peer(struct peer *peer) {
  if (peer->fd >= 0) close(peer->fd);
  peer->fd = -1;
}

/* a connection that is no rank: dropped, and remembered for a timeout message */
static void ignore_peer(struct rendezvous *r, struct peer *peer, const char *format, ...)
  __attribute__((format(printf, 3, 4)));
static void ignore_peer(struct rendezvous *r, struct peer *peer, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(r->last_ignored, sizeof r->last_ignored, format, args);
  va_end(args);
  r->ignored++;
  close_peer(peer);
}

static int master_listen(struct rendezvous *r) {
  r->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int on = 1;
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)r->port),
                                .sin_addr.s_addr = htonl(INADDR_ANY)};
  if (r->listen_fd < 0 || setsockopt(r->listen_fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0 ||
      bind(r->listen_fd, (struct sockaddr *)&address, sizeof address) != 0 ||
      listen(r->listen_fd, SOMAXCONN) != 0) {
    text_add(&r->reason, "cannot listen on port %d: %s", r->port, strerror(errno));
    return -1;
  }
  return 0;
}

/* accepts one connection into a free slot of the unidentified ones (the
   oldest is dropped when none is free); fails only when no more files open */
static int master_accept(struct rendezvous *r) {
  struct sockaddr_in from;
  socklen_t from_len = sizeof from;
  int fd = accept4(r->listen_fd, (struct sockaddr *)&from, &from_len, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) {
    if (errno != EMFILE && errno != ENFILE && errno != ENOBUFS && errno != ENOMEM) return 0;
    text_add(&r->reason, "cannot accept another rank's connection at port %d: %s%s", r->port, strerror(errno),
             errno == EMFILE ? " (raise the open-file limit, ulimit -n, above the world size)" : "");
    return -1;
  }
  struct peer *slot = NULL;
  for (int i = r->world; i < r->peer_count; i++) {
    struct peer *peer = &r->peers[i];
    if (peer->fd < 0) {
      slot = peer;
      break;
    }
    if (!slot || peer->serial < slot->serial) slot = peer;
  }
  if (slot->fd >= 0)
    ignore_peer(r, slot, "%d connections at once did not say which rank they are; dropped the one from %s",
                STORE_MAX_PENDING, slot->address);
  char ip[INET_ADDRSTRLEN] = "?";
  inet_ntop(AF_INET, &from.sin_addr, ip, sizeof ip);
  snprintf(slot->address, sizeof slot->address, "%s:%u", ip, (unsigned)ntohs(from.sin_port));
  slot->fd = fd;
  slot->got = 0;
  slot->serial = r->accepted++;
  return 0;
}

/* a hello that makes the rendezvous fail: its sender is refused, the caller tells the others */
static int refuse(struct rendezvous *r, struct peer *peer) {
  reply_error(peer->fd, REPLY_REFUSED, &r->reason);
  close_peer(peer);
  return -1;
}

/* reads what peer sent of its hello; once whole, checks it and files the peer
   under its rank. Returns 1 when a rank arrived, 0 when not yet, -1 when the
   hello makes the rendezvous fail (r->reason says why) */
static int master_read_hello(struct rendezvous *r, struct peer *peer) {
  ssize_t n = recv(peer->fd, peer->hello + peer->got, HELLO_SIZE - peer->got, 0);
  if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
  if (n <= 0) {
    ignore_peer(r, peer, "a connection from %s %s before saying which rank it is", peer->address,
                n == 0 ? "closed" : strerror(errno));
    return 0;
  }
  peer->got += (size_t)n;
  if (peer->got < HELLO_SIZE) return 0;
  uint32_t magic = get_u32(peer->hello), rank = get_u32(peer->hello + 4), world = get_u32(peer->hello + 8);
  if (magic != STORE_MAGIC) {
    struct text why = {.len = 0};
    text_add(&why, "a connection from %s sent magic number 0x%08x, not 0x%08x: not a moontorch rank, or another "
             "version of moontorch", peer->address, (unsigned)magic, STORE_MAGIC);
    reply_error(peer->fd, REPLY_REFUSED, &why);
    ignore_peer(r, peer, "%s", why.s);
    return 0;
  }
  if (world != (uint32_t)r->world) {
    text_add(&r->reason, "rank %u connected from %s with world size %u, but rank 0 has world size %d: every rank "
             "must pass the same world size", (unsigned)rank, peer->address, (unsigned)world, r->world);
    return refuse(r, peer);
  }
  if (rank == 0 || rank >= world) {
    text_add(&r->reason, "a process connected from %s as rank %u, but %s", peer->address, (unsigned)rank,
             rank == 0 ? "rank 0 is the master, which listens at this port" : "ranks run from 0 to world size - 1");
    return refuse(r, peer);
  }
  struct peer *filed = &r->peers[rank];
  if (filed->fd >= 0) {
    text_add(&r->reason, "rank %u connected twice, from %s and from %s: two processes were given the same rank",
             (unsigned)rank, filed->address, peer->address);
    return refuse(r, peer);
  }
  *filed = *peer;
  peer->fd = -1;
  return 1;
}

/* a rank that said hello has nothing more to send: readable means it left */
static int master_check_rank(struct rendezvous *r, int rank) {
  struct peer *peer = &r->peers[rank];
  char scratch[64];
  ssize_t n = recv(peer->fd, scratch, sizeof scratch, MSG_DONTWAIT);
  if (n > 0 || (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))) return 0;
  ignore_peer(r, peer, "rank %d connected from %s, then %s", rank, peer->address,
              n == 0 ? "closed its connection (did it time out?)" : strerror(errno));
  return 1;
}

/* "rank 3" or "ranks 0-2, 5" with the ranks that arrived (or are missing) */
static void add_ranks(struct text *t, const struct rendezvous *r, int arrived, int count) {
  text_add(t, count == 1 ? "rank " : "ranks ");
  int listed = 0, left = count;
  for (int first = 0; first < r->world;) {
    if ((first == 0 || r->peers[first].fd >= 0) != arrived) {
      first++;
      continue;
    }
    int last = first;
    while (last + 1 < r->world && (r->peers[last + 1].fd >= 0) == arrived) last++;
    if (listed == STORE_MAX_LISTED) {
      text_add(t, ", and %d more", left);
      return;
    }
    text_add(t, last > first ? "%s%d-%d" : "%s%d", listed ? ", " : "", first, last);
    listed++;
    left -= last - first + 1;
    first = last + 1;
  }
}

static void master_timeout(struct rendezvous *r, int arrived) {
  text_add(&r->reason, "timed out after %g s waiting for the other ranks at port %d: %d of %d ranks arrived (",
           r->timeout_s, r->port, arrived, r->world);
  add_ranks(&r->reason, r, 1, arrived);
  text_add(&r->reason, "); missing: ");
  add_ranks(&r->reason, r, 0, r->world - arrived);
  if (r->ignored)
    text_add(&r->reason, "; %d connection%s dropped, the last: %s", r->ignored, r->ignored == 1 ? "" : "s",
             r->last_ignored);
}

/* waits until every rank has said hello */
static int master_gather(struct rendezvous *r) {
  int arrived = 1;
  while (arrived < r->world) {
    int count = 0;
    r->polls[count] = (struct pollfd){.fd = r->listen_fd, .events = POLLIN};
    r->poll_peer[count++] = -1;
    for (int i = 1; i < r->peer_count; i++) {
      if (r->peers[i].fd < 0) continue;
      r->polls[count] = (struct pollfd){.fd = r->peers[i].fd, .events = POLLIN};
      r->poll_peer[count++] = i;
    }
    int ms = ms_until(r->deadline_ns);
    if (ms == 0) {
      master_timeout(r, arrived);
      return -1;
    }
    int ready = poll(r->polls, (nfds_t)count, ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) {
      text_add(&r->reason, "poll failed at port %d: %s", r->port, strerror(errno));
      return -1;
    }
    for (int k = 0; k < count && ready > 0; k++) {
      if (!r->polls[k].revents) continue;
      ready--;
      int i = r->poll_peer[k];
      if (i < 0) {
        if (master_accept(r) != 0) return -1;
        continue;
      }
      struct peer *peer = &r->peers[i];
      if (peer->fd != r->polls[k].fd) continue;   /* dropped by an earlier event of this round */
      if (i < r->world) {
        arrived -= master_check_rank(r, i);
        continue;
      }
      int result = master_read_hello(r, peer);
      if (result < 0) return -1;
      arrived += result;
    }
  }
  return 0;
}

/* answers every rank with the blob, one after the other (they all wait for it) */
static int master_send(struct rendezvous *r, const char *blob, size_t len) {
  unsigned char header[HEADER_SIZE] = {REPLY_BLOB};
  put_u32(header + 1, (uint32_t)len);
  for (int rank = 1; rank < r->world; rank++) {
    struct peer *peer = &r->peers[rank];
    int result = send_all(peer->fd, header, sizeof header, r->deadline_ns);
    if (result == IO_DONE) result = send_all(peer->fd, blob, len, r->deadline_ns);
    if (result == IO_DONE) {
      close_peer(peer);
      continue;
    }
    if (result == IO_TIMEOUT)
      text_add(&r->reason, "timed out after %g s sending the blob to rank %d at %s", r->timeout_s, rank,
               peer->address);
    else
      text_add(&r->reason, "could not send the blob to rank %d at %s: %s", rank, peer->address, strerror(errno));
    close_peer(peer);
    return -1;
  }
  return 0;
}

static int master_run(struct rendezvous *r, const char *blob, size_t len) {
  if (master_listen(r) != 0) return -1;
  if (master_gather(r) != 0 || master_send(r, blob, len) != 0) {
    reply_failed_to_all(r);
    return -1;
  }
  return 0;
}

/* ---- the other ranks ---- */

/* Linux may connect a socket to itself when the port is in the ephemeral
   range and nobody listens (TCP simultaneous open): that is no master */
static int connected_to_itself(int fd) {
  struct sockaddr_in local, remote;
  socklen_t local_len = sizeof local, remote_len = sizeof remote;
  if (getsockname(fd, (struct sockaddr *)&local, &local_len) != 0 ||
      getpeername(fd, (struct sockaddr *)&remote, &remote_len) != 0)
    return 0;
  return local.sin_port == remote.sin_port && local.sin_addr.s_addr == remote.sin_addr.s_addr;
}

/* one attempt at connecting to address: the socket, or -1 with *error set */
static int connect_once(const struct addrinfo *address, int64_t deadline, int *error) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = errno;
    return -1;
  }
  if (connect(fd, address->ai_addr, address->ai_addrlen) != 0) {
    if (errno != EINPROGRESS && errno != EINTR) {
      *error = errno;
      close(fd);
      return -1;
    }
    int ready = wait_fd(fd, POLLOUT, deadline);
    int status = ready > 0 ? 0 : ready == 0 ? ETIMEDOUT : errno;
    socklen_t status_len = sizeof status;
    if (ready > 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &status, &status_len) != 0) status = errno;
    if (status != 0) {
      *error = status;
      close(fd);
      return -1;
    }
  }
  if (connected_to_itself(fd)) {
    *error = ECONNREFUSED;
    close(fd);
    return -1;
  }
  return fd;
}

/* connects to the master, retrying until it listens or the deadline passes */
static int client_connect(struct rendezvous *r) {
  char port_text[8];
  snprintf(port_text, sizeof port_text, "%d", r->port);
  struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *addresses = NULL;
  for (;;) {
    int status = getaddrinfo(r->host, port_text, &hints, &addresses);
    if (status == 0) break;
    int ms = ms_until(r->deadline_ns);
    if (status == EAI_AGAIN && ms > 0) {
      sleep_ms(ms < STORE_RETRY_MS ? ms : STORE_RETRY_MS);
      continue;
    }
    const char *why = status == EAI_SYSTEM ? strerror(errno) : gai_strerror(status);
    if (status == EAI_AGAIN)
      text_add(&r->reason, "timed out after %g s resolving the master's address %s: %s", r->timeout_s, r->host, why);
    else
      text_add(&r->reason, "cannot resolve the master's address %s (MASTER_ADDR): %s", r->host, why);
    return -1;
  }
  int error = ECONNREFUSED;
  for (;;) {
    for (const struct addrinfo *address = addresses; address && r->client_fd < 0; address = address->ai_next)
      r->client_fd = connect_once(address, r->deadline_ns, &error);
    if (r->client_fd >= 0) break;
    int ms = ms_until(r->deadline_ns);
    if (ms == 0) {
      text_add(&r->reason, "timed out after %g s connecting to the master (rank 0) at %s:%d: %s", r->timeout_s,
               r->host, r->port, strerror(error));
      break;
    }
    sleep_ms(ms < STORE_RETRY_MS ? ms : STORE_RETRY_MS);
  }
  freeaddrinfo(addresses);
  return r->client_fd >= 0 ? 0 : -1;
}

/* the reason of a failed transfer with the master */
static void client_io_error(struct rendezvous *r, int result, const char *doing) {
  if (result == IO_TIMEOUT)
    text_add(&r->reason, "timed out after %g s %s the master (rank 0) at %s:%d: this rank connected, and the master "
             "answers once all %d ranks have", r->timeout_s, doing, r->host, r->port, r->world);
  else if (result == IO_CLOSED)
    text_add(&r->reason, "the master (rank 0) at %s:%d closed the connection before answering (see rank 0's error)",
             r->host, r->port);
  else
    text_add(&r->reason, "lost the connection to the master (rank 0) at %s:%d: %s", r->host, r->port,
             strerror(errno));
}

static int client_run(struct rendezvous *r) {
  if (client_connect(r) != 0) return -1;
  unsigned char hello[HELLO_SIZE], header[HEADER_SIZE];
  put_u32(hello, STORE_MAGIC);
  put_u32(hello + 4, (uint32_t)r->rank);
  put_u32(hello + 8, (uint32_t)r->world);
  int result = send_all(r->client_fd, hello, sizeof hello, r->deadline_ns);
  if (result != IO_DONE) {
    client_io_error(r, result, "saying hello to");
    return -1;
  }
  result = recv_all(r->client_fd, header, sizeof header, r->deadline_ns);
  if (result != IO_DONE) {
    client_io_error(r, result, "waiting for an answer from");
    return -1;
  }
  uint32_t status = header[0], len = get_u32(header + 1);
  if (status > REPLY_FAILED || len > (status == REPLY_BLOB ? STORE_MAX_BLOB : STORE_MAX_REASON)) {
    text_add(&r->reason, "the master (rank 0) at %s:%d answered with status %u and length %u, which this version "
             "does not know", r->host, r->port, (unsigned)status, (unsigned)len);
    return -1;
  }
  r->received = malloc(len ? len : 1);
  if (!r->received) {
    text_add(&r->reason, "out of memory for the %u bytes of the master's answer", (unsigned)len);
    return -1;
  }
  result = recv_all(r->client_fd, r->received, len, r->deadline_ns);
  if (result != IO_DONE) {
    client_io_error(r, result, "receiving the answer of");
    return -1;
  }
  r->received_len = len;
  if (status == REPLY_BLOB) return 0;
  for (uint32_t i = 0; i < len; i++)          /* text from the network: printable only */
    if ((unsigned char)r->received[i] < 32 || (unsigned char)r->received[i] > 126) r->received[i] = '?';
  text_add(&r->reason, "the master (rank 0) at %s:%d %s: %.*s", r->host, r->port,
           status == REPLY_REFUSED ? "refused this rank" : "gave up", (int)len, r->received);
  return -1;
}

/* ---- Lua ---- */

/* store.exchange(host, port, rank, world, blob, timeout_s) -> blob | nil, message */
static int store_exchange(lua_State *L) {
  lua_Integer port = luaL_checkinteger(L, 2), rank = luaL_checkinteger(L, 3), world = luaL_checkinteger(L, 4);
  if (port < 1 || port > 65535) return luaL_argerror(L, 2, lua_pushfstring(L, "port must be 1 to 65535, got %I", port));
  if (world < 1 || world > STORE_MAX_WORLD)
    return luaL_argerror(L, 4, lua_pushfstring(L, "world size must be 1 to %d, got %I", STORE_MAX_WORLD, world));
  if (rank < 0 || rank >= world)
    return luaL_argerror(L, 3, lua_pushfstring(L, "rank must be 0 to %I (world size %I), got %I", world - 1, world,
                                               rank));
  const char *host = rank == 0 ? luaL_optstring(L, 1, NULL) : luaL_checkstring(L, 1);
  size_t blob_len = 0;
  const char *blob = NULL;
  if (rank == 0) {
    if (lua_type(L, 5) != LUA_TSTRING)
      return luaL_argerror(L, 5, lua_pushfstring(L, "rank 0 hands out the blob: a string expected, got %s",
                                                 luaL_typename(L, 5)));
    blob = lua_tolstring(L, 5, &blob_len);
    if (blob_len > STORE_MAX_BLOB)
      return luaL_argerror(L, 5, lua_pushfstring(L, "the blob is %I bytes, more than the limit of %d",
                                                 (lua_Integer)blob_len, (int)STORE_MAX_BLOB));
  } else if (!lua_isnoneornil(L, 5)) {
    return luaL_argerror(L, 5, lua_pushfstring(L, "only rank 0 passes the blob, this is rank %I: pass nil", rank));
  }
  lua_Number timeout_s = luaL_checknumber(L, 6);
  if (!(timeout_s > 0) || timeout_s > STORE_MAX_TIMEOUT_S) {
    char shown[128];
    snprintf(shown, sizeof shown, "timeout_s must be more than 0 and at most %g seconds, got %g",
             STORE_MAX_TIMEOUT_S, (double)timeout_s);
    return luaL_argerror(L, 6, lua_pushstring(L, shown));
  }
  if (world == 1) {
    lua_pushvalue(L, 5);
    return 1;
  }

  int peer_count = rank == 0 ? (int)world + STORE_MAX_PENDING : 0;
  lua_settop(L, 6);
  struct rendezvous *r = lua_newuserdatauv(L, sizeof *r + (size_t)peer_count * sizeof(struct peer), 0);
  *r = (struct rendezvous){.rank = (int)rank, .world = (int)world, .port = (int)port, .host = host,
                           .timeout_s = timeout_s, .listen_fd = -1, .client_fd = -1, .peer_count = peer_count};
  for (int i = 0; i < peer_count; i++) r->peers[i].fd = -1;
  luaL_setmetatable(L, STATE_METATABLE);
  lua_toclose(L, -1);
  if (rank == 0) {
    r->polls = lua_newuserdatauv(L, (size_t)(peer_count + 1) * sizeof *r->polls, 0);
    r->poll_peer = lua_newuserdatauv(L, (size_t)(peer_count + 1) * sizeof *r->poll_peer, 0);
  }

  r->deadline_ns = now_ns() + (int64_t)(timeout_s * 1e9);
  int status = rank == 0 ? master_run(r, blob, blob_len) : client_run(r);
  if (status != 0) {
    lua_pushnil(L);
    lua_pushfstring(L, "distributed.init_process_group (rank %d of %d): %s", r->rank, r->world, r->reason.s);
    return 2;
  }
  if (rank == 0)
    lua_pushvalue(L, 5);
  else
    lua_pushlstring(L, r->received, r->received_len);
  return 1;                            /* returning closes r's slot: release() */
}

int luaopen_distributed_store(lua_State *L) {
  if (luaL_newmetatable(L, STATE_METATABLE)) {
    lua_pushcfunction(L, state_close);
    lua_setfield(L, -2, "__close");
    lua_pushcfunction(L, state_close);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
  static const luaL_Reg functions[] = {{"exchange", store_exchange}, {NULL, NULL}};
  luaL_newlib(L, functions);
  return 1;
}
