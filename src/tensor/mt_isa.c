/* mt_isa.c: which of the MT_CLONES variants this CPU runs (mt_isa.h). */
#include "mt_isa.h"

/* the loader's rule for target_clones("arch=x86-64-v3" / "arch=x86-64-v4"): the level's
   features (the ones both GCC's and Clang's __builtin_cpu_supports name; the rest of a
   level comes with them on every CPU made) */
int mt_cpu_level(void) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  const int v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi") &&
                 __builtin_cpu_supports("bmi2");
  if (v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    return 2;
  return v3;
#else
  return 0;
#endif
}

const char *mt_cpu_level_name(int level) {
  static const char *const names[3] = {"DEFAULT", "AVX2", "AVX512"};
  return names[level < 0 ? 0 : level > 2 ? 2 : level];
}

const char *mt_cpu_capability(void) {
#if defined(__x86_64__) && !defined(__AVX2__)
  return mt_cpu_level_name(mt_cpu_level());
#elif defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__AVX512VL__)
  return "AVX512";
#elif defined(__AVX2__)
  return "AVX2";
#else
  return "DEFAULT";
#endif
}
