/*===- artifact_format.h - the .dlcx artifact schema ------------*- C -*-===*
 *
 * The one description of the compiled-model file shared by the compiler
 * (which writes it) and the runtime (which validates it once at load and then
 * uses it in place). Plain C99, no dependencies, little-endian on disk.
 *
 * Layout: a 64-byte header at offset 0, a section table, then the sections.
 * Every section starts at a multiple of DLCX_ALIGNMENT; the CONSTANTS section
 * holds the weights, each constant tensor at a DLCX_ALIGNMENT-aligned offset,
 * so a memory-mapped artifact can hand weights to kernels without copying.
 * docs/artifact-format.md explains every field; runtime/README.md lists the
 * validation rules. Writers must zero every reserved field, every dim above
 * a tensor's rank, and target_sm for targets other than CUDA.
 *
 * Compatibility: a reader accepts an artifact whose version_major equals its
 * own DLCX_VERSION_MAJOR and whose version_minor is not newer than its own.
 *===----------------------------------------------------------------------===*/

#ifndef DLC_ARTIFACT_FORMAT_H
#define DLC_ARTIFACT_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DLCX_MAGIC 0x58434c44u /* "DLCX" read as a little-endian u32 */
#define DLCX_VERSION_MAJOR 1u
#define DLCX_VERSION_MINOR 5u
#define DLCX_ALIGNMENT 64u
/* Lanes that share a row reduction in kernels of the VK_SUBGROUP feature
 * (their xor shuffles must stay inside one subgroup): devices need
 * subgroups of at least this many invocations. */
#define DLCX_MIN_SUBGROUP_SIZE 8u
#define DLCX_MAX_RANK 8u
#define DLCX_NO_INDEX 0xffffffffu
/* Bytes [0, DLCX_CHECKSUM_START) are not covered by the checksum: the magic,
 * the version and the checksum itself. Everything after is. */
#define DLCX_CHECKSUM_START 16u

typedef enum dlcx_target_e {
  DLCX_TARGET_CPU = 1,
  DLCX_TARGET_VULKAN = 2,
  DLCX_TARGET_CUDA = 3,
} dlcx_target_t;

/* Target feature bits (dlcx_header_t.target_features). A runtime driver
 * refuses an artifact that needs a feature its device lacks. */
typedef enum dlcx_feature_e {
  /* CPU: the instruction-set architecture of the embedded object code. */
  DLCX_FEATURE_CPU_X86_64 = 1u << 0,
  DLCX_FEATURE_CPU_AARCH64 = 1u << 1,
  DLCX_FEATURE_CPU_ARMV7 = 1u << 2,
  DLCX_FEATURE_CPU_RISCV64 = 1u << 3,
  /* ARMv7E-M (Cortex-M4/M7: Thumb-2, DSP, a single-precision FPU). */
  DLCX_FEATURE_CPU_ARMV7EM = 1u << 4,
  /* Vulkan: capabilities beyond the Vulkan 1.1 / SPIR-V 1.3 baseline. */
  DLCX_FEATURE_VK_FLOAT16 = 1u << 8,
  DLCX_FEATURE_VK_INT8_STORAGE = 1u << 9,
  DLCX_FEATURE_VK_INT8_DOT = 1u << 10,
  DLCX_FEATURE_VK_SUBGROUP = 1u << 11,
  DLCX_FEATURE_VK_INT64 = 1u << 12,
  DLCX_FEATURE_VK_FLOAT64 = 1u << 13,
  /* CUDA: a CUBIN section carries the kernels assembled for target_sm. */
  DLCX_FEATURE_CUDA_CUBIN = 1u << 16,
} dlcx_feature_t;

/* CPU: instruction-set extensions the code may use (bits 32 to 63 of
 * target_features; the compiler sets those its target has, the CPU driver
 * refuses the artifact on a CPU that lacks one, instead of letting the
 * first kernel fault on an illegal instruction).
 * X(NAME, bit, ISA bit, name): the name is LLVM's feature name, which is
 * also what GCC's and Clang's __builtin_cpu_supports call it on x86. */
