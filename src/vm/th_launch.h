/* th_launch.h: th's launcher for distributed runs (th_launch.c) */
#ifndef TH_LAUNCH_H
#define TH_LAUNCH_H
/* th --nproc N ...: replaces th with mpirun starting N ranks of th with the
   other arguments; returns 0 when argv has no --nproc (th goes on), else
   the exit status of a launch that failed */
int th_launch(int argc, char **argv);
/* In a rank started by th --nproc (TH_RANK_PREFIX set): every line written
   to stdout and stderr gets "[rank R] " before it. */
void th_rank_prefix(void);
#endif
