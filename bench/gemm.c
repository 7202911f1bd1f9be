/* gemm.c: the hardware limit -- cblas_sgemm called directly, same sizes. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(void) {
  const char *env = getenv("BENCH_THREADS");
  openblas_set_num_threads(env ? atoi(env) : 1);
  int sizes[] = {256, 1024, 2048};
  for (int s = 0; s < 3; s++) {
    int n = sizes[s];
    float *a = aligned_alloc(64, sizeof(float) * (size_t)n * (size_t)n);
    float *b = aligned_alloc(64, sizeof(float) * (size_t)n * (size_t)n);
    float *c = aligned_alloc(64, sizeof(float) * (size_t)n * (size_t)n);
    for (long i = 0; i < (long)n * n; i++) { a[i] = 0.5f; b[i] = 0.25f; }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, a, n, b, n, 0, c, n);
    int reps = (int)(2e9 / (2.0 * n * n * n));
    if (reps < 1) reps = 1;
    double best = 1e30;
    for (int k = 0; k < 3; k++) {
      double t0 = now();
      for (int r = 0; r < reps; r++)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, a, n, b, n, 0, c, n);
      double t = (now() - t0) / reps;
      if (t < best) best = t;
    }
    printf("TIME %.9g n%d\n", best, n);
    printf("CHECK n%d %.6g %.6g\n", n, c[0], c[(long)n * n - 1]);
    free(a); free(b); free(c);
  }
  return 0;
}