#define DLCX_CPU_EXTENSIONS(X)                                                 \
  DLCX_CPU_EXTENSIONS_X86(X) DLCX_CPU_EXTENSIONS_AARCH64(X)
#define DLCX_CPU_EXTENSIONS_X86(X)                                             \
  X(X86_AVX, 32, DLCX_FEATURE_CPU_X86_64, "avx")                               \
  X(X86_AVX2, 33, DLCX_FEATURE_CPU_X86_64, "avx2")                             \
  X(X86_FMA, 34, DLCX_FEATURE_CPU_X86_64, "fma")                               \
  X(X86_F16C, 35, DLCX_FEATURE_CPU_X86_64, "f16c")                             \
  X(X86_BMI, 36, DLCX_FEATURE_CPU_X86_64, "bmi")                               \
  X(X86_BMI2, 37, DLCX_FEATURE_CPU_X86_64, "bmi2")                             \
  X(X86_POPCNT, 38, DLCX_FEATURE_CPU_X86_64, "popcnt")                         \
  X(X86_SSE42, 39, DLCX_FEATURE_CPU_X86_64, "sse4.2")                          \
  X(X86_LZCNT, 40, DLCX_FEATURE_CPU_X86_64, "lzcnt")                           \
  X(X86_MOVBE, 41, DLCX_FEATURE_CPU_X86_64, "movbe")                           \
  X(X86_AVX512F, 42, DLCX_FEATURE_CPU_X86_64, "avx512f")                       \
  X(X86_AVX512BW, 43, DLCX_FEATURE_CPU_X86_64, "avx512bw")                     \
  X(X86_AVX512DQ, 44, DLCX_FEATURE_CPU_X86_64, "avx512dq")                     \
  X(X86_AVX512VL, 45, DLCX_FEATURE_CPU_X86_64, "avx512vl")                     \
  X(X86_AVX512CD, 46, DLCX_FEATURE_CPU_X86_64, "avx512cd")                     \
  X(X86_AVX512VNNI, 47, DLCX_FEATURE_CPU_X86_64, "avx512vnni")                 \
  X(X86_AVX512VBMI, 48, DLCX_FEATURE_CPU_X86_64, "avx512vbmi")                 \
  X(X86_AVX512VBMI2, 49, DLCX_FEATURE_CPU_X86_64, "avx512vbmi2")               \
  X(X86_AVX512BITALG, 50, DLCX_FEATURE_CPU_X86_64, "avx512bitalg")             \
  X(X86_AVX512VPOPCNTDQ, 51, DLCX_FEATURE_CPU_X86_64, "avx512vpopcntdq")       \
  X(X86_AVX512IFMA, 52, DLCX_FEATURE_CPU_X86_64, "avx512ifma")                 \
  X(X86_AVX512BF16, 53, DLCX_FEATURE_CPU_X86_64, "avx512bf16")                 \
  X(X86_GFNI, 54, DLCX_FEATURE_CPU_X86_64, "gfni")                             \
  X(X86_VPCLMULQDQ, 55, DLCX_FEATURE_CPU_X86_64, "vpclmulqdq")                 \
  X(X86_VAES, 56, DLCX_FEATURE_CPU_X86_64, "vaes")                             \
  X(X86_AVXVNNI, 57, DLCX_FEATURE_CPU_X86_64, "avxvnni")
#define DLCX_CPU_EXTENSIONS_AARCH64(X)                                         \
  X(AARCH64_DOTPROD, 58, DLCX_FEATURE_CPU_AARCH64, "dotprod")                  \
  X(AARCH64_I8MM, 59, DLCX_FEATURE_CPU_AARCH64, "i8mm")                        \
  X(AARCH64_FULLFP16, 60, DLCX_FEATURE_CPU_AARCH64, "fullfp16")                \
  X(AARCH64_BF16, 61, DLCX_FEATURE_CPU_AARCH64, "bf16")

