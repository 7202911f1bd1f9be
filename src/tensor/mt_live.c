/* mt_live.c: the registry of live storages -- a slot array with its free
   slots chained through it, so adding and removing a storage touch only its
   own slot (no neighbour's header) -- and the hooks that record them. */
#include "mt_live.h"
#include <limits.h>
#include <stdlib.h>

/* The slot array starts this large and doubles as storages accumulate; it is
   never shrunk (16 bytes a slot, for the most storages ever live at once). */
#define MT_LIVE_FIRST_SLOTS 1024

typedef struct {
  mt_storage *s;                  /* NULL: a free slot */
  union {
    void *record;                 /* a live slot's record, or NULL */
    int64_t next_free;            /* a free slot's successor in the chain, or -1 */
  };
} live_slot;

static live_slot *slots;
static int64_t nslots, capacity, first_free = -1;
static const mt_live_hooks *hooks;
static int recording;

/* Storages come and go on every thread (the pool's workers, the Lua thread);
   each holds the lock for a few stores. */
static volatile int lock_word;
static void live_lock(void) { while (__atomic_exchange_n(&lock_word, 1, __ATOMIC_ACQUIRE)) ; }
static void live_unlock(void) { __atomic_store_n(&lock_word, 0, __ATOMIC_RELEASE); }

void mt_live_install(const mt_live_hooks *h) { __atomic_store_n(&hooks, h, __ATOMIC_RELEASE); }

void mt_live_set_recording(int on) { __atomic_store_n(&recording, on && hooks, __ATOMIC_RELEASE); }

/* A slot for s: the first free one, else the next one of the array (grown
   when full); -1 when the array cannot grow. Under the lock. */
static int64_t take_slot(void) {
  if (first_free >= 0) {
    int64_t i = first_free;
    first_free = slots[i].next_free;
    return i;
  }
  if (nslots == capacity) {
    int64_t cap = capacity ? capacity : MT_LIVE_FIRST_SLOTS, bytes;
    if (capacity && mt_mul_size("storage registry", cap, 2, &cap)) return -1;
    if (cap > INT_MAX) return -1;               /* mt_storage.live_slot is an int */
    if (mt_mul_size("storage registry", cap, (int64_t)sizeof *slots, &bytes)) return -1;
    live_slot *grown = realloc(slots, (size_t)bytes);
    if (!grown) return -1;
    slots = grown;
    capacity = cap;
  }
  return nslots++;
}

void mt_live_add(mt_storage *s, int dtype, int ndim, const int64_t *shape) {
  void *record = NULL;
  if (__builtin_expect(__atomic_load_n(&recording, __ATOMIC_ACQUIRE), 0))   /* hooks set before */
    record = hooks->record(dtype, ndim, shape);
  s->alloc_dtype = dtype;
  live_lock();
  int64_t i = take_slot();
  if (i >= 0) {
    slots[i].s = s;
    slots[i].record = record;
    record = NULL;
  }
  s->live_slot = (int)i;
  live_unlock();
  if (record) hooks->drop(record);
}

void mt_live_remove(mt_storage *s) {
  if (s->live_slot < 0) return;
  live_lock();
  live_slot *slot = &slots[s->live_slot];
  void *record = slot->record;
  slot->s = NULL;
  slot->next_free = first_free;
  first_free = s->live_slot;
  s->live_slot = -1;
  live_unlock();
  if (record) hooks->drop(record);
}

int mt_live_list(mt_live_info **out, int64_t *n) {
  mt_live_info *list = NULL;
  int64_t room = 0;
  for (;;) {                                    /* sized outside the lock: malloc may be slow */
    live_lock();
    if (nslots <= room) break;
    int64_t want = nslots + nslots / 8 + 16;
    live_unlock();
    free(list);
    int64_t bytes;
    if (mt_mul_size("memory_snapshot", want, (int64_t)sizeof *list, &bytes) || !(list = malloc((size_t)bytes))) return -1;
    room = want;
  }
  int64_t k = 0;
  for (int64_t i = 0; i < nslots; i++) {
    const mt_storage *s = slots[i].s;
    if (!s) continue;
    list[k] = (mt_live_info){s->nbytes, s->device, s->device_index, s->alloc_dtype, s->owns, slots[i].record};
    if (slots[i].record) hooks->keep(slots[i].record);
    k++;
  }
  live_unlock();
  *out = list;
  *n = k;
  return 0;
}
