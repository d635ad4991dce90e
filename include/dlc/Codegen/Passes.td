//===- Passes.td - kernel code generation passes -----------*- tablegen -*-===//
//
// Kernel functions (marked `dlc.kernel`) go through the same tiling,
// distribution and bufferization on every target; only the final lowering
// (LLVM for CPUs, SPIR-V for Vulkan, NVVM for CUDA) differs.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_CODEGEN_PASSES_TD
#define DLC_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

def TileableGathers : Pass<"dlc-tileable-gathers", "mlir::func::FuncOp"> {
  let summary = "Rewrite what tiling cannot slice in a kernel as gathers";
  let description = [{
    Tiling slices each operand of a kernel op by the operand's indexing map
    at the tile's first index, which is only right when the map is linear:
    an input read through a division or modulo (nearest upsampling, the
    channel blocks of a layout change) or a negative stride (a reversed
    slice) would be sliced at the wrong place. In every `dlc.kernel`
    function, this pass rewrites such inputs as reads by `tensor.extract`
    at the map applied to `linalg.index` values, which tiling keeps
    absolute (a channels-last convolution's result, read in whole channel
    blocks, stays an operand), and moves a padding value computed in a
    `tensor.pad`'s body from values defined outside it before the pad.

    With `copies` (GPUs, whose threads cannot tile a pad into buffers),
    `tensor.pad`, `tensor.concat` and a returned `tensor.extract_slice` or
    `tensor.insert_slice` become elementwise gathers too, which spread over
    threads like any elementwise op. dlc-tile-and-distribute runs next.
  }];
  let options = [
    Option<"copies", "copies", "bool", "false",
           "Also pads, concats and returned slices (GPU threads)">,
  ];
  let dependentDialects = ["mlir::affine::AffineDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def TileAndDistribute : Pass<"dlc-tile-and-distribute", "mlir::func::FuncOp"> {
  let summary = "Tile each kernel into workgroups and fuse its producers";
  let description = [{
    For every `dlc.kernel` function, tiles the op that produces the result
    along up to three of its outer parallel loops into an `scf.forall` (one
    iteration = one workgroup) and fuses every producer in the kernel into
    the loop body. Tile sizes divide the loop extents so that tiles are
    static, and are chosen so that a kernel has about `workgroups`
    workgroups, but no fewer than `min-work` units of work per workgroup:
    a kernel's work is its root op's iterations, its reductions'
    multiply-adds at 64 to one, or for a reduction that reads an input's
    elements about once each (a matrix-vector product) that input's size,
    whichever is most. Loops that a fused reduction reduces over are not
    split.
    With `scratch-bytes` (CPUs with little memory: microcontrollers), the
    root's loops are split further until what one workgroup builds in its
    scratch fits about that many bytes: a convolution's padded input
    (which shrinks with the loops that index it, split first) and the
    kernel's largest temporary (which shrinks with every split); workgroups
    there run one after another on one core.
    The trip counts are recorded as `dlc.grid = array<i64: x, y, z>` on the
    function (x is the innermost forall dimension). What tiling cannot
    slice has been rewritten by dlc-tileable-gathers before.

    With `threads` > 0 (GPUs), workgroups are tiles of one element per
    thread along the innermost two distributable loops, and each workgroup
    tile is tiled again into a nested `scf.forall` of threads (producers
    fused again, the loop normalized to steps of 1); `dlc.workgroup_size`
    records the thread counts. In kernels of a convolution with a filter
    window and at least 64 multiply-adds per output, threads take a
    register tile of up to 16 outputs (consecutive columns, and output
    channels or another loop spread over workgroups only) along loops that
    reuse loaded elements, as long as the grid keeps 128 workgroups, 16K
    threads and a warp per workgroup (or what one output per thread
    gives); dlc-gpu-register-tile keeps those outputs in registers.
  }];
  let options = [
    Option<"targetWorkgroups", "workgroups", "int64_t", "64",
           "Number of workgroups to aim for per kernel">,
    Option<"minWork", "min-work", "int64_t", "16384",
           "Fewest loop iterations worth a workgroup">,
    Option<"maxThreads", "threads", "int64_t", "0",
           "GPUs: threads per workgroup (0: CPU tiling, one thread each)">,
    Option<"subgroupLanes", "subgroup-lanes", "int64_t", "0",
           "GPUs with subgroup operations: lanes that share a row "
           "reduction (0: one thread per row)">,
    Option<"scratchBytes", "scratch-bytes", "int64_t", "0",
           "CPUs: about the most bytes one workgroup builds in its scratch "
           "(padded inputs, temporaries; 0: no limit)">,
  ];
  let dependentDialects = ["mlir::scf::SCFDialect",
                           "mlir::tensor::TensorDialect",
                           "mlir::affine::AffineDialect",
                           "mlir::gpu::GPUDialect"];
}

def BufferizeKernels : Pass<"dlc-bufferize-kernels", "mlir::ModuleOp"> {
  let summary = "Give kernels their buffer ABI and bufferize their bodies";
  let description = [{
    Rewrites each `dlc.kernel` function from tensors to buffers: operands
    become read-only memrefs, results become output memrefs appended to the
    arguments (the kernel writes its result in place), then runs One-Shot
    Bufferize on the bodies and inserts deallocations for temporaries.
    Small temporaries are promoted to the stack, and copies become
    `linalg.copy` so that kernels never call a runtime library.

    GPU targets put every temporary of a thread on its stack
    (`stack-only`) in the memory space they name for private memory.
  }];
  let options = [
    Option<"privateMemorySpace", "private-memory-space", "std::string",
           "\"\"", "Memory space attribute of temporaries (default: none)">,
    Option<"stackOnly", "stack-only", "bool", "false",
           "Promote every temporary to the stack, whatever its size">,
    Option<"stackLimit", "stack-limit", "int64_t", "16384",
           "The largest temporary promoted to the stack, in bytes (CPUs; "
           "larger ones go to the thread's scratch)">,
  ];
  let dependentDialects = ["mlir::bufferization::BufferizationDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::linalg::LinalgDialect"];
}

def LegalizeMath : Pass<"dlc-legalize-math", "mlir::ModuleOp"> {
  let summary = "Expand math ops into arithmetic the targets execute natively";
  let description = [{
    Kernels must not depend on a math library (embedded targets have none,
    and GPUs differ in what they offer), so transcendental functions become
    polynomial approximations and arithmetic, computed in f32 for f16/bf16.
    f32 sin and cos reduce their argument by k * pi/2 in four Cody-Waite
    steps and evaluate Taylor polynomials on [-pi/4, pi/4]; f32 tanh is
    MLIR's rational approximation (accurate near 0), not the expansion
    through exp (scripts/math_accuracy.py measures all of them).
    `arith.remf` becomes `x - trunc(x / y) * y`, `math.trunc` a floor or
    ceil by sign, and `math.ipowi` a loop over the exponent's bits.

    `expand-floor` turns `math.floor` (exp's and sin's argument reduction)
    into `roundeven(x)`, minus one where that is above x, for CPUs without
    a rounding instruction (ARMv7's and Cortex-M4's VFP, x86 without
    SSE4.1), where LLVM would call floorf; no integer conversion (f32 to
    i64 is a call on 32-bit Arm).

    `math.roundeven` (QuantizeLinear's rounding, in every requantization
    epilogue) stays when `native-roundeven` says the target has it as one
    instruction (x86 with SSE4.1, AArch64, CUDA); elsewhere f32 and f64
    round as `copysign((|x| + 2^p) - 2^p, x)` for |x| < 2^p (p = 23 or 52),
    half to even without an integer conversion. `expand-num-min-max` turns
    `arith.maxnumf`/`minnumf` into comparisons and selects, for targets
    where they are library calls (fmaxf on ARMv7). `expand-f64-to-f16`
    converts f64 to f16 through f32 rounded to odd (correctly rounded, no
    double rounding), for targets without that conversion (x86 without
    AVX512-FP16, where LLVM would call __truncdfhf2).
    `expand-f16-conversions` and `expand-bf16-conversions` turn
    `arith.extf`/`truncf` between f32 and f16 (bf16) into integer
    operations, rounding to nearest even, for targets without conversion
    instructions (x86 without F16C or AVX512-BF16, RISC-V, ARMv7 without
    fp16), where LLVM would call __extendhfsf2/__truncsfhf2/__truncsfbf2;
    arithmetic on those types is computed in f32 before (MLIR's
    arith-emulate-unsupported-floats). `exact-bf16-subnormals`, for a
    target whose f32 -> bf16 instruction treats subnormal inputs as zero
    (AVX512-BF16), rounds those inputs in integer operations instead and
    keeps the instruction for the rest. `expand-i64-to-f32` converts
    signed and unsigned i64 to f32 in integer operations (correctly
    rounded), for 32-bit targets where LLVM would call __aeabi_l2f or
    __floatdisf (an int64 attention mask cast to float). `math.fma` becomes a
    multiplication and an addition, except an fma marked `dlc.fused` (a
    computation whose rounding must be the fused one, as QLinearAdd's is in
    ONNX Runtime) on a target whose `native-fma` says it has the fused
    instruction.
  }];
  let options = [
    Option<"nativeRoundEven", "native-roundeven", "bool", "false",
           "Keep math.roundeven: the target rounds half to even in one "
           "instruction">,
    Option<"expandFloor", "expand-floor", "bool", "false",
           "Expand math.floor into roundeven and a correction (the target "
           "has no rounding instruction)">,
    Option<"expandNumMinMax", "expand-num-min-max", "bool", "false",
           "Expand arith.maxnumf/minnumf into compares and selects">,
    Option<"expandF64ToF16", "expand-f64-to-f16", "bool", "false",
           "Convert f64 to f16 through f32 rounded to odd">,
    Option<"expandF16Conversions", "expand-f16-conversions", "bool", "false",
           "Convert between f16 and f32 in integer operations (the target "
           "has no conversion instruction)">,
    Option<"expandBF16Conversions", "expand-bf16-conversions", "bool",
           "false",
           "Convert between bf16 and f32 in integer operations (the target "
           "has no conversion instruction)">,
    Option<"exactBF16Subnormals", "exact-bf16-subnormals", "bool", "false",
           "The target's f32 -> bf16 instruction flushes subnormal inputs "
           "to zero: round those in integer operations">,
    Option<"nativeFma", "native-fma", "bool", "false",
           "Keep math.fma marked dlc.fused: the target fuses multiply-adds "
           "in one rounding">,
    Option<"expandI64ToF32", "expand-i64-to-f32", "bool", "false",
           "Convert i64 to f32 in integer operations (32-bit targets, "
           "where it is a helper call)">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::math::MathDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::vector::VectorDialect"];
}

def GPUOutlineKernels : Pass<"dlc-gpu-outline-kernels", "mlir::ModuleOp"> {
  let summary = "GPU kernels: move bufferized kernels into gpu.func";
  let description = [{
    Turns every bufferized `dlc.kernel` function into a `gpu.func` kernel in
    a `gpu.module` (one module per kernel with `module-per-kernel`, as
    Vulkan wants one SPIR-V module per pipeline; else one module named
    `dlc_kernels`), replacing the workgroup `scf.forall` by block ids and
    the nested thread `scf.forall` by thread ids (x is the innermost forall
    dimension). The threads per workgroup come from `dlc.workgroup_size`
    and are recorded as the kernel's known block size. Buffers allocated in
    workgroup memory (`#gpu.address_space<workgroup>`) become the
    gpu.func's workgroup attributions. A kernel with `dlc.run_if = [i, v]`
    runs its body inside an `scf.if` on argument i's boolean being v.
  }];
  let options = [
    Option<"modulePerKernel", "module-per-kernel", "bool", "false",
           "Put each kernel in its own gpu.module">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::scf::SCFDialect"];
}

def GPUInt8Dot : Pass<"dlc-gpu-int8-dot", "mlir::ModuleOp"> {
  let summary = "GPU int8 contractions as integer dot products";
  let description = [{
    Runs on bufferized kernels (the thread's linalg ops on memrefs) of a
    Vulkan target with the `+dot8` feature, or of a CUDA target (`nvvm`:
    `dp4a`, which every supported sm has). A linalg.generic whose single
    output is i32 and whose body is
    `out + (ext(a) - za) * (ext(b) - zb)` (ext an extsi or extui from i8;
    either zero point optional, each invariant in the reduction: a value
    from outside, a constant, or an input indexed by parallel loops only)
    becomes loops that take the longest reduction loop (at least 4) four
    elements at a time: the four bytes of `a` and of `b` form two
    `vector<4xi8>` and one `spirv.SDot`, `spirv.UDot` or `spirv.SUDot`
    (by the signedness of the extensions) computes their dot product, or
    with `nvvm` one `nvvm.dot.accumulate.4way` (PTX `dp4a`) adds it to
    the accumulator.
    Zero points are applied by expansion,
    `sum (a - za)(b - zb) = sum ab - zb sum a - za sum b + 4 za zb`, with
    the sums as dot products against ones. A remainder below 4 runs the
    original body per element. Other generics are left alone.
  }];
  let options = [
    Option<"nvvm", "nvvm", "bool", "false",
           "Emit NVVM's dp4a instead of SPIR-V dot products">,
  ];
  let dependentDialects = ["mlir::spirv::SPIRVDialect",
                           "mlir::NVVM::NVVMDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::vector::VectorDialect",
                           "mlir::affine::AffineDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

def GPUSubgroupRows : Pass<"dlc-gpu-subgroup-rows", "mlir::func::FuncOp"> {
  let summary = "GPU row reductions shared by the lanes of a subgroup";
  let description = [{
    Runs on bufferized kernels marked `dlc.subgroup_lanes = S` by
    dlc-tile-and-distribute: their thread loop's x threads are S lanes that
    each own a contiguous S-th of a row. In that loop, a linalg.generic that
    reduces the row (its last loop, the only reduction; one input read
    along it) with `out = combine(out, in)` (addf, maximumf, maxnumf,
    minimumf, minnumf), whose output a linalg.fill of the combiner's
    identity initializes, at most 16 output elements, reduces only the
    lane's part of the row, and so does the elementwise op that writes its
    input when that input is a private row nothing else reads. Then each
    output element goes through log2(S) `gpu.shuffle xor` exchanges (lane
    offsets S/2, ..., 1) combined with the same op, so every lane holds
    the whole row's result. S must be a power of two of at most
    `subgroup-size` (the shuffles' width): lanes S-aligned in the
    invocation order stay inside one subgroup of any size >= S.
  }];
  let options = [
    Option<"subgroupSize", "subgroup-size", "int64_t", "32",
           "The target's declared subgroup size (the shuffles' width)">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::affine::AffineDialect",
                           "mlir::arith::ArithDialect"];
}

def GPURegisterTile : Pass<"dlc-gpu-register-tile", "mlir::ModuleOp"> {
  let summary = "GPU kernels: a thread's outputs accumulate in registers";
  let description = [{
    Runs on bufferized GPU kernels before their linalg ops become loops. A
    linalg op on buffers with one output (indexed by its parallel loops
    only), static loop ranges, reduction loops of at least two steps in
    all, at most `max-accumulators` output elements (a thread's tile) and
    a body without regions becomes: one
    load of each output element, the reduction loops (outermost first)
    carrying every output element as a loop value, the op's body evaluated
    once per output element and step on operand elements loaded once per
    step however many output elements read them, and one store of each
    output element after the loops. Each output element's reduction runs
    in the original order; floating-point multiplications, additions and
    subtractions in the body are marked `contract` (fusable into fused
    multiply-adds). Other linalg ops are left alone.
  }];
  let options = [
    Option<"maxAccumulators", "max-accumulators", "int64_t", "32",
           "The most output elements of one op carried through its loops">,
  ];
  let dependentDialects = ["mlir::scf::SCFDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::affine::AffineDialect",
                           "mlir::arith::ArithDialect"];
}

def GPUPromoteShared : Pass<"dlc-gpu-promote-shared", "mlir::func::FuncOp"> {
  let summary = "GPU kernels: stage contraction inputs in workgroup memory";
  let description = [{
    Runs on bufferized kernels, before dlc-gpu-outline-kernels. In a thread
    loop (`scf.forall` mapped to GPU threads) each thread runs a linalg op
    with reduction loops (matmul, convolution) on its own window of the
    inputs. An input window qualifies when it is a subview of a buffer
    defined outside the thread loop, at offsets that are linear in the
    thread variables, or a private buffer filled by an elementwise
    producer that sees the thread only through such offsets (the gather
    of a padded convolution). Its footprint is the union of the windows of
    the workgroup's threads; when the threads read its elements at least
    twice over (reuse >= 2), the input is staged: all threads fill a
    workgroup buffer of the footprint's shape, one element per thread in
    turn, a `gpu.barrier` follows, and the linalg op reads its window from
    the buffer. When the staged footprints exceed `budget` bytes, the
    longest reduction loop that every operand indexes as a plain dimension
    is stepped through in the largest tiles that fit (a K loop with a
    barrier after each step); inputs that still do not fit stay in global
    memory, least reused first. Element types f32, f16 and i32.
  }];
  let options = [
    Option<"memorySpace", "memory-space", "std::string",
           "\"#gpu.address_space<workgroup>\"",
           "Memory space attribute of the workgroup buffers">,
    Option<"budget", "budget", "int64_t", "12288",
           "Workgroup memory per contraction, in bytes">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::affine::AffineDialect",
                           "mlir::arith::ArithDialect"];
}

def GPUSerialLoops : Pass<"dlc-gpu-serial-loops", "mlir::func::FuncOp"> {
  let summary = "GPU kernels: spread the steps of a sequential loop over a "
                "workgroup";
  let description = [{
    Runs on bufferized kernels, before dlc-gpu-outline-kernels. A kernel
    whose body is one `scf.for` with linalg ops inside and no thread loop
    (a recurrent layer's time loop, which dlc-tile-and-distribute leaves to
    one thread) runs on a workgroup of `threads` threads instead: each
    linalg op in the loop is tiled along its largest parallel loop, one
    iteration per step, cyclically over the threads (`gpu.thread_id x`),
    and followed by a `gpu.barrier`. The kernel's stack buffers (the
    step's temporaries) and the kernel arguments the loop both writes and
    reads (the carried state) move to workgroup memory of `memory-space`;
    after the loop a barrier and a copy, spread the same way, write the
    state to its argument. Kernels whose shared buffers exceed `budget`
    bytes (integers counted as at least `min-int-bits` wide) keep one
    thread.
  }];
  let options = [
    Option<"threads", "threads", "int64_t", "128",
           "Threads of the workgroup">,
    Option<"memorySpace", "memory-space", "std::string",
           "\"#gpu.address_space<workgroup>\"",
           "Memory space attribute of the workgroup buffers">,
    Option<"budget", "budget", "int64_t", "12288",
           "Workgroup memory the shared buffers may take, in bytes">,
    Option<"minIntBits", "min-int-bits", "unsigned", "8",
           "Bits a narrower integer takes in workgroup memory (32 where "
           "SPIR-V has no 8-bit types there)">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::arith::ArithDialect"];
}

def CPULoopOrder : Pass<"dlc-cpu-loop-order", "mlir::func::FuncOp"> {
  let summary = "CPU kernels: choose the loop that vectorizes as the innermost";
  let description = [{
    Before linalg ops become loops, reshapes each op's loop nest for LLVM's
    loop vectorizer. Loops of trip count 1 go away (a 1x1 kernel window, a
    batch of one); runs of adjacent loops that every operand walks as one
    contiguous block merge into one loop over collapsed buffers (a 1x1
    convolution's oh and ow, a global pool's window), except loops whose
    index the body reads (a gather's coordinates, as nearest upsampling
    reads them), which a merge would make every element divide apart from
    the merged index. Then a cost model
    scores every loop as the innermost one from the operands' actual
    strides: +1 per operand it walks with stride 1, +1 for an output a
    reduction keeps in a register, -1 per operand walked with a larger
    stride (-2 for outputs), less for short trip counts. The best loop goes
    innermost, the other parallel loops outermost and the remaining
    reductions in between: matmul becomes i-k-j, a matmul with transposed B
    keeps k innermost. Where the best loop walks the output in steps of t
    (2 to 4) and a parallel loop of t trips fills the elements between (a
    repack to 4 bytes a word), that loop goes inside it: LLVM unrolls it
    and vectorizes the best loop with interleaved stores. Each output element still accumulates its reduction
    in the original order unless the reduction is innermost. Floating point
    arithmetic in the bodies of reductions is marked `contract` (fused
    multiply-add) and `reassoc` (so that an innermost reduction
    vectorizes); elementwise arithmetic rounds each operation as the model
    writes it, as ONNX Runtime does.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::arith::ArithDialect"];
}

def CPUSparseTile : Pass<"dlc-cpu-sparse-tile", "mlir::func::FuncOp"> {
  let summary = "CPU kernels: register-tiled loops over the kept inputs of sparse convolutions and matrix products";
  let description = [{
    Writes the loop nest of a `linalg.generic` marked `dlc.sparse_rows = R`
    by dlc-sparse-contractions (bufferized, after dlc-cpu-lower-workgroups).
    Convolutions: out[.., f, .., p] += w[f, j] * x[...] with `x` read by
    memref.load in the body at indices built from the table entry
    idx[f, j + 1] (a channel, or an offset it adds to) and the loop
    indices, its last index walking p at unit stride. A block of R rows by
    `vectors` SIMD vectors of p stays in registers while a loop runs over
    the row group's idx[f, 0] kept entries: each step loads the entry's
    vectors of `x`, broadcasts R weights and issues R x vectors fused
    multiply-adds. Pixels past the last full block take one masked block;
    other parallel loops (batch, a window's output rows) are outer loops.
    Rows that do not start a whole aligned group (a workgroup tile of rows
    that is not a multiple of R, or not known to start at one) are done one
    at a time with their own table rows, which are correct for any row.
    Matrix products (w [groups, J, R] read along the output's last dim, R
    columns a group): blocks of rows by the group's vectors, each step
    loading the compressed weight vectors and broadcasting `x` at each row
    (4 accumulators per row, summed after, when fewer than 4 rows). The
    fill before and the elementwise op after are taken over as in
    dlc-cpu-register-tile. An op of neither form is left to the scalar
    loops with a remark.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", "256",
           "SIMD width in bits (f32 lanes = vectorBits / 32, at least 4)">,
    Option<"vectorRegisters", "vector-registers", "int64_t", "16",
           "SIMD registers at that width">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::vector::VectorDialect"];
  let statistics = [
    Statistic<"numTiled", "tiled", "Sparse convolutions tiled">,
  ];
}

def CPURegisterTile : Pass<"dlc-cpu-register-tile", "mlir::func::FuncOp"> {
  let summary = "CPU kernels: register-tiled SIMD loops for f32 and integer contractions";
  let description = [{
    For linalg.generic ops on buffers computing out[.., f, .., p] +=
    a[.., p + .., ..] * b[.., f, ..] in f32 with one or more reduction loops
    (matmul; 1x1, 3x3 and depthwise convolutions with stride 1 or 2 once
    dlc-cpu-loop-order put the output's columns last; channels-last
    convolutions, whose columns are output channels and whose rows are
    pixels read through a window `ow * s + kw`; max and sum pooling
    windows, whose step is max(out, a) or out + a), writes the loop nest
    itself: a block of rows x 2 SIMD vectors of the output stays in vector
    registers through all reduction loops; each step loads 2 vectors of `a`,
    broadcasts `rows` scalars of `b` and issues fused multiply-adds. The
    output is loaded and stored once per block instead of once per
    multiply-add. Without a row loop of `b` (depthwise convolutions and
    pooling: every operand uses the channel) the rows are the output's
    rows, a loop of `a`: each step loads a vector of `a` per accumulator and
    broadcasts one scalar of `b`, so these blocks hold a quarter of the
    vector registers (an eighth when stride-2 vectors are shuffled). With
    stride 2 each vector of `a` is the even elements of two loads, picked
    by a shuffle, or `a` is split into its even and odd columns once (see
    `two-vector-permute`); when `a` is a padded tile that only the
    contraction reads (filled with a value, a region of another buffer
    copied in), the split reads that buffer's region directly, writes the
    value around it, and the tile is erased. A stride-1 convolution whose
    padded tile holds whole rows of its input (full width), and whose
    epilogue reads the output's rows and columns as one dim, runs its
    output rows as one flat run of pixels when that fills fewer vectors
    (2 rows of 56 columns: 7 vectors of 16 lanes, not 8): the tile's rows
    are laid out one after another without the padding columns between
    them (a tile of source rows only, with a source row above and below,
    read in place from the source; others copied from it), so that pixel
    q at taps (kh, kw) reads
    element q + kh * W + kw; the column taps are unrolled, and a lane whose
    tap falls left of its row or past its end is masked (a mask per vector
    and tap, computed once per block). Over any other tile padded with
    zeros, a multiply-add skips the filter rows that fall on the tile's
    padding rows: the row tap loop of a block runs over the taps whose
    tile row holds a source row only (a block's rows share their output
    row). Columns past the last
    full block get one narrower block whose last vector is masked; rows
    past the last full block one block of fewer rows. With 32 registers of
    16 lanes (AVX-512), a row of 3 to 5 vectors that blocks of two would
    end with a block of one (80 columns) is one block of all its vectors
    and 24 / vectors rows instead. Column blocks are the
    outer loop when that reads fewer bytes (a filter slice reused by every
    block of pixels). When what a block reads over all reduction steps
    exceeds `chunk-bytes`, the outermost reduction loop runs in chunks
    around the whole nest, so that each chunk's operands are reused from
    cache. When the output is a temporary (a tile of the kernel's) that a
    constant fill initializes and one elementwise op then maps into the
    kernel's output (bias, batch norm, activation, residual add), the
    accumulators start as that constant in registers and the elementwise op
    runs on them as vectors before the store (also through another reshape
    of the temporary, by its linear offset): the fill and the second pass
    over the temporary go, and so does the temporary unless the reduction
    runs in chunks, which keep their partial sums there (the first chunk
    starts from the constant, the last applies the elementwise op). Ops that
    do not fit are left alone.

    Integer contractions out(i32) += ext(a(i8)) * ext(b(i8)) (each input
    zero- or sign-extended; dlc-cpu-int8-conv's depthwise convolutions)
    are tiled like f32 ones: vectors of `a`'s bytes are loaded and widened
    to i32, `b`'s byte widened and broadcast, and muli + addi replace the
    fused multiply-add.

    With `int8-dot` naming the target's 4-byte dot product intrinsic
    (unsigned x signed bytes into i32 lanes, x86 VNNI's
    `llvm.x86.avx512.vpdpbusd.<bits>`), integer contractions
    out(i32) += ext(a(i8)) * ext(b(i8)), one operand zero-extended and the
    other sign-extended, whose innermost reduction loop has 4 steps and is
    the innermost index of both inputs (dlc-cpu-int8-conv's layout) are
    tiled the same way: each vector of `a` is lanes x 4 bytes, `b`'s 4
    bytes are broadcast to every lane, and one dot product instruction
    replaces 4 multiply-adds per lane. `a`'s index may also be a window at
    stride 2 (`2 * p + tap`): two loads, shuffled as i32 lanes. An integer
    contraction whose rows are `a`'s (a depthwise convolution) with `a`
    unsigned, `b` signed and an innermost filter window of at most 4 taps
    (`a` at `stride * p + tap`, stride 1 or 2; `b` at `tap`) takes that
    window as the dot product's reduction: one masked load per vector from
    its first tap, a byte shuffle giving each lane its own taps (x86
    vpermb with AVX-512 VBMI), and `b`'s taps zero-padded to 4 bytes.
    With `int8-dot-signed` (AArch64's `sdot`) both operands must be
    sign-extended instead, and window dot products need a signed `a`.
    With `int8-dot-pairs` the intrinsic is a multiply of 16-bit pairs
    (`llvm.x86.avx2.pmadd.wd`, SSE2's `llvm.x86.sse2.pmadd.wd`): each dot
    product splits both byte vectors into their even and odd bytes as
    16-bit lanes and adds two pair products, exactly (pmaddubsw's 16-bit
    sums would saturate).
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", "256",
           "SIMD register width in bits">,
    Option<"vectorRegisters", "vector-registers", "int64_t", "0",
           "SIMD registers the target has (32: 8 rows per block, else 4; "
           "0: 32 at 512 bits, else 16)">,
    Option<"chunkBytes", "chunk-bytes", "int64_t", "65536",
           "Most operand bytes one block reads over a chunk of reduction "
           "steps">,
    Option<"int8Dot", "int8-dot", "std::string", "\"\"",
           "The LLVM intrinsic of a 4-byte unsigned x signed dot product "
           "on vectors of vector-bits (empty: none)">,
    Option<"int8DotSigned", "int8-dot-signed", "bool", "false",
           "The int8-dot intrinsic multiplies signed by signed bytes "
           "(AArch64 sdot), not unsigned by signed">,
    Option<"windowDot", "window-dot", "bool", "true",
           "Depthwise windows as dot products (each lane's taps gathered by "
           "a byte shuffle across the whole vector: worth it only with an "
           "instruction for it, AVX-512 VBMI's vpermb, SSSE3's pshufb or "
           "NEON's tbl on 128 bits)">,
    Option<"twoVectorPermute", "two-vector-permute", "bool", "true",
           "One instruction takes the even lanes of two vectors (AVX-512, "
           "SSE and NEON on 128 bits). Without it (AVX2) a stride-2 input "
           "read one vector per row (depthwise convolutions, pooling) is "
           "split into its even and odd columns once instead of shuffled "
           "per tap">,
    Option<"int8DotPairs", "int8-dot-pairs", "bool", "false",
           "The int8-dot intrinsic multiplies pairs of 16-bit lanes into "
           "32-bit sums (x86 pmaddwd); each 4-byte dot product is two of "
           "them, on the operands' even and odd bytes">,
  ];
  let dependentDialects = ["mlir::vector::VectorDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::affine::AffineDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

def EmulateWideInt : Pass<"dlc-emulate-wide-int", "mlir::ModuleOp"> {
  let summary = "GPU kernels without Int64: 64-bit integers as 32-bit pairs";
  let description = [{
    The Vulkan baseline has no 64-bit integers, yet ONNX moves int64
    tensors (indices, shapes) everywhere. This pass rewrites i64 values,
    arithmetic, buffers, loads and stores and `gpu.func` signatures of
    kernels into pairs of i32 (`vector<2xi32>`), in one conversion so that
    no value is left half converted. Buffers keep their 8-byte elements.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::vector::VectorDialect",
                           "mlir::memref::MemRefDialect"];
}

def WidenNarrowInt : Pass<"dlc-widen-narrow-int", "mlir::ModuleOp"> {
  let summary = "Compute 8- and 16-bit integer arithmetic in 32 bits";
  let description = [{
    For GPU targets without 8/16-bit integer arithmetic: every arith op on
    2- to 31-bit integers gets explicitly extended operands (zero extension
    for unsigned ops, sign extension otherwise), computes in i32 and
    truncates its result. Loads, stores, extensions and truncations stay.
    A thread's private buffer (`memref.alloca`, default or Function
    storage) of narrow integers becomes an i32 buffer: stores zero-extend,
    loads truncate.

    With `native-int8` (targets with the Int8 capability and 8-bit
    storage), 8-bit integers stay as they are and only the other narrow
    widths widen (int4 and int16 values that would otherwise live unmasked
    in wider registers).
  }];
  let options = [
    Option<"nativeInt8", "native-int8", "bool", /*default=*/"false",
           "8-bit integers are native: widen only other narrow widths">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect"];
}

def FillHalo : Pass<"dlc-fill-halo", "mlir::func::FuncOp"> {
  let summary = "Fill a padded copy's halo only, not the part the copy overwrites";
  let description = [{
    Where a buffer is filled whole with one value (a `linalg.fill`, or a
    `linalg.generic` yielding one value) and the next op touching it
    overwrites a unit-stride subview of it whole (all loops parallel, its
    output read by nothing and not among its inputs), the fill is replaced
    by fills of the rest of the buffer: per dim, the slab before and the
    slab after the subview's range, within the subview's range along the
    dims before. Bufferized padded tiles (a convolution's or pooling
    window's `tensor.pad`) have this form. Buffers with other uses between
    the two, in other blocks, or of dynamic shape are left alone.
  }];
  let dependentDialects = ["mlir::affine::AffineDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::memref::MemRefDialect"];
}

def CPUScratch : Pass<"dlc-cpu-scratch", "mlir::func::FuncOp"> {
  let summary = "CPU kernels: heap temporaries in a per-thread scratch buffer";
  let description = [{
    Replaces every `memref.alloc` of a bufferized `dlc.kernel` function
    with a `memref.view` into a new last argument, the scratch buffer
    (`memref<Nxi8>`), and drops the deallocations. Offsets are static:
    program order, 64-byte aligned, the branches of an `scf.if` sharing
    theirs, a loop body reusing its own every iteration (a temporary
    yielded out of a loop iteration is an error). The kernel's scratch
    size N is recorded as the `dlc.scratch_size` attribute; kernels
    without heap temporaries are left alone.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

def CPULowerWorkgroups : Pass<"dlc-cpu-lower-workgroups", "mlir::ModuleOp"> {
  let summary = "CPU kernels: run workgroups [begin, end) of the grid";
  let description = [{
    Appends `begin` and `end` (index) arguments to every bufferized
    `dlc.kernel` function and replaces its workgroup `scf.forall` with an
    `scf.for` over the linear workgroup ids [begin, end), delinearized
    x-fastest. A kernel without a forall has a grid of one workgroup.
  }];
  let dependentDialects = ["mlir::scf::SCFDialect",
                           "mlir::affine::AffineDialect",
                           "mlir::arith::ArithDialect"];
}

def GPUBF16Storage : Pass<"dlc-gpu-bf16-storage", "mlir::ModuleOp"> {
  let summary = "GPU kernels without bf16 hold bf16 buffers as 16-bit "
                "integers";
  let description = [{
    For Vulkan, whose SPIR-V has no bf16 type. Runs after
    `dlc-legalize-math` has turned every bf16 conversion into integer
    operations on the bits (`expand-bf16-conversions`) and bf16 arithmetic
    has been emulated in f32: every memref of bf16 in a `gpu.func` (its
    arguments included) becomes one of i16 with the same bytes, loads and
    stores move i16, and the bitcasts between bf16 and i16 next to them
    fold away. A bf16 value still computed with stays bf16, and the
    target's element-type check names the kernel.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def CPUBF16Memory : Pass<"dlc-cpu-bf16-memory", "mlir::ModuleOp"> {
  let summary = "CPU kernels: masked vector loads and stores of bf16 move "
                "16-bit integers";
  let description = [{
    Runs on the LLVM dialect, for targets without bf16 conversion
    instructions (x86 without AVX512-BF16, where dlc-legalize-math has
    already turned every conversion into integer operations). LLVM's x86
    legalization of a masked load or store of a bf16 vector widens it to
    f32 and rounds it back through a call of __truncsfbf2, which a kernel
    cannot import; the same bits moved as i16 need no rounding. Pointers
    are opaque, so only the value's type changes (a bitcast on each side).
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def NarrowIndexDivision : Pass<"dlc-narrow-index-division"> {
  let summary = "32-bit targets: index divisions and remainders in i32";
  let description = [{
    Kernels compute indices in `index`, 64 bits wide on every target. On a
    target with 32-bit pointers, LLVM divides a 64-bit value by a constant
    only through a library call (ARMv7's `__aeabi_uldivmod`, from libgcc),
    which a kernel cannot import: the runtime's dlopen refuses it. There,
    every index value fits in 32 bits (it indexes memory of at most 4 GiB),
    so this pass computes each index division and remainder (unsigned,
    signed, floor and ceiling) in i32 between casts, which LLVM turns into a multiply and
    shifts. Runs after affine lowering (whose delinearizations make most
    of them) and before the conversion to LLVM.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def CPUKernelEntry : Pass<"dlc-cpu-kernel-entry", "mlir::ModuleOp"> {
  let summary = "CPU kernels: add the C ABI entry point of each kernel";
  let description = [{
    Runs on the LLVM dialect. For each kernel `@k` (lowered with the bare
    pointer calling convention), renames it `@k.impl` with internal linkage
    and adds `void @k(void *const *bindings, uint32_t begin, uint32_t end,
    void *scratch)`, the `dlcx_cpu_kernel_fn` of
    runtime/include/dlc/artifact_format.h. `scratch` is passed on to
    kernels with a `dlc.scratch_size` (their last parameter), ignored by
    the others. A kernel with `dlc.run_if = [i, v]` is called only when
    the first byte of buffer `i` is nonzero (v = 1) or zero (v = 0).
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

#endif // DLC_CODEGEN_PASSES_TD