/* The target_features bit of extension `bit` in the table above. */
#define DLCX_CPU_EXTENSION_MASK(bit) ((uint64_t)1 << (bit))
/* Every bit the table uses. */
#define DLCX_CPU_EXTENSIONS_ALL ((uint64_t)0x3fffffff << 32)

/* Element types: the one table of them, for the compiler, the runtime and
 * its tools. Numbered as ONNX TensorProto.DataType numbers them.
 * X(NAME, number, short name, long (NumPy) name, bits, kind), kind 'f'
 * (float), 'i' (signed), 'u' (unsigned) or 'b' (bool, one byte). 4-bit
 * types are packed two per byte in model inputs and outputs and take a byte
 * each between kernels. The 8- and 4-bit floats (FLOAT8E4M3FN ...
 * FLOAT4E2M1, FLOAT8E8M0) are formats of their own, not IEEE types: lookups by
 * kind and width (dlcx_dtype_find) skip them, .npy files hold their bits. */
#define DLCX_DTYPES(X)                                                         \
  X(F32, 1, "f32", "float32", 32, 'f')                                         \
  X(U8, 2, "u8", "uint8", 8, 'u')                                              \
  X(I8, 3, "i8", "int8", 8, 'i')                                               \
  X(U16, 4, "u16", "uint16", 16, 'u')                                          \
  X(I16, 5, "i16", "int16", 16, 'i')                                           \
  X(I32, 6, "i32", "int32", 32, 'i')                                           \
  X(I64, 7, "i64", "int64", 64, 'i')                                           \
  X(BOOL, 9, "bool", "bool", 8, 'b')                                           \
  X(F16, 10, "f16", "float16", 16, 'f')                                        \
  X(F64, 11, "f64", "float64", 64, 'f')                                        \
  X(U32, 12, "u32", "uint32", 32, 'u')                                         \
  X(U64, 13, "u64", "uint64", 64, 'u')                                         \
  X(BF16, 16, "bf16", "bfloat16", 16, 'f')                                     \
  X(F8E4M3FN, 17, "f8e4m3fn", "float8_e4m3fn", 8, 'f')                         \
  X(F8E4M3FNUZ, 18, "f8e4m3fnuz", "float8_e4m3fnuz", 8, 'f')                   \
  X(F8E5M2, 19, "f8e5m2", "float8_e5m2", 8, 'f')                               \
  X(F8E5M2FNUZ, 20, "f8e5m2fnuz", "float8_e5m2fnuz", 8, 'f')                   \
  X(U4, 21, "u4", "uint4", 4, 'u')                                             \
  X(I4, 22, "i4", "int4", 4, 'i')                                              \
  X(F4E2M1, 23, "f4e2m1", "float4_e2m1fn", 4, 'f')                             \
  X(F8E8M0, 24, "f8e8m0", "float8_e8m0fnu", 8, 'f')

typedef enum dlcx_dtype_e {
#define DLCX_DTYPE_ENUMERATOR(name, number, short_name, long_name, bits, kind) \
  DLCX_DTYPE_##name = number,
  DLCX_DTYPES(DLCX_DTYPE_ENUMERATOR)
#undef DLCX_DTYPE_ENUMERATOR
} dlcx_dtype_t;

/* One row of the table. */
typedef struct dlcx_dtype_info_t {
  uint32_t number;
  const char *name;      /* "f32" */
  const char *long_name; /* "float32", as NumPy and ONNX spell it */
  uint32_t bits;         /* of one element */
  char kind;             /* 'f', 'i', 'u' or 'b' */
} dlcx_dtype_info_t;

/* The table's rows; `*count` gets their number. */
static inline const dlcx_dtype_info_t *dlcx_dtype_table(size_t *count) {
  static const dlcx_dtype_info_t table[] = {
#define DLCX_DTYPE_ROW(name, number, short_name, long_name, bits, kind)        \
  {number, short_name, long_name, bits, kind},
      DLCX_DTYPES(DLCX_DTYPE_ROW)
#undef DLCX_DTYPE_ROW
  };
  *count = sizeof(table) / sizeof(table[0]);
  return table;
}

