/* mt_mapguard.h: file mappings that outlive their file -- a page lost when
   the file shrinks under a mapping reads as zeros and is reported, not SIGBUS. */
#ifndef MT_MAPGUARD_H
#define MT_MAPGUARD_H

#include <stddef.h>

/* Guards [base, base + nbytes), a private read-write mapping of path, from
   here on (the first call installs the SIGBUS handler). 0, or -1 when out of
   memory. */
int mt_mapguard_add(void *base, size_t nbytes, const char *path);

/* Unmaps [base, base + nbytes), forgetting it first if it is guarded. */
void mt_mapguard_unmap(void *base, size_t nbytes);

/* fn is called from the signal handler, on whichever thread read a lost
   page, so it must be async-signal-safe (lua_sethook is). */
void mt_mapguard_on_loss(void (*fn)(void));

/* 1, with the path of the file (cut to n bytes), when a guarded mapping has
   lost a page since the last call; else 0. */
int mt_mapguard_take_loss(char *path, size_t n);

#endif
