/* mt_isa.h: one build for every x86-64 CPU. The build targets baseline x86-64 (make
   ARCH=native for the build machine's own ISA); the hot loops carry MT_CLONES and are
   compiled three times -- baseline, AVX2 + FMA (x86-64-v3) and AVX-512 (x86-64-v4) -- the
   loader picking one per function from cpuid at start-up (GCC's and Clang's target_clones,
   glibc's ifunc). mt_sgemm.c and mt_convert.c pick their own kernels the same way. */
#ifndef MT_ISA_H
#define MT_ISA_H

#if defined(__x86_64__) && !defined(__AVX2__) && (defined(__GNUC__) || defined(__clang__)) && !defined(MT_NO_CLONES)
#define MT_CLONES __attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))
#define MT_CLONING 1   /* code inlined into clones: plain loops vectorise at each clone's width */
#else
#define MT_CLONING 0
#define MT_CLONES   /* built for one ISA already (ARCH=native or another target): no clones */
#endif

/* the ISA the MT_CLONES loops run on here, as PyTorch names it: "AVX512" (x86-64-v4),
   "AVX2" (x86-64-v3) or "DEFAULT"; a build for one ISA names that one */
const char *mt_cpu_capability(void);

/* this CPU's level from cpuid, whatever the build targets: 2 for x86-64-v4 (AVX-512
   F/BW/CD/DQ/VL), 1 for x86-64-v3 (AVX2, FMA, BMI1/2), else 0 (and 0 off x86-64); for
   the kernels built once per level and picked at run time (mt_conv_direct.h) */
int mt_cpu_level(void);

/* a level's name as PyTorch writes it: "DEFAULT", "AVX2" or "AVX512" (level 0, 1, 2) */
const char *mt_cpu_level_name(int level);

#endif