/* The row of `dtype`, or NULL for a number the table lacks. */
static inline const dlcx_dtype_info_t *dlcx_dtype_info(uint32_t dtype) {
  size_t count, i;
  const dlcx_dtype_info_t *table = dlcx_dtype_table(&count);
  for (i = 0; i < count; ++i)
    if (table[i].number == dtype)
      return &table[i];
  return NULL;
}

/* Whether `dtype` is one of the 8- and 4-bit float formats. */
static inline int dlcx_dtype_is_minifloat(uint32_t dtype) {
  return (dtype >= DLCX_DTYPE_F8E4M3FN && dtype <= DLCX_DTYPE_F8E5M2FNUZ) ||
         dtype == DLCX_DTYPE_F4E2M1 || dtype == DLCX_DTYPE_F8E8M0;
}

/* The dtype of `kind` and `bits` (IEEE f16 for 'f' and 16, not bf16), or 0
 * when the table has none. */
static inline uint32_t dlcx_dtype_find(char kind, uint32_t bits) {
  size_t count, i;
  const dlcx_dtype_info_t *table = dlcx_dtype_table(&count);
  for (i = 0; i < count; ++i)
    if (table[i].kind == kind && table[i].bits == bits &&
        !dlcx_dtype_is_minifloat(table[i].number) &&
        table[i].number != DLCX_DTYPE_BF16)
      return table[i].number;
  return 0;
}

/* Bits of one element of `dtype`; 0 for a number the table lacks. */
static inline uint32_t dlcx_dtype_bits(uint32_t dtype) {
  const dlcx_dtype_info_t *info = dlcx_dtype_info(dtype);
  return info ? info->bits : 0;
}

typedef enum dlcx_section_kind_e {
  DLCX_SECTION_STRINGS = 1,   /* NUL-terminated strings; refs are offsets */
  DLCX_SECTION_TENSORS = 2,   /* dlcx_tensor_t[] */
  DLCX_SECTION_KERNELS = 3,   /* dlcx_kernel_t[] */
  DLCX_SECTION_LAUNCHES = 4,  /* dlcx_launch_t[], in execution order */
  DLCX_SECTION_BINDINGS = 5,  /* uint32_t[] tensor indices used by launches */
  DLCX_SECTION_IO = 6,        /* uint32_t[]: inputs, then outputs */
  DLCX_SECTION_CODE = 7,      /* target code blobs (ELF, SPIR-V, PTX, cubin) */
  DLCX_SECTION_CONSTANTS = 8, /* aligned constant tensor data */
  DLCX_SECTION_MODEL = 9,     /* one dlcx_model_t */
  /* CUDA: a cubin of all kernels for header.target_sm, present when
   * DLCX_FEATURE_CUDA_CUBIN is set. Kernels always reference the PTX module
   * in CODE; a driver uses the cubin when the device's compute capability
   * equals target_sm and JIT-compiles the PTX otherwise. */
  DLCX_SECTION_CUBIN = 10,
  /* Since 1.2, required there: what each kernel was compiled for, so that a
   * reader checks launches against the kernels they launch and drivers
   * check kernels against their device. One dlcx_kernel_limits_t per
   * kernel, in KERNELS order. */
  DLCX_SECTION_KERNEL_LIMITS = 11,
  /* Since 1.2, required there: uint64_t per buffer of each kernel, kernels
   * in order (kernel 0's binding_count entries first): the bytes the kernel
   * reads or writes through that buffer. */
  DLCX_SECTION_KERNEL_ARGS = 12,
  /* Since 1.3, optional, CPU artifacts only (dlc-compile writes it): one
   * uint64_t, the dlcx_checksum of the relocatable object that the CODE
   * section's shared object was linked from -- the object `dlc-compile
   * --emit=obj` writes for the same model and target. The CPU driver's
   * linked mode (dlc_cpu_driver_create_linked) loads an artifact only when
   * this equals the fingerprint of the kernels linked into the program. */
  DLCX_SECTION_CPU_CODE_ID = 13,
} dlcx_section_kind_t;

