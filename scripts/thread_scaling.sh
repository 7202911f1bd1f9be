#!/usr/bin/env bash
# thread_scaling.sh: moontorch's own time for every bench pair (each case of
# each bench/*.lua) at 1 and at 2 threads, the median of RUNS runs, and the
# ratio 2-thread / 1-thread. More threads must never be slower: a case whose
# ratio passes SLACK (default 1.05, the machine's run-to-run noise) is marked
# SLOWER and the script exits 1. Not part of `make test` (timings never are).
# LOAD=n runs every measurement beside n busy loops in other processes (a
# shared or loaded machine): 2 threads must still not be slower than 1.
#   scripts/thread_scaling.sh [bench names...]     RUNS=5 SLACK=1.05 LOAD=0
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
SLACK=${SLACK:-1.05}
LOAD=${LOAD:-0}
TH=${TH:-./build/th}   # TH=path: another build
busy=()
stop_busy() { [ ${#busy[@]} -eq 0 ] || kill "${busy[@]}" 2> /dev/null || true; }
trap stop_busy EXIT
for ((i = 0; i < LOAD; i++)); do
  sh -c 'while :; do :; done' & busy+=($!)
done
[ "$LOAD" -eq 0 ] || echo "beside $LOAD busy loop(s)"
[ -x "$TH" ] || make -s all
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for f in bench/*.lua; do names+=("$(basename "$f" .lua)"); done
fi

# One run of bench $1 at $2 threads: "case seconds" lines.
run_once() {
  local name=$1 threads=$2 file=bench/$1.lua
  if head -n 1 "$file" | grep -q -- '-- whole-process'; then
    local start end
    start=$(date +%s.%N)
    env -u OPENBLAS_CORETYPE OMP_NUM_THREADS="$threads" BENCH_THREADS="$threads" "$TH" "$file" > /dev/null
    end=$(date +%s.%N)
    awk -v s="$start" -v e="$end" 'BEGIN { print "main", e - s }'
  else
    env -u OPENBLAS_CORETYPE OMP_NUM_THREADS="$threads" BENCH_THREADS="$threads" "$TH" "$file" |
      awk '$1 == "TIME" { print ($3 == "" ? "main" : $3), $2 }'
  fi
}

# Median per case over RUNS runs of bench $1 at $2 threads.
medians() {
  for _ in $(seq "$RUNS"); do run_once "$1" "$2"; done |
    sort -k1,1 -k2,2g |
    awk '{ v[$1] = v[$1] " " $2; n[$1]++ }
         END { for (c in v) { split(substr(v[c], 2), a, " "); m = int((n[c] + 1) / 2); print c, a[m] } }'
}

status=0
printf '%-34s %12s %12s %8s\n' 'pair' '1 thread' '2 threads' '2t/1t'
for name in "${names[@]}"; do
  declare -A one=()
  while read -r c t; do one[$c]=$t; done < <(medians "$name" 1)
  while read -r c t; do
    label="$name $c"
    [ "$c" = main ] && label=$name
    awk -v l="$label" -v a="${one[$c]}" -v b="$t" -v slack="$SLACK" 'BEGIN {
      r = b / a; mark = r > slack ? "  SLOWER" : ""
      printf "%-34s %10.4f ms %10.4f ms %8.3f%s\n", l, a * 1000, b * 1000, r, mark
      exit(r > slack) }' || status=1
  done < <(medians "$name" 2 | sort)
  unset one
done
exit $status
