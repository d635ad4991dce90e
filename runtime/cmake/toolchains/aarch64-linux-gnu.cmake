# Cross-compiling the dlc runtime for aarch64-linux-gnu with Debian's cross gcc
# (scripts/setup.sh installs it): cmake -S runtime -B build-aarch64 \
#   -DCMAKE_TOOLCHAIN_FILE=runtime/cmake/toolchains/aarch64-linux-gnu.cmake
# Programs built this way (dlc-run, the tests) run here under qemu-aarch64
# (qemu-user), which CMake and ctest use as the emulator.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc CACHE FILEPATH "C compiler")
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu
  CACHE STRING "Runs the cross-built programs here")
