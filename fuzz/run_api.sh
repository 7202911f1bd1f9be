#!/bin/sh
# fuzz/run_api.sh TH SECONDS [SEED]: runs the API fuzzer (fuzz/api.lua) under TH, a
# sanitizer build's th, and turns a crash, a sanitizer report or a hung call into a failure.
set -u
th=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
seconds=$2
seed=${3:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
root=$(cd "$(dirname "$0")/.." && pwd)
# A call that runs this long has hung (the slowest seen under ASan take a few seconds).
HANG_SECONDS=${FUZZ_HANG_SECONDS:-60}

# The fuzzer runs in a directory of its own: the pool's strings name files that
# torch.save and the other writers create.
work=$(mktemp -d "${TMPDIR:-/tmp}/moontorch-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
log=$work/last-call.lua

# Leak checks off (the fuzzer keeps its pool alive); handle_abort: the hang
# watchdog's SIGABRT prints a stack. An allocation over 1 GB, or one while the
# process holds over 4 GB, fails as out of memory (the engine must turn that into a
# Lua error) rather than take the machine's memory; ASan's warning on each is dropped.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:handle_abort=1:allocator_may_return_null=1:max_allocation_size_mb=1024:soft_rss_limit_mb=4096
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:abort_on_error=1
echo "fuzz: API fuzzer, seed $seed, $seconds s (replay: make fuzz-api SEED=$seed SECONDS=$seconds)"

mkfifo "$work/stderr"
grep -v 'WARNING: AddressSanitizer failed to allocate' < "$work/stderr" >&2 &
filter=$!
(cd "$work" && FUZZ_SEED=$seed FUZZ_SECONDS=$seconds FUZZ_LOG=$log \
  exec "$th" "$root/fuzz/api.lua" > "$work/stdout.txt" 2> "$work/stderr") &
pid=$!

# The watchdog: the log is rewritten before every call, so an old log is a hung call.
hung=0
while kill -0 $pid 2> /dev/null; do
  sleep 2
  if [ -f "$log" ] && [ $(( $(date +%s) - $(stat -c %Y "$log") )) -gt "$HANG_SECONDS" ]; then
    echo "fuzz: the call below ran over $HANG_SECONDS s: a hang" >&2
    hung=1
    kill -ABRT $pid
    break
  fi
done
wait $pid
status=$?
wait $filter
[ $status -eq 0 ] && [ $hung -eq 0 ] && exit 0

kept=$(dirname "$th")/fuzz-failure-$seed.lua
sed 's/ *$//' "$log" > "$kept"
call=$(sed -n '1s/.*call \([0-9]*\):.*/\1/p' "$kept")
echo "fuzz: FAILED (exit status $status) in this call, kept as $kept:" >&2
sed -n '/^torch.manual_seed/,$p' "$kept" >&2
echo "fuzz: reproduce it alone: ASAN_OPTIONS=$ASAN_OPTIONS UBSAN_OPTIONS=$UBSAN_OPTIONS $1 $kept" >&2
echo "fuzz: replay the run up to it: make fuzz-api SEED=$seed CALLS=$call" >&2
exit 1
