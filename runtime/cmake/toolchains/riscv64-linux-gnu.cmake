# Cross-compiling the dlc runtime for riscv64-linux-gnu with Debian's cross gcc
# (scripts/setup.sh installs it): cmake -S runtime -B build-riscv64 \
#   -DCMAKE_TOOLCHAIN_FILE=runtime/cmake/toolchains/riscv64-linux-gnu.cmake
# Programs built this way (dlc-run, the tests) run here under qemu-riscv64
# (qemu-user), which CMake and ctest use as the emulator.
set(CMAKE_SYSTEM_PROCESSOR riscv64)
set(DLC_CROSS_TRIPLE riscv64-linux-gnu)
set(DLC_CROSS_QEMU qemu-riscv64)
include(${CMAKE_CURRENT_LIST_DIR}/linux-cross.cmake)
