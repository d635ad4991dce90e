#!/bin/sh
# Measures the runtime's size budget (runtime/README.md): code + data
# (text + data + bss from `size`) of the core and of each driver, built
# with -O2 and stripped, for each compiler given. The GPU drivers need a
# dynamic loader, so the bare-metal configuration has none; the Vulkan
# driver needs the Vulkan headers ($VULKAN_INCLUDE, default /usr/include),
# which are the same for every architecture.
#
# A compiler for a target without an OS (arm-none-eabi-gcc) gets the
# bare-metal configuration only; $CFLAGS reach every compile (the CPU:
# CFLAGS="-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16").
#
# usage: [CFLAGS=...] runtime/tools/measure-size.sh [CC ...]   (default: cc)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
core="allocator artifact context file model session status"
cpu="cpu_driver cpu_loader cpu_pool"
vulkan="vulkan_device vulkan_driver vulkan_spirv"
cuda="cuda_driver"

# Only the Vulkan headers, so that a cross compiler does not pick up the
# host's C library headers next to them.
vulkan_include=${VULKAN_INCLUDE:-/usr/include}
if [ -f "$vulkan_include/vulkan/vulkan.h" ]; then
  mkdir -p "$work/include"
  for d in vulkan vk_video; do
    [ -d "$vulkan_include/$d" ] && ln -s "$vulkan_include/$d" "$work/include/$d"
  done
  have_vulkan=1
else
  have_vulkan=0
fi

total() { # size-tool dir names...
  tool=$1; dir=$2; shift 2
  files=""
  for name in "$@"; do files="$files $dir/$name.o"; done
  # shellcheck disable=SC2086
  "$tool" -t $files | tail -n 1 | awk '{print $4}'
}

printf '%-24s %-16s %10s %10s %10s %10s\n' compiler configuration core \
  cpu-driver vulkan cuda
for cc in "${@:-cc}"; do
  prefix=${cc%gcc}
  [ "$prefix" = "$cc" ] && prefix=""
  size_tool=${prefix}size
  strip_tool=${prefix}strip
  command -v "$size_tool" >/dev/null || size_tool=size
  command -v "$strip_tool" >/dev/null || strip_tool=strip
  configs="hosted single-threaded bare-metal"
  case $("$cc" -dumpmachine) in *-none-* | *-elf) configs=bare-metal ;; esac
  for config in $configs; do
    case $config in
    hosted) defs="" ;;
    single-threaded) defs="-DDLC_RUNTIME_SINGLE_THREADED" ;;
    bare-metal) defs="-DDLC_RUNTIME_SINGLE_THREADED -DDLC_RUNTIME_NO_DLOPEN -DDLC_RUNTIME_NO_MMAP" ;;
    esac
    dir=$work/$(echo "$cc-$config" | tr '/ ' '__')
    mkdir -p "$dir"
    gpu=""
    if [ "$config" != bare-metal ]; then
      gpu="$here/src/drivers/cuda/*.c"
      [ "$have_vulkan" = 1 ] && gpu="$gpu $here/src/drivers/vulkan/*.c"
    fi
    # shellcheck disable=SC2086
    (cd "$dir" && "$cc" -std=c99 -O2 ${CFLAGS:-} $defs -I"$here/include" -I"$work/include" \
      -c "$here"/src/*.c "$here"/src/drivers/cpu/*.c $gpu)
    for o in "$dir"/*.o; do "$strip_tool" --strip-unneeded "$o"; done
    vk_size=-
    cu_size=-
    [ -f "$dir/cuda_driver.o" ] && cu_size=$(total "$size_tool" "$dir" $cuda)
    # shellcheck disable=SC2086
    [ -f "$dir/vulkan_driver.o" ] && vk_size=$(total "$size_tool" "$dir" $vulkan)
    # shellcheck disable=SC2086
    printf '%-24s %-16s %10s %10s %10s %10s\n' "$cc" "$config" \
      "$(total "$size_tool" "$dir" $core)" "$(total "$size_tool" "$dir" $cpu)" \
      "$vk_size" "$cu_size"
  done
done