typedef enum dlcx_storage_e {
  DLCX_STORAGE_ARENA = 1,    /* offset into the session's arena */
  DLCX_STORAGE_CONSTANT = 2, /* offset into the CONSTANTS section */
} dlcx_storage_t;

typedef enum dlcx_code_format_e {
  DLCX_CODE_ELF_SHARED = 1, /* a position-independent ELF shared object */
  DLCX_CODE_SPIRV = 2,      /* one SPIR-V module */
  DLCX_CODE_PTX = 3,        /* PTX text, NUL-terminated */
  DLCX_CODE_CUBIN = 4,      /* an ELF cubin for header.target_sm */
  /* Since 1.4, CPU: no code in the artifact (code_size 0); the kernels are
   * linked into the application (the object of CPU_CODE_ID's fingerprint,
   * which the artifact must have). Targets without a loader get this. */
  DLCX_CODE_LINKED = 5,
} dlcx_code_format_t;

typedef struct dlcx_header_t {
  uint32_t magic;                /* DLCX_MAGIC */
  uint16_t version_major;        /* DLCX_VERSION_MAJOR */
  uint16_t version_minor;        /* DLCX_VERSION_MINOR */
  uint64_t checksum;             /* dlcx_checksum of [16, file_size) */
  uint64_t file_size;            /* total bytes of the artifact */
  uint32_t header_size;          /* sizeof(dlcx_header_t) */
  uint32_t section_count;        /* entries in the section table */
  uint64_t section_table_offset; /* dlcx_section_t[section_count] */
  uint32_t target;               /* dlcx_target_t */
  uint32_t target_sm;            /* CUDA: e.g. 87 for sm_87; 0 otherwise */
  uint64_t target_features;      /* dlcx_feature_t bits */
  uint32_t flags;                /* reserved, 0 */
  uint32_t reserved;             /* 0 */
} dlcx_header_t;

typedef struct dlcx_section_t {
  uint32_t kind;   /* dlcx_section_kind_t; each kind appears at most once */
  uint32_t flags;  /* reserved, 0 */
  uint64_t offset; /* from the start of the file, DLCX_ALIGNMENT-aligned */
  uint64_t size;   /* bytes */
} dlcx_section_t;

typedef struct dlcx_model_t {
  uint64_t arena_size;        /* bytes of the one per-session arena */
  uint64_t arena_lower_bound; /* largest simultaneously-live set, bytes */
  uint32_t name;              /* string: the graph name */
  uint32_t producer;          /* string: "dlc <version>" */
  uint32_t input_count;       /* first entries of the IO section */
  uint32_t output_count;      /* next entries of the IO section */
  uint32_t onnx_node_count;   /* nodes in the source model (for statistics) */
  /* Since 1.1: bytes of scratch each thread running CPU kernels hands them
   * (their heap temporaries); 0 for GPU targets and in 1.0 artifacts. */
  uint32_t cpu_scratch_size;
} dlcx_model_t;

/* dlcx_tensor_t.flags, since 1.5. */
typedef enum dlcx_tensor_flag_e {
  /* A model input whose arena bytes buffers computed later in a run take
   * over once the input has been read for the last time: after a run it
   * holds something else, and it must be set again before the next run
   * (the runtime refuses to run otherwise). Only on inputs. */
  DLCX_TENSOR_INPUT_REUSED = 1u,
} dlcx_tensor_flag_t;

typedef struct dlcx_tensor_t {
  uint32_t name;    /* string */
  uint32_t dtype;   /* dlcx_dtype_t */
  uint32_t storage; /* dlcx_storage_t */
  uint32_t rank;    /* <= DLCX_MAX_RANK */
  uint64_t offset;  /* arena or CONSTANTS offset, aligned */
  uint64_t size;    /* bytes; equals the product of dims * dtype size */
  int64_t dims[DLCX_MAX_RANK];
  /* Quantization of the stored values; scale == 0 means "not quantized".
   * Per-axis parameters: quant_axis >= 0, and quant_params is the CONSTANTS
   * offset of dims[quant_axis] float scales followed by as many int32 zero
   * points. */
  float scale;
  int32_t zero_point;
  int32_t quant_axis; /* -1: per tensor */
  uint32_t flags;     /* dlcx_tensor_flag_t bits; 0 before 1.5 */
  uint64_t quant_params;
} dlcx_tensor_t;

