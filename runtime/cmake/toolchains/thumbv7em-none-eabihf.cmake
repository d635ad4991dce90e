# Cross-compiling the dlc runtime for a Cortex-M4 with its FPU (ARMv7E-M,
# hard float, no operating system) with Debian's gcc-arm-none-eabi and
# newlib, for models compiled with --target=cpu:thumbv7em-none-eabihf:
#   cmake -S runtime -B build-m4 \
#     -DCMAKE_TOOLCHAIN_FILE=runtime/cmake/toolchains/thumbv7em-none-eabihf.cmake
# Without an OS the runtime builds single-threaded, without dlopen and
# mmap, and without dlc-run and the tests (runtime/CMakeLists.txt); the
# kernels are linked into the firmware (examples/bare_metal). For a
# Cortex-M7 with a double-precision FPU, set DLC_CORTEX_M_FLAGS to
# "-mcpu=cortex-m7 -mfpu=fpv5-d16" (and compile with --cpu=cortex-m7).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc CACHE FILEPATH "C compiler")
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc CACHE FILEPATH "Assembler")
set(DLC_CORTEX_M_FLAGS "-mcpu=cortex-m4 -mfpu=fpv4-sp-d16" CACHE STRING
  "The Cortex-M CPU and FPU")
set(CMAKE_C_FLAGS_INIT "${DLC_CORTEX_M_FLAGS} -mthumb -mfloat-abi=hard")
set(CMAKE_ASM_FLAGS_INIT "${DLC_CORTEX_M_FLAGS} -mthumb -mfloat-abi=hard")
# No OS to link a test program for: CMake's compiler checks build a library.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
