/* mt_mapguard.c: file mappings that outlive their file. A SIGBUS inside a
   guarded mapping replaces the lost page with zeros and resumes the read.

   Why not jump out of the fault: the read may be in any kernel, on any
   thread of the pool, holding locks and half-written results; resuming is
   safe anywhere. Truncation also takes the copy-on-write pages of a private
   mapping, so mapping privately alone does not help, and copying the file
   on load would undo what mapping is for. docs/decisions.md has the rest. */
#include "mt_mapguard.h"
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The longest path a loss report keeps; longer ones are cut. */
#define MT_MAPGUARD_PATH 1024

typedef struct guarded {
  char *base;
  size_t pages;
  unsigned char *zeroed;            /* a bit per page: already replaced */
  struct guarded *next;
  char path[];
} guarded;

/* The list is read by the signal handler, so it is guarded by a spin lock
   rather than a mutex; no holder ever touches mapped memory, so a fault can
   never find its own thread holding it. */
static guarded *guarded_list;
static atomic_flag list_lock = ATOMIC_FLAG_INIT;
static size_t page_size;
static int handler_installed;
static struct sigaction previous;   /* SIGBUS's disposition before ours */
static void (*loss_callback)(void);
static int loss_pending;
static char loss_path[MT_MAPGUARD_PATH];

static void lock(void) { while (atomic_flag_test_and_set_explicit(&list_lock, memory_order_acquire)) {} }
static void unlock(void) { atomic_flag_clear_explicit(&list_lock, memory_order_release); }

/* No memory left for a page of zeros: say why before dying, with write(2)
   alone (printf is not safe in a signal handler). */
static void die_without_memory(const char *path) {
  static const char head[] = "moontorch: ", tail[] = " shrank under its mapping, and no memory is left to stand in "
                                                     "for the lost page\n";
  if (write(2, head, sizeof head - 1) < 0 || write(2, path, strlen(path)) < 0 || write(2, tail, sizeof tail - 1) < 0) {}
  abort();
}

/* Zeros in place of the page at addr, once: a second thread faulting on the
   same page before the first replaced it must not wipe what it wrote since. */
static void replace_page(guarded *g, char *addr) {
  size_t page = (size_t)(addr - g->base) / page_size;
  unsigned char bit = (unsigned char)(1u << (page % 8));
  if (g->zeroed[page / 8] & bit) return;
  void *at = g->base + page * page_size;
  if (mmap(at, page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
    die_without_memory(g->path);
  g->zeroed[page / 8] |= bit;
}

/* A SIGBUS that is not ours gets the handling it had before us. */
static void pass_on(int sig, siginfo_t *info, void *context) {
  if (previous.sa_flags & SA_SIGINFO) { previous.sa_sigaction(sig, info, context); return; }
  if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) { previous.sa_handler(sig); return; }
  signal(SIGBUS, SIG_DFL);
  raise(SIGBUS);                    /* delivered, and fatal, when this handler returns */
}

/* The guarded mapping holding addr, or NULL; with the lock held. */
static guarded *guarding(const char *addr) {
  for (guarded *g = guarded_list; g; g = g->next)
    if (addr >= g->base && addr < g->base + g->pages * page_size) return g;
  return NULL;
}

/* BUS_ADRERR is what a read past the end of a mapped file raises; other
   codes (a misaligned access, a hardware memory error) are never ours. */
static void on_sigbus(int sig, siginfo_t *info, void *context) {
  guarded *g = NULL;
  if (info->si_code == BUS_ADRERR) {
    lock();
    if ((g = guarding(info->si_addr))) {
      replace_page(g, info->si_addr);
      if (!loss_pending) strncpy(loss_path, g->path, sizeof loss_path - 1);
      loss_pending = 1;
      if (loss_callback) loss_callback();
    }
    unlock();
  }
  if (!g) pass_on(sig, info, context);
}

static void install_handler(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sigbus;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGBUS, &sa, &previous);
  handler_installed = 1;
}

int mt_mapguard_add(void *base, size_t nbytes, const char *path) {
  if (!page_size) page_size = (size_t)sysconf(_SC_PAGESIZE);
  size_t pages = (nbytes + page_size - 1) / page_size, len = strlen(path);
  guarded *g = malloc(sizeof *g + len + 1);
  unsigned char *zeroed = calloc(pages / 8 + 1, 1);
  if (!g || !zeroed) {
    free(g);
    free(zeroed);
    return -1;
  }
  g->base = base;
  g->pages = pages;
  g->zeroed = zeroed;
  memcpy(g->path, path, len + 1);
  lock();
  if (!handler_installed) install_handler();
  g->next = guarded_list;
  guarded_list = g;
  unlock();
  return 0;
}

void mt_mapguard_unmap(void *base, size_t nbytes) {
  guarded *found = NULL;
  lock();
  for (guarded **at = &guarded_list; *at; at = &(*at)->next)
    if ((*at)->base == base) {
      found = *at;
      *at = found->next;
      break;
    }
  unlock();
  munmap(base, nbytes);
  if (found) {
    free(found->zeroed);
    free(found);
  }
}

void mt_mapguard_on_loss(void (*fn)(void)) { loss_callback = fn; }

int mt_mapguard_take_loss(char *path, size_t n) {
  lock();
  int had = loss_pending;
  if (had && n) {
    strncpy(path, loss_path, n - 1);
    path[n - 1] = '\0';
  }
  loss_pending = 0;
  unlock();
  return had;
}
