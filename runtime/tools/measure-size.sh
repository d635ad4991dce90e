#!/bin/sh
# Measures the runtime's size budget (runtime/README.md): code + data
# (text + data + bss from `size`) of the core and of the CPU driver, built
# with -O2 and stripped, for each compiler given.
#
# usage: runtime/tools/measure-size.sh [CC ...]   (default: cc)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
core="allocator artifact context file model session status"
cpu="cpu_driver cpu_loader cpu_pool"

total() { # prefix dir names...
  tool=$1; dir=$2; shift 2
  files=""
  for name in "$@"; do files="$files $dir/$name.o"; done
  # shellcheck disable=SC2086
  "$tool" -t $files | tail -n 1 | awk '{print $4}'
}

printf '%-24s %-16s %10s %10s\n' compiler configuration core cpu-driver
for cc in "${@:-cc}"; do
  prefix=${cc%gcc}
  [ "$prefix" = "$cc" ] && prefix=""
  size_tool=${prefix}size
  strip_tool=${prefix}strip
  command -v "$size_tool" >/dev/null || size_tool=size
  command -v "$strip_tool" >/dev/null || strip_tool=strip
  for config in hosted single-threaded bare-metal; do
    case $config in
    hosted) defs="" ;;
    single-threaded) defs="-DDLC_RUNTIME_SINGLE_THREADED" ;;
    bare-metal) defs="-DDLC_RUNTIME_SINGLE_THREADED -DDLC_RUNTIME_NO_DLOPEN -DDLC_RUNTIME_NO_MMAP" ;;
    esac
    dir=$work/$(echo "$cc-$config" | tr '/ ' '__')
    mkdir -p "$dir"
    # shellcheck disable=SC2086
    (cd "$dir" && "$cc" -std=c99 -O2 $defs -I"$here/include" -c \
      "$here"/src/*.c "$here"/src/drivers/cpu/*.c)
    for o in "$dir"/*.o; do "$strip_tool" --strip-unneeded "$o"; done
    # shellcheck disable=SC2086
    printf '%-24s %-16s %10s %10s\n' "$cc" "$config" \
      "$(total "$size_tool" "$dir" $core)" "$(total "$size_tool" "$dir" $cpu)"
  done
done
