# Cross-compiling the dlc runtime for armv7a-linux-gnueabihf with Debian's cross gcc
# (scripts/setup.sh installs it): cmake -S runtime -B build-arm \
#   -DCMAKE_TOOLCHAIN_FILE=runtime/cmake/toolchains/armv7a-linux-gnueabihf.cmake
# Programs built this way (dlc-run, the tests) run here under qemu-arm
# (qemu-user), which CMake and ctest use as the emulator.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR armv7-a)
set(CMAKE_C_COMPILER arm-linux-gnueabihf-gcc CACHE FILEPATH "C compiler")
set(CMAKE_FIND_ROOT_PATH /usr/arm-linux-gnueabihf)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-arm -L /usr/arm-linux-gnueabihf
  CACHE STRING "Runs the cross-built programs here")
