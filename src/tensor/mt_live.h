/* mt_live.h: the registry of live storages (every storage allocated and not
   yet freed, on any device) and the hooks that record where each was made. */
#ifndef MT_LIVE_H
#define MT_LIVE_H

#include <stddef.h>
#include <stdint.h>
#include "mt_tensor.h"

/* What a binding layer (src/vm) attaches to a storage while it records:
   record runs on the allocating thread (after the storage is made, outside
   the registry's lock) and returns an opaque record or NULL; keep runs under
   the lock for each record mt_live_list copies; drop releases one (when its
   storage is freed, and once per keep). */
typedef struct {
  void *(*record)(int dtype, int ndim, const int64_t *shape);
  void (*keep)(void *record);
  void (*drop)(void *record);
} mt_live_hooks;

/* Installs the hooks (once; they stay for the records already made). */
void mt_live_install(const mt_live_hooks *h);
/* Turns calling record on or off for the allocations that follow. */
void mt_live_set_recording(int on);

/* s joins the registry; dtype, ndim and shape describe the tensor it was
   made for (dtype -1, ndim -1: unknown). Never fails: a storage the registry
   could not grow for is simply not listed. */
void mt_live_add(mt_storage *s, int dtype, int ndim, const int64_t *shape);
/* s leaves it (a storage never added is ignored); its record is dropped. */
void mt_live_remove(mt_storage *s);

/* One live storage, as mt_live_list copies it. */
typedef struct {
  size_t nbytes;
  int device, device_index;
  int dtype;              /* the tensor's it was made for; -1 unknown */
  int owns;               /* MT_STORAGE_*: mapped files show as MT_STORAGE_MAPPED */
  void *record;           /* kept for the caller, or NULL */
} mt_live_info;
/* Every live storage into *out (malloc'd; the caller drops each record and
   frees it), their number into *n; -1 when out of memory. */
int mt_live_list(mt_live_info **out, int64_t *n);

#endif
