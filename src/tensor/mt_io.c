/* mt_io.c: IDX files through zlib (which reads plain files as they are),
   and files mapped into memory. */
#include "mt_io.h"
#include "mt_mapguard.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* IDX type codes and their dtypes */
static int idx_dtype(int code) {
  switch (code) {
  case 0x08: return MT_UINT8;
  case 0x09: return MT_INT8;
  case 0x0B: return MT_INT16;
  case 0x0C: return MT_INT32;
  case 0x0D: return MT_FLOAT32;
  case 0x0E: return MT_FLOAT64;
  default: return -1;
  }
}

/* reads exactly n bytes; 0, or -1 with the error set */
static int read_all(gzFile f, void *buf, size_t n, const char *path, const char *what) {
  char *p = buf;
  while (n > 0) {
    unsigned chunk = n > (1u << 30) ? (1u << 30) : (unsigned)n;
    int got = gzread(f, p, chunk);
    if (got < 0) {
      int zerr;
      const char *msg = gzerror(f, &zerr);
      return mt_fail("read_idx: %s: corrupt data while reading the %s (%s)", path, what, msg ? msg : "zlib error");
    }
    if (got == 0) return mt_fail("read_idx: %s: the file is truncated (it ends inside the %s)", path, what);
    p += got;
    n -= (size_t)got;
  }
  return 0;
}

/* the size the data will have at most: a plain file holds it, a gzip file
   expands at most about 1032 times (deflate's limit) */
static int64_t max_payload(const char *path, int *is_gzip) {
  struct stat st;
  if (stat(path, &st) != 0) return -1;
  unsigned char magic[2] = {0, 0};
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  size_t got = fread(magic, 1, 2, f);
  fclose(f);
  *is_gzip = got == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  return *is_gzip ? (int64_t)st.st_size * 1032 + 1024 : (int64_t)st.st_size;
}

int mt_read_idx(mt_tensor *r, const char *path) {
  int is_gzip = 0;
  int64_t limit = max_payload(path, &is_gzip);
  if (limit < 0) return mt_fail("read_idx: cannot open %s: %s", path, strerror(errno));
  gzFile f = gzopen(path, "rb");
  if (!f) return mt_fail("read_idx: cannot open %s: %s", path, strerror(errno));
  unsigned char head[4];
  int rc = read_all(f, head, 4, path, "header");
  int dtype = -1, ndim = 0;
  int64_t shape[MT_MAX_DIMS];
  if (rc == 0) {
    dtype = idx_dtype(head[2]);
    ndim = head[3];
    if (head[0] != 0 || head[1] != 0 || dtype < 0)
      rc = mt_fail("read_idx: %s is not an IDX file (magic %02x %02x %02x %02x)", path, head[0], head[1],
                   head[2], head[3]);
    else if (ndim < 1 || ndim > MT_MAX_DIMS)
      rc = mt_fail("read_idx: %s declares %d dims (1 to %d supported)", path, ndim, MT_MAX_DIMS);
  }
  int64_t count = 1;
  for (int d = 0; rc == 0 && d < ndim; d++) {
    unsigned char b[4];
    rc = read_all(f, b, 4, path, "header");
    if (rc) break;
    shape[d] = ((int64_t)b[0] << 24) | ((int64_t)b[1] << 16) | ((int64_t)b[2] << 8) | b[3];
    if (shape[d] > 0 && count > INT64_MAX / shape[d]) count = INT64_MAX;
    else count *= shape[d];
  }
  if (rc == 0) {
    int64_t esize = (int64_t)mt_dtypes[dtype].size;
    int64_t header = 4 + 4 * (int64_t)ndim;
    if (count > (limit - header) / esize + 1 || count * esize > limit - header)
      rc = mt_fail("read_idx: %s declares %lld values (%lld bytes) but the file holds at most %lld bytes of data",
                   path, (long long)count, (long long)(count * esize), (long long)(limit - header));
  }
  if (rc == 0 && (rc = mt_tensor_init(r, dtype, ndim, shape)) == 0) {
    size_t nbytes = (size_t)count * mt_dtypes[dtype].size;
    rc = read_all(f, mt_data(r), nbytes, path, "data");
    if (rc == 0 && mt_dtypes[dtype].size > 1) {       /* big-endian on disk */
      unsigned char *p = (unsigned char *)mt_data(r);
      size_t es = mt_dtypes[dtype].size;
      for (size_t i = 0; i < nbytes; i += es)
        for (size_t a = 0, b = es - 1; a < b; a++, b--) { unsigned char t = p[i + a]; p[i + a] = p[i + b]; p[i + b] = t; }
    }
    if (rc == 0) {
      char extra;
      if (gzread(f, &extra, 1) > 0)
        rc = mt_fail("read_idx: %s has data after the %lld values its header declares", path, (long long)count);
    }
    if (rc) mt_tensor_release(r);
  }
  gzclose(f);
  return rc;
}

int mt_map_file(mt_tensor *r, const char *path, int dtype) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return mt_fail("map_file: cannot open %s: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) { close(fd); return mt_fail("map_file: cannot stat %s: %s", path, strerror(errno)); }
  size_t es = mt_dtypes[dtype].size, nbytes = (size_t)st.st_size;
  if (nbytes % es) {
    close(fd);
    return mt_fail("map_file: %s has %zu bytes, not a whole number of %s values", path, nbytes, mt_dtypes[dtype].name);
  }
  void *data = NULL;
  if (nbytes) {
    data = mmap(NULL, nbytes, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (data == MAP_FAILED) { close(fd); return mt_fail("map_file: cannot map %s: %s", path, strerror(errno)); }
  }
  close(fd);
  mt_storage *s = NULL;
  if (nbytes == 0 || mt_mapguard_add(data, nbytes, path) == 0) s = mt_storage_mapped(data, nbytes);
  if (!s) { if (nbytes) mt_mapguard_unmap(data, nbytes); return mt_fail("map_file: out of memory"); }
  int64_t n = (int64_t)(nbytes / es);
  r->storage = s;
  r->offset = 0;
  r->dtype = dtype;
  r->ndim = 1;
  r->shape[0] = n;
  r->stride[0] = 1;
  r->grad_meta = NULL;
  return 0;
}
