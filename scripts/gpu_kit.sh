#!/bin/bash
# scripts/gpu_kit.sh: packs what `make gpu-check` needs on a bare GPU machine that has the
# CUDA driver and toolkit but none of moontorch's Debian dependencies, and runs it there.
#
#   bash scripts/gpu_kit.sh pack [DIR]   (here) builds moontorch for a baseline x86-64-v3 CPU
#                                         into build-gpu/ and writes DIR (default .gpukit/):
#                                         kit.tar.xz (lua5.4 and its libraries, busted and its
#                                         modules, OpenBLAS, readline, FashionMNIST) and
#                                         build.tar.xz
#   bash scripts/gpu_kit.sh run [DIR]    (there, in the repository root) unpacks both under
#                                         /tmp/kit and runs spec/cuda_spec.lua and
#                                         spec/distributed_nccl_spec.lua with busted;
#                                         BENCH=1 also runs the GPU benchmarks against the
#                                         machine's PyTorch
#
# DIR must be a folder git ignores (the pack step adds it to .git/info/exclude), so that it
# travels only when asked for.
set -euo pipefail
cmd=${1:-}
dir=${2:-.gpukit}
case "$cmd" in
pack)
  grep -qxF "/$dir/" .git/info/exclude 2> /dev/null || echo "/$dir/" >> .git/info/exclude
  mkdir -p "$dir"
  make -j"$(nproc)" BUILD=build-gpu OPT='-O3 -march=x86-64-v3' MPI=0 all > "$dir/build.log" 2>&1 ||
    { tail -30 "$dir/build.log"; exit 1; }
  tar cJf "$dir/build.tar.xz" build-gpu/th build-gpu/libmoontorch.so build-gpu/torch build-gpu/distributed
  lib=/usr/lib/x86_64-linux-gnu
  files=(/usr/bin/lua5.4 "$lib"/liblua5.4.so.0* "$lib"/libopenblas.so.0 "$lib"/libgfortran.so.5*
         "$lib"/libquadmath.so.0* "$lib"/libreadline.so.8* /usr/share/lua/5.4 /usr/lib/x86_64-linux-gnu/lua/5.4
         /usr/bin/busted /usr/share/datasets/fashion-mnist)
  # symbolic links followed (busted's modules link into ../5.1, OpenBLAS through alternatives)
  tar chJf "$dir/kit.tar.xz" "${files[@]}" 2> /dev/null
  ls -la "$dir"
  ;;
run)
  k=/tmp/kit
  mkdir -p "$k"
  tar xJf "$dir/kit.tar.xz" -C "$k"
  tar xJf "$dir/build.tar.xz"
  rm -rf build
  ln -s build-gpu build
  # the FashionMNIST examples' data where Debian's dataset-fashion-mnist puts it
  mkdir -p /usr/share/datasets && cp -r "$k/usr/share/datasets/fashion-mnist" /usr/share/datasets/
  export LD_LIBRARY_PATH="$k/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  # cuDNN where the toolkit lacks it: the one PyTorch's wheels bring
  for d in /usr/local/cuda/lib64 $(python3 -c 'import nvidia, os; print(" ".join(os.path.join(p, s, "lib") for p in nvidia.__path__ for s in ("cudnn", "cublas", "cuda_runtime", "nccl")))' 2> /dev/null || true); do
    [ -d "$d" ] && LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$d"
  done
  export LUA_PATH="./lib/?.lua;./lib/?/init.lua;$k/usr/share/lua/5.4/?.lua;$k/usr/share/lua/5.4/?/init.lua;;"
  export LUA_CPATH="./build/?.so;$k/usr/lib/x86_64-linux-gnu/lua/5.4/?.so;;"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
  ldd build/torch/cuda.so | grep -E 'not found|cudnn|cublas' || true
  set +e
  "$k/usr/bin/lua5.4" "$k/usr/bin/busted" --lpath='./lib/?.lua;./lib/?/init.lua' --cpath='./build/?.so' \
    -o TAP spec/cuda_spec.lua spec/distributed_nccl_spec.lua > /tmp/gpu-check.tap 2>&1
  status=$?
  set -e
  grep -v '^ok ' /tmp/gpu-check.tap | head -150
  passed=$(grep -c '^ok ' /tmp/gpu-check.tap || true)
  failed=$(grep -c '^not ok ' /tmp/gpu-check.tap || true)
  [ "$status" -ne 0 ] && [ "$failed" -eq 0 ] && failed=1
  echo "gpu-check: $passed passed, $failed failed"
  if [ "${BENCH:-0}" = 1 ]; then
    for b in ${BENCHES:-cuda_ops cuda_train}; do
      TH=./build/th RUNS=${RUNS:-3} THREADS=1 python3 bench/run.py "$b" || true
    done
  fi
  ;;
*)
  echo "usage: bash scripts/gpu_kit.sh pack|run [DIR]" >&2
  exit 2
  ;;
esac
