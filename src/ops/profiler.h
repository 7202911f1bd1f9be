/* profiler.h: the profiler's recorder (torch.profiler): timed, nested events
   of ops (the dispatcher's hook), autograd nodes, named ranges and the
   pool's chunks, kept per thread until the session is read. */
#ifndef MT_PROFILER_H
#define MT_PROFILER_H

#include <stdint.h>
#include "../tensor/mt_tensor.h"

/* what an event is: its name's kind and where it came from */
enum { MT_PROF_OP, MT_PROF_NODE, MT_PROF_RANGE, MT_PROF_CHUNK };

/* what a session records beyond names and times */
enum { MT_PROF_SHAPES = 1, MT_PROF_MEMORY = 2, MT_PROF_STACK = 4 };

typedef struct {
  int64_t start_ns, end_ns;        /* CLOCK_MONOTONIC; end 0 while open */
  int64_t alloc_bytes, freed_bytes; /* the allocator's bytes handed out and given back meanwhile (MT_PROF_MEMORY) */
  int32_t name;                    /* an interned name (mt_prof_name) */
  int32_t parent;                  /* the enclosing event's index in the same thread, -1 at the top */
  int32_t shapes;                  /* offset of the inputs' shapes in the thread's words, -1 none */
  int32_t site;                    /* an interned "file:line" of the Lua caller, -1 none */
  int32_t kind;                    /* MT_PROF_OP, ... */
} mt_prof_event;

/* 1 while a session records: the one test the autograd engine makes per node */
extern int mt_prof_on;

/* Starts a session recording what flags ask (earlier events are dropped);
   the calling thread is the one whose Lua stack the site function reads. */
int mt_prof_start(int flags);
/* Stops it: open events end now; the events stay readable until the next start. */
void mt_prof_stop(void);

/* The id of a name (copied), the same for the same text; -1 when out of memory. */
int32_t mt_prof_name(const char *name);
/* The text of an id. */
const char *mt_prof_name_text(int32_t id);
/* The function giving the calling thread's Lua call site as a name id (-1 none),
   asked at each event's start when the session records MT_PROF_STACK. */
void mt_prof_set_site_fn(int32_t (*fn)(void));

/* Opens an event of kind named name (an id), with the shapes of the inputs a,
   b, c (NULL: none) when recorded, and closes the innermost open one on the
   calling thread. Does nothing while no session records. */
void mt_prof_begin(int32_t name, int kind, const mt_tensor *a, const mt_tensor *b, const mt_tensor *c);
void mt_prof_end(void);

/* Reading a stopped session: the threads that recorded, each with its events
   in the order they started, its shape words, its OS thread id and its label. */
int mt_prof_threads(void);
const mt_prof_event *mt_prof_events(int thread, int32_t *n);
const int64_t *mt_prof_words(int thread);
int mt_prof_thread_id(int thread);
const char *mt_prof_thread_label(int thread);
/* The session's start (CLOCK_MONOTONIC ns). */
int64_t mt_prof_origin(void);

#endif