typedef struct dlcx_kernel_t {
  uint32_t name;              /* string: symbol (CPU) or entry point (GPU) */
  uint32_t code_format;       /* dlcx_code_format_t */
  uint64_t code_offset;       /* into the CODE section */
  uint64_t code_size;         /* bytes; kernels may share one blob */
  uint32_t binding_count;     /* buffers the kernel takes, in order */
  uint32_t workgroup_size[3]; /* GPU local size; 1,1,1 on CPU */
} dlcx_kernel_t;

typedef struct dlcx_kernel_limits_t {
  /* The workgroup grid the kernel's code was generated for; every launch of
   * the kernel uses exactly this grid (CPU kernels compute their tiles'
   * offsets from the workgroup id, so a larger grid would address past
   * their buffers). */
  uint32_t grid[3];
  /* Vulkan kernels: at most this many loop iterations (all loops of the
   * kernel together) run in one invocation; 0xffffffff when unknown or
   * more. Mesa's lavapipe ends every loop of an invocation once 65535
   * iterations have run in all, silently, so the Vulkan driver refuses
   * kernels above that there. 0 when not recorded (CPU and CUDA). */
  uint32_t max_loop_iterations;
} dlcx_kernel_limits_t;

typedef struct dlcx_launch_t {
  uint32_t kernel;        /* index into KERNELS */
  uint32_t binding_begin; /* first entry in BINDINGS */
  uint32_t binding_count; /* == kernels[kernel].binding_count */
  uint32_t grid[3];       /* workgroups; CPU kernels get [0, product);
                             since 1.2 equal to the kernel's grid */
} dlcx_launch_t;

/* CPU kernels. Every CPU kernel symbol has this type. `bindings[i]` is the
 * address of the launch's i-th buffer (arena or constant). The kernel runs
 * workgroups [begin, end) of the launch grid, numbered x-fastest:
 * id = x + grid[0] * (y + grid[1] * z). The runtime may split [0, total)
 * across threads in any way; kernels must not depend on the split.
 * `scratch` is the calling thread's own model.cpu_scratch_size bytes,
 * DLCX_ALIGNMENT-aligned, whose contents the kernel does not expect to
 * keep between calls (NULL when the size is 0). */
typedef void (*dlcx_cpu_kernel_fn)(void *const *bindings, uint32_t begin,
                                   uint32_t end, void *scratch);

/* The integrity hash of the artifact. Per little-endian 8-byte word w (a
 * trailing partial word is zero-padded): h = ((h ^ w) * P); h ^= h >> 32,
 * starting from the FNV-1a offset basis with P the FNV-1a 64-bit prime, then
 * a final avalanche mixed with the length. The shift carries every bit into
 * the low half, so flips in the top bits of two words do not cancel. It
 * detects corruption; it is not a signature. */
static inline uint64_t dlcx_checksum(const void *data, uint64_t size) {
  const uint8_t *p = (const uint8_t *)data;
  uint64_t h = 0xcbf29ce484222325ull;
  uint64_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t w = (uint64_t)p[i] | (uint64_t)p[i + 1] << 8 |
                 (uint64_t)p[i + 2] << 16 | (uint64_t)p[i + 3] << 24 |
                 (uint64_t)p[i + 4] << 32 | (uint64_t)p[i + 5] << 40 |
                 (uint64_t)p[i + 6] << 48 | (uint64_t)p[i + 7] << 56;
    h = (h ^ w) * 0x100000001b3ull;
    h ^= h >> 32;
  }
  if (i < size) {
    uint64_t w = 0;
    for (unsigned s = 0; i < size; ++i, s += 8)
      w |= (uint64_t)p[i] << s;
    h = (h ^ w) * 0x100000001b3ull;
    h ^= h >> 32;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h ^= size;
  return h;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DLC_ARTIFACT_FORMAT_H */
