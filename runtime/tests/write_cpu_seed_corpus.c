/*===- write_cpu_seed_corpus.c - patch sets to start fuzz_cpu_loader ------===*
 *
 * Writes DIR/<name>.patch, inputs in fuzz_cpu_artifact.h's format: no patch
 * at all, the thread and profiling options, and single patches aimed at
 * the launch table, the bindings, the IO table, a tensor, the model record,
 * the header and the section table, some accepted and some refused, plus
 * one into CODE that the harness must skip.
 *===----------------------------------------------------------------------===*/

#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "artifact_builder.h"
#include "fuzz_cpu_artifact.h"

typedef struct dlc_seed_t {
  uint8_t bytes[256];
  size_t size;
} dlc_seed_t;

static void dlc_seed_start(dlc_seed_t *seed, uint8_t options) {
  seed->bytes[0] = options;
  seed->size = 1;
}

/* One record writing `size` (1 to 8) bytes of `value` at `offset`. */
static void dlc_seed_patch(dlc_seed_t *seed, uint64_t offset, uint64_t value,
                           size_t size) {
  size_t i;
  seed->bytes[seed->size++] = (uint8_t)offset;
  seed->bytes[seed->size++] = (uint8_t)(offset >> 8);
  seed->bytes[seed->size++] = (uint8_t)(size - 1);
  for (i = 0; i < size; ++i)
    seed->bytes[seed->size++] = (uint8_t)(value >> (8 * i));
}

static int dlc_seed_write(const char *dir, const char *name,
                          const dlc_seed_t *seed) {
  char path[4096];
  int ok;
  snprintf(path, sizeof(path), "%s/%s.patch", dir, name);
  ok = dlc_ab_write_file(path, seed->bytes, seed->size);
  if (!ok)
    fprintf(stderr, "cannot write %s\n", path);
  return ok;
}

/* The offset of section `kind`'s contents, and of its table entry. */
static uint64_t dlc_seed_section(const dlc_fuzz_cpu_t *fuzz, uint32_t kind) {
  return dlc_ab_section(fuzz->base, kind)->offset;
}

static uint64_t dlc_seed_entry(const dlc_fuzz_cpu_t *fuzz, uint32_t kind) {
  return (uint64_t)((uint8_t *)dlc_ab_section(fuzz->base, kind) - fuzz->base);
}

