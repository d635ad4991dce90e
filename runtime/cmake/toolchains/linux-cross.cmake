# What the toolchain files here share: a Linux target, Debian's cross gcc
# for DLC_CROSS_TRIPLE, its sysroot, and qemu-user (DLC_CROSS_QEMU) as the
# emulator that runs what they build. Set those two and
# CMAKE_SYSTEM_PROCESSOR, then include this file.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_C_COMPILER ${DLC_CROSS_TRIPLE}-gcc CACHE FILEPATH "C compiler")
set(CMAKE_FIND_ROOT_PATH /usr/${DLC_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_CROSSCOMPILING_EMULATOR ${DLC_CROSS_QEMU} -L /usr/${DLC_CROSS_TRIPLE}
  CACHE STRING "Runs the cross-built programs here")
