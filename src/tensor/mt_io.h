/* mt_io.h: reading datasets -- IDX files (MNIST, FashionMNIST; plain or
   gzip), files mapped into memory, and tensors in shared memory. */
#ifndef MT_IO_H
#define MT_IO_H

#include "mt_tensor.h"

/* r <- the tensor an IDX file holds (uint8, int8, int16, int32, float32 or
   float64, big-endian on disk); gzip-compressed files are read through zlib.
   Every declared size is checked against what the file holds. */
int mt_read_idx(mt_tensor *r, const char *path);

/* r <- a 1-D tensor of dtype over the whole file, mapped (copy on write:
   writes never reach the file); nothing is read until used. */
int mt_map_file(mt_tensor *r, const char *path, int dtype);

#endif