int main(int argc, char **argv) {
  dlc_fuzz_cpu_t fuzz;
  dlc_seed_t seed;
  uint64_t launches, bindings, io, tensors, model, code;
  int ok = 1;

  if (argc != 2) {
    fprintf(stderr, "usage: write_cpu_seed_corpus DIR\n");
    return 2;
  }
  if (mkdir(argv[1], 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "cannot create %s: %s\n", argv[1], strerror(errno));
    return 1;
  }
  if (!dlc_fuzz_cpu_build(&fuzz))
    return 1;
  launches = dlc_seed_section(&fuzz, DLCX_SECTION_LAUNCHES);
  bindings = dlc_seed_section(&fuzz, DLCX_SECTION_BINDINGS);
  io = dlc_seed_section(&fuzz, DLCX_SECTION_IO);
  tensors = dlc_seed_section(&fuzz, DLCX_SECTION_TENSORS);
  model = dlc_seed_section(&fuzz, DLCX_SECTION_MODEL);
  code = dlc_seed_section(&fuzz, DLCX_SECTION_CODE);

  seed.size = 0;
  ok &= dlc_seed_write(argv[1], "empty", &seed);
  dlc_seed_start(&seed, 1 | 4); /* 2 threads, profiling */
  ok &= dlc_seed_write(argv[1], "threads2_profiling", &seed);
  dlc_seed_start(&seed, 2); /* 3 threads */
  dlc_seed_patch(&seed, code + 64, 0xcc, 1);
  ok &= dlc_seed_write(argv[1], "threads3_code_skipped", &seed);

  /* Launch 0 (add on 24x1x1) runs scale: the grid no longer matches. */
  dlc_seed_start(&seed, 0);
  dlc_seed_patch(&seed, launches + offsetof(dlcx_launch_t, kernel), 1, 4);
  ok &= dlc_seed_write(argv[1], "launch_kernel", &seed);
  /* Launch 1 (scale on 4x3x2) on add's grid. */
  dlc_seed_start(&seed, 0);
  dlc_seed_patch(
      &seed, launches + sizeof(dlcx_launch_t) + offsetof(dlcx_launch_t, grid),
      24, 4);
  ok &= dlc_seed_write(argv[1], "launch_grid", &seed);
  /* Launch 2 binds launch 0's buffers: valid, another result. */
  dlc_seed_start(&seed, 1);
  dlc_seed_patch(&seed,
                 launches + 2 * sizeof(dlcx_launch_t) +
                     offsetof(dlcx_launch_t, binding_begin),
                 0, 4);
  ok &= dlc_seed_write(argv[1], "launch_binding_begin", &seed);
  /* Launch 3's binding_count and its kernel's disagree. */
  dlc_seed_start(&seed, 0);
  dlc_seed_patch(&seed,
                 launches + 3 * sizeof(dlcx_launch_t) +
                     offsetof(dlcx_launch_t, binding_count),
                 3, 4);
  ok &= dlc_seed_write(argv[1], "launch_binding_count", &seed);
  /* Launch 2 adds x to out instead of the bias (tensor 0, same size). */
  dlc_seed_start(&seed, 0);
  dlc_seed_patch(&seed, bindings + 7 * 4, 0, 4);
  ok &= dlc_seed_write(argv[1], "binding_tensor", &seed);
  /* Launch 1's scale is the 96-byte bias: KERNEL_ARGS says 4. */
  dlc_seed_start(&seed, 0);
  dlc_seed_patch(&seed, bindings + 4 * 4, 7, 4);
  ok &= dlc_seed_write(argv[1], "binding_size", &seed);
  /* One input and three outputs, the second output the intermediate sum. */
  dlc_seed_start(&seed, 2);
  dlc_seed_patch(&seed, model + offsetof(dlcx_model_t, input_count), 1, 4);
  dlc_seed_patch(&seed, model + offsetof(dlcx_model_t, output_count), 3, 4);
  dlc_seed_patch(&seed, io + 2 * 4, 2, 4);
  ok &= dlc_seed_write(argv[1], "io_counts", &seed);
  /* sum over x: the arena tensors alias. */
  dlc_seed_start(&seed, 1);
  dlc_seed_patch(&seed,
                 tensors + 2 * sizeof(dlcx_tensor_t) +
                     offsetof(dlcx_tensor_t, offset),
                 0, 8);
  ok &= dlc_seed_write(argv[1], "tensor_alias", &seed);
  /* An arena too small for its tensors, and one over the harness's cap. */
  dlc_seed_start(&seed, 0);
  dlc_seed_patch(&seed, model + offsetof(dlcx_model_t, arena_size), 128, 8);
  ok &= dlc_seed_write(argv[1], "arena_small", &seed);
  dlc_seed_start(&seed, 0);
  dlc_seed_patch(&seed, model + offsetof(dlcx_model_t, arena_size),
                 (uint64_t)1 << 40, 8);
  ok &= dlc_seed_write(argv[1], "arena_large", &seed);
  /* Scratch: more per thread, and over the session's cap. */
  dlc_seed_start(&seed, 1);
  dlc_seed_patch(&seed, model + offsetof(dlcx_model_t, cpu_scratch_size), 4096,
                 4);
  ok &= dlc_seed_write(argv[1], "scratch", &seed);
  dlc_seed_start(&seed, 0);
  dlc_seed_patch(&seed, model + offsetof(dlcx_model_t, cpu_scratch_size),
                 (uint64_t)1 << 24, 4);
  ok &= dlc_seed_write(argv[1], "scratch_cap", &seed);
  /* Header: version 1.1 (which has no KERNEL_LIMITS), a Vulkan target, an
   * instruction-set extension, and a shorter section table. */
  dlc_seed_start(&seed, 0);
  dlc_seed_patch(&seed, offsetof(dlcx_header_t, version_minor), 1, 2);
  ok &= dlc_seed_write(argv[1], "version", &seed);
  dlc_seed_start(&seed, 0);
  dlc_seed_patch(&seed, offsetof(dlcx_header_t, target), DLCX_TARGET_VULKAN, 4);
  ok &= dlc_seed_write(argv[1], "target", &seed);
  dlc_seed_start(&seed, 0);
  dlc_seed_patch(&seed, offsetof(dlcx_header_t, target_features) + 4, 1, 1);
  ok &= dlc_seed_write(argv[1], "extension", &seed);
  dlc_seed_start(&seed, 0);
  dlc_seed_patch(&seed, offsetof(dlcx_header_t, section_count), 7, 4);
  ok &= dlc_seed_write(argv[1], "section_count", &seed);
  /* The LAUNCHES entry one launch shorter. */
  dlc_seed_start(&seed, 0);
  dlc_seed_patch(&seed,
                 dlc_seed_entry(&fuzz, DLCX_SECTION_LAUNCHES) +
                     offsetof(dlcx_section_t, size),
                 3 * sizeof(dlcx_launch_t), 8);
  ok &= dlc_seed_write(argv[1], "launches_size", &seed);
  dlc_fuzz_cpu_free(&fuzz);
  return ok ? 0 : 1;
}
