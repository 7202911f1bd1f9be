#!/bin/sh
# deps.sh: installs the Debian packages moontorch builds and tests with,
# only those missing. Run by make; needs root (or sudo) when one is missing.
set -e
PKGS="${DEPS_PKGS:-lua5.4 liblua5.4-dev lua-filesystem libreadline-dev libopenblas-dev zlib1g-dev libc6-dev lua-busted pkg-config gcc make libopenmpi-dev openmpi-bin graphviz gnuplot-nox dataset-fashion-mnist}"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "deps: installing$missing"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq $missing
