# Cross-compiling the dlc runtime for armv7a-linux-gnueabihf with Debian's cross gcc
# (scripts/setup.sh installs it): cmake -S runtime -B build-arm \
#   -DCMAKE_TOOLCHAIN_FILE=runtime/cmake/toolchains/armv7a-linux-gnueabihf.cmake
# Programs built this way (dlc-run, the tests) run here under qemu-arm
# (qemu-user), which CMake and ctest use as the emulator.
set(CMAKE_SYSTEM_PROCESSOR armv7-a)
set(DLC_CROSS_TRIPLE arm-linux-gnueabihf)
set(DLC_CROSS_QEMU qemu-arm)
include(${CMAKE_CURRENT_LIST_DIR}/linux-cross.cmake)
