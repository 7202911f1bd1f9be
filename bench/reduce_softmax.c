/* reduce_softmax.c: the memory-bandwidth limit of the reductions -- plain C
   loops reading the same 4096x4096 floats once: along dim 2 a vectorised
   sum or max over each row (rows go to threads in small blocks, so that a
   thread the machine delays holds no others up), along dim 1 each thread's
   columns accumulated row after row over their whole width, sums eight rows
   a step (eight streams in flight). No softmax: a plain C softmax (scalar
   expf) is no limit for it. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <omp.h>

#define N 4096
/* 256-bit vectors: on AVX-512 (Zen 4) these loops read DRAM 10-20% faster
   with them than with 512-bit ones; the column max is no faster, and keeps
   the default. */
#define STREAM __attribute__((target("prefer-vector-width=256")))

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* out[j] = sum over rows i of x[i][j] (times scale) */
STREAM static void sum_dim1(const float *x, float *out, float scale) {
#pragma omp parallel
  {
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    long j0 = (long)N * t / nt, j1 = (long)N * (t + 1) / nt;
    for (long j = j0; j < j1; j++) out[j] = 0;
    for (long i = 0; i < N; i += 8) {
      const float *r = x + i * N;
#pragma omp simd
      for (long j = j0; j < j1; j++)
        out[j] += r[j] + r[j + N] + r[j + 2 * N] + r[j + 3 * N] + r[j + 4 * N] + r[j + 5 * N] +
                  r[j + 6 * N] + r[j + 7 * N];
    }
    for (long j = j0; j < j1; j++) out[j] *= scale;
  }
}

/* out[i] = sum over columns j of x[i][j] (times scale) */
STREAM static void sum_dim2(const float *x, float *out, float scale) {
#pragma omp parallel for schedule(dynamic, 64)
  for (long i = 0; i < N; i++) {
    const float *row = x + i * N;
    float s = 0;
#pragma omp simd reduction(+:s)
    for (long j = 0; j < N; j++) s += row[j];
    out[i] = s * scale;
  }
}

/* the largest of each column and the first row holding it (1-based) */
static void max_dim1(const float *x, float *out, long *idx) {
#pragma omp parallel
  {
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    long j0 = (long)N * t / nt, j1 = (long)N * (t + 1) / nt;
    for (long j = j0; j < j1; j++) { out[j] = x[j]; idx[j] = 0; }
    for (long i = 1; i < N; i++) {
      const float *row = x + i * N;
#pragma omp simd
      for (long j = j0; j < j1; j++) {
        int take = row[j] > out[j];
        out[j] = take ? row[j] : out[j];
        idx[j] = take ? i : idx[j];
      }
    }
    for (long j = j0; j < j1; j++) idx[j]++;
  }
}

/* the largest of each row and the first column holding it (1-based) */
STREAM static void max_dim2(const float *x, float *out, long *idx) {
#pragma omp parallel for schedule(dynamic, 64)
  for (long i = 0; i < N; i++) {
    const float *row = x + i * N;
    float m = row[0];
#pragma omp simd reduction(max:m)
    for (long j = 0; j < N; j++) m = row[j] > m ? row[j] : m;
    long j = 0;
    while (row[j] != m) j++;
    out[i] = m;
    idx[i] = j + 1;
  }
}

int main(void) {
  const char *env = getenv("BENCH_THREADS");
  omp_set_num_threads(env ? atoi(env) : 1);
  float *x = aligned_alloc(64, sizeof(float) * N * N), *out = aligned_alloc(64, sizeof(float) * N);
  long *idx = aligned_alloc(64, sizeof(long) * N);
  for (long i = 0; i < (long)N * N; i++) x[i] = (float)(i % 97) * 0.01f;
  const char *names[] = {"sum_dim1", "sum_dim2", "mean_dim1", "mean_dim2", "max_dim1", "max_dim2"};
  for (int c = 0; c < 6; c++) {
    double best = 1e30;
    for (int k = 0; k < 6; k++) {
      double t0 = now();
      switch (c) {
      case 0: sum_dim1(x, out, 1); break;
      case 1: sum_dim2(x, out, 1); break;
      case 2: sum_dim1(x, out, 1.0f / N); break;
      case 3: sum_dim2(x, out, 1.0f / N); break;
      case 4: max_dim1(x, out, idx); break;
      default: max_dim2(x, out, idx); break;
      }
      double t = now() - t0;
      if (k > 0 && t < best) best = t;
    }
    printf("TIME %.9g %s\n", best, names[c]);
    if (c < 4) printf("CHECK %s %.6g %.6g\n", names[c], out[0], out[N - 1]);
    else printf("CHECK %s %.6g %.6g %ld %ld\n", names[c], out[0], out[N - 1], idx[0], idx[N - 1]);
  }
  return 0;
}
