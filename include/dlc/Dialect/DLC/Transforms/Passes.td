//===- Passes.td - dlc dispatch and host passes ------------*- tablegen -*-===//

#ifndef DLC_DIALECT_DLC_TRANSFORMS_PASSES_TD
#define DLC_DIALECT_DLC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FormDispatches : Pass<"dlc-form-dispatches", "mlir::func::FuncOp"> {
  let summary = "Group linalg/tensor ops into dlc.dispatch regions (kernels)";
  let description = [{
    Implements the fusion policy of docs/fusion.md. Every compute op starts
    in a group of its own; then
      1. an elementwise op joins the group of a producer whose single result
         it is the only user of (epilogue fusion: bias, activation, residual
         add, requantization, casts);
      2. a cheap op (elementwise, fill, pad, transpose, broadcast) whose
         users all sit in one group joins that group (prologue fusion),
         unless it is marked `dlc.materialize` (a layout repack its users
         must read from memory);
      3. a group without a convolution/contraction joins the group that uses
         all of its results (softmax and normalization chains).
    A group holds at most one convolution or contraction. Each group becomes
    one `dlc.dispatch` region whose operands are everything the group reads
    from outside (splat constants, `tensor.empty` and fills of constants
    are cloned in).
  }];
  let dependentDialects = ["::dlc::DLCDialect"];
  let statistics = [
    Statistic<"numDispatches", "dispatches", "Number of dispatch regions">,
    Statistic<"numFusedOps", "fused-ops", "Ops placed in dispatch regions">,
  ];
}

def CPUInt8Conv : Pass<"dlc-cpu-int8-conv", "mlir::func::FuncOp"> {
  let summary = "CPU: integer convolutions in the forms the register tiler vectorizes";
  let description = [{
    Rewrites the 2-D integer convolution the ONNX lowering writes
    (ConvInteger, QLinearConv) when its filter and filter zero points are
    constants and the input's zero point is a constant or a scalar tensor
    computed at run time (DynamicQuantizeLinear's). The zero points leave
    the reduction: with w' = w - w_zp, sum (x - z) * w' = sum x * w' - z *
    sum w', the last term a per-channel constant (times z read at run time
    where z is not constant) that a generic adds to the result (read back
    in its original layout, or in (N, M, OH, OW) when the one user of the
    result is the reshape to it). Filters whose w' leave the signed byte
    (uint8 filters with a zero point far from 128) are centred per output
    channel, w' = w'' + o, which adds o times the input's window sums: only
    in the dot-product layouts below, which compute those sums (a product
    with a filter of ones); other layouts leave such convolutions alone.

    With `dot-products` (4-byte unsigned x signed dot products into 32-bit
    lanes, x86 VNNI, AArch64 usdot; with `signed-dot`, signed x signed,
    AArch64 sdot), a convolution of one group gets 4 input channels
    adjacent in both operands: the input is repacked by an elementwise
    generic marked `dlc.materialize` to (N, C / 4, H, W, 4) unsigned bytes
    (signed ones with `signed-dot`; the other kind gets its sign bit
    flipped, i.e. +/- 128, and z moves with it; channels past C are
    zero-padded), and the filter is packed at compile time. When a row of output pixels fills vectors of `lanes`
    (at least two, 80% used) and the columns have stride 1, the convolution
    writes NCHW with loops (n, f, oh, ow, c/4, kh, kw, k) and the filter is
    (F, C / 4, KH, KW, 4); otherwise it writes channels-last
    (N, OH, OW, F' / fb, fb) with loops (n, oh, ow, block, lane, c/4, kh,
    kw, k), the filter (F' / fb, C / 4, KH, KW, fb, 4), F padded with zero
    filters to F', a multiple of `lanes`, and fb = 2 * lanes where it
    divides F' (else lanes). Either way the 4 adjacent channels (k) are the
    innermost reduction, which dlc-cpu-register-tile turns into dot
    product instructions.

    Every other convolution (depthwise ones, and all of them without dot
    products) keeps its layout; its body becomes ext(x) * w' with w' a
    constant of signed bytes. Where the result's one user is the reshape to
    (N, M, OH, OW) and the input comes through the reshape that added the
    group dim, one-group and depthwise convolutions also drop their unit
    loops: loops (n, m, oh, ow, c, kh, kw) with the filter (M, C, KH, KW),
    or (n, g, oh, ow, kh, kw) with (G, KH, KW), writing (N, M, OH, OW), so
    that the correction and what follows fuse into their kernel as an
    epilogue; grouped ones keep their loops and the reshape after them.

    With dot products, integer matrix products (MatMulInteger,
    QLinearMatMul, QGemm) whose right operand is a constant (or the
    transpose of one) are laid out the same way: the left operand becomes
    (M, K / 4, 4) by a reshape (after zero-padding K, and flipping signed
    bytes), the right one is packed to (N' / fb, K / 4, fb, 4), and the
    product writes (M, N' / fb, fb), read back as (M, N) with the
    correction.
  }];
  let options = [
    Option<"lanes", "lanes", "int64_t", "16",
           "32-bit lanes in the target's vectors">,
    Option<"dotProducts", "dot-products", "bool", "false",
           "The target has 4-byte unsigned x signed dot products">,
    Option<"signedDot", "signed-dot", "bool", "false",
           "With dot-products: they multiply signed by signed bytes "
           "(AArch64 sdot): activations are repacked as signed bytes">,
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::tensor::TensorDialect"];
  let statistics = [
    Statistic<"numRewritten", "rewritten", "Integer convolutions rewritten">,
  ];
}

def ConstantColumnsLast : Pass<"dlc-constant-columns-last", "mlir::func::FuncOp"> {
  let summary = "CPU: a contraction's constant operand laid out with the output's columns innermost";
  let description = [{
    CPU kernels vectorize a contraction along the output's innermost dim,
    loading vectors of the input that dim indexes. For a `linalg.generic`
    (or a `linalg.matmul` / `linalg.batch_matmul`, generalized first: a
    Gemm with transB lowers to one) with two inputs and a reduction whose
    output's innermost dim (of at least `lanes` iterations) indexes only
    one input, and that input keeps a reduction as its innermost dim (Gemm
    with transB, the input and recurrence weights of LSTM and GRU), and the
    input is an f32 constant (also through static slices and reshapes of
    one): the constant is transposed at compile time so that the output's
    columns are its innermost dim, and the op reads it through the permuted
    indexing map. Every product and sum stays as it was. A matrix-vector
    product (one output row) over a weight of more than 512 KiB is left
    alone: read from memory, whole rows of the reduction stream faster.
  }];
  let options = [
    Option<"lanes", "lanes", "int64_t", "16",
           "f32 lanes in the target's vectors (fewer columns: left alone)">,
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::arith::ArithDialect"];
  let statistics = [
    Statistic<"numRewritten", "rewritten", "Constant operands laid out anew">,
  ];
}

def TransposeIntoMatvec : Pass<"dlc-transpose-into-matvec", "mlir::func::FuncOp"> {
  let summary = "CPU: a matrix-vector product reads a transposed operand as stored";
  let description = [{
    For a `linalg.generic`, `linalg.matmul` or `linalg.batch_matmul`
    (generalized first) with two inputs and a reduction, one of whose
    inputs is a `linalg.transpose` with no other use (possibly through a
    `tensor.collapse_shape` that merges dims the transpose keeps together,
    such as a unit batch dim before a `batch_matmul`), and whose parallel
    loops that this input does not index all have one iteration (one
    output row: a decoder's attention scores, q x K^T at one query): the
    product reads the transpose's input through the permuted indexing map
    and the transpose goes, so that no kernel copies the operand first.
    Each output is then a dot product along the stored rows. Products with
    several rows are left alone.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
  let statistics = [
    Statistic<"numRewritten", "rewritten", "Transposes read in place">,
  ];
}

def EpilogueThroughReshape : Pass<"dlc-epilogue-through-reshape", "mlir::func::FuncOp"> {
  let summary = "Elementwise consumers of an expanded contraction result collapse to its shape";
  let description = [{
    A MatMul on [batch, tokens, features] becomes a 2-D contraction whose
    result is expanded back (`tensor.expand_shape`) before its bias Add,
    activation or residual Add read it; dispatch formation does not fuse an
    elementwise consumer through that reshape, so each such consumer was a
    kernel of its own. For an elementwise `linalg.generic` that reads the
    expanded result of an op with a reduction loop, this pass collapses the
    generic's loops to the contraction's shape (its other operands through
    `tensor.collapse_shape`) and expands its result instead (upstream's
    fold of a reshape producer by collapsing), so that dispatch formation
    makes it the contraction's epilogue.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def ConvChannelsLast : Pass<"dlc-conv-channels-last", "mlir::func::FuncOp"> {
  let summary = "CPU: convolutions on small images vectorize along output channels";
  let description = [{
    A CPU kernel vectorizes a convolution along its output pixels; on small
    images (7x7, 14x14) a row of pixels fills a vector badly. This pass
    rewrites such a 2-D f32 `linalg.conv_2d_nchw_fchw` whose filter is a
    constant so that it vectorizes along output channels instead: the
    filter constant is transposed at compile time to (C, KH, KW, F), the
    convolution writes a channels-last (N, OH, OW, F) tensor, and an
    elementwise transpose back to (N, F, OH, OW) follows, which fusion
    folds into the convolution's epilogue. A convolution is rewritten when
    its pixels (a row of output pixels; all of them for 1x1 kernels) fill
    vectors of `lanes` lanes worse than its output channels do.
  }];
  let options = [
    Option<"lanes", "lanes", "int64_t", "16",
           "f32 lanes in the target's vectors">,
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::tensor::TensorDialect"];
  let statistics = [
    Statistic<"numRewritten", "rewritten", "Convolutions made channels-last">,
  ];
}

def FoldConstants : Pass<"dlc-fold-constants", "mlir::func::FuncOp"> {
  let summary = "Evaluate elementwise ops on constants at compile time";
  let description = [{
    An elementwise `linalg.generic` whose inputs are all constants (the
    per-channel scale and shift of an inference BatchNormalization, from
    its four parameter vectors) would otherwise be recomputed by every
    kernel it fuses into, per output element (a square root and a division
    for each pixel). This pass computes it once: every body op is folded on
    constant attributes element by element, and the op becomes a constant.
    Only results of no more bytes than their tensor inputs together (no
    broadcast into a big tensor, no int8 weights dequantized to f32: the
    artifact would grow) and of at most `max-elements` elements are
    folded; an op a folder cannot evaluate is left alone. Splat constant
    inputs of any `linalg.generic` (an all-zero tensor compared against,
    a reduction's constant operand) become scalar constants in its body,
    so that no kernel holds a constant array (GPU kernels cannot).
  }];
  let options = [
    Option<"maxElements", "max-elements", "int64_t", "65536",
           "Largest result folded, in elements">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::tensor::TensorDialect"];
  let statistics = [
    Statistic<"numFolded", "folded", "Ops evaluated at compile time">,
    Statistic<"numSplatsInlined", "splats-inlined",
              "Ops whose splat constant inputs became scalars">,
  ];
}

def ConcatInPlace : Pass<"dlc-concat-in-place", "mlir::func::FuncOp"> {
  let summary = "Concats become places in memory instead of copy kernels";
  let description = [{
    A dispatch that only concatenates its operands (fire modules, FPN
    necks, channel splits joined again) is a kernel that copies every byte
    once more. When each operand is one contiguous range of the result
    (every dim before the concatenated one has size 1), is computed by
    another dispatch (or is such a concat itself), is returned by nothing
    and is part of no other concat, and when each operand starts at a
    multiple of `alignment` bytes of the result, the dispatch becomes a
    `dlc.concat`: the memory planner puts the operands' buffers inside the
    result's, so their kernels write the result in place.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", "64",
           "Bytes every operand's start in the result must be a multiple "
           "of (the target's tensor alignment)">,
  ];
  let dependentDialects = ["::dlc::DLCDialect"];
  let statistics = [
    Statistic<"numConcats", "concats", "Concat kernels placed in memory">,
  ];
}

def SliceInPlace : Pass<"dlc-slice-in-place", "mlir::func::FuncOp"> {
  let summary = "Contiguous slices become views instead of copy kernels";
  let description = [{
    A dispatch that only takes an `extract_slice` of its operand (a channel
    split, one of the Q, K, V of a fused projection) is a kernel that
    copies the slice. When the slice is one contiguous range of the
    operand (static, unit strides, whole trailing dims after at most one
    partial dim, size-1 dims before it), starts at a multiple of
    `alignment` bytes, the operand is not a constant and the slice is not
    a graph output nor placed in a `dlc.concat` (run after
    dlc-concat-in-place), the dispatch becomes a `dlc.view`: the memory planner
    places the slice inside the operand's buffer, so its consumers read the
    operand in place.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", "64",
           "Bytes the slice's start must be a multiple of (the target's "
           "tensor alignment)">,
  ];
  let dependentDialects = ["::dlc::DLCDialect"];
  let statistics = [
    Statistic<"numSlices", "slices", "Slice kernels turned into views">,
  ];
}

def OutlineDispatches : Pass<"dlc-outline-dispatches", "mlir::ModuleOp"> {
  let summary = "Turn each dlc.dispatch into a kernel function + dlc.launch";
  let description = [{
    Each `dlc.dispatch` becomes a private function marked `dlc.kernel`,
    named after its position and the op that produces its result (for
    example `main_k3_conv_2d_nchw_fchw`), and the region is replaced by a
    `dlc.launch` of it. A dispatch's `dlc.run_if` moves to its kernel
    (operands become the kernel's first arguments, in order).
  }];
  let dependentDialects = ["::dlc::DLCDialect", "mlir::func::FuncDialect"];
}

def PredicateDispatches : Pass<"dlc-predicate-dispatches", "mlir::func::FuncOp"> {
  let summary = "Kernels of a branch on a run-time condition run only when it is taken";
  let description = [{
    An If on a condition computed at run time, and each iteration of a Loop
    whose condition is, is compiled as branches (`dlc.branch`: id and arm)
    whose values reach the rest of the program only through the ops that
    select them (`dlc.selects`: the Where of an If's outputs and a Loop's
    carried values, the And of a Loop's condition). A dispatch is
    predicated when every use of its results, followed through ops of its
    own branch (inside and between dispatches) and through the host ops that
    only place values (reshapes, `dlc.view`, `dlc.concat`), ends at a selecting op of
    that branch in the input the condition discards when the arm is not
    taken: the condition becomes an extra operand and `dlc.run_if = [operand
    index, value]` tells code generation to return at once when the operand
    does not hold the value. The kernel then writes nothing, and what reads
    its results either is skipped too or ignores them. A dispatch that does
    not pass the check runs as before (both arms are safe to compute). The
    condition must be computed before the dispatch.

    The selecting op must be a `linalg.generic` whose first input is the
    condition and whose body yields `arith.select` of its first three
    inputs (Where) or `arith.andi` of its first two (And, arm 1 only).
  }];
  let dependentDialects = ["::dlc::DLCDialect"];
}

def SparseContractions : Pass<"dlc-sparse-contractions", "mlir::func::FuncOp"> {
  let summary = "CPU: convolutions and matrix products over sparse constant weights read only their kept inputs";
  let description = [{
    A `linalg.conv_2d_nchw_fchw` with an f32 constant filter, stride and
    dilation 1 and static shapes, whose output channels come in groups of
    `rows`: for each group, the (input channel, tap) pairs where any of its
    filters is nonzero (the union, so that the group's rows share one
    list). When the cost model predicts the sparse kernel under `maxRatio`
    of the dense one's time: (stepCost x s x F x C / u + outputCost x F +
    inputCost x C) / (F x C + outputCost x F + inputCost x C), s the share
    of (group, input) pairs kept, C the reduction, stepCost what a kept
    pair costs against a dense multiply-add, outputCost and inputCost what
    writing an output element and reading an input element of a pixel
    cost in them, u the share of vector lanes at work (1, or for a window
    along the output's rows of `columns` lanes; a strided window's u also
    divided by 2.5, as measured); or with `force` whenever
    a pair is dropped, the convolution becomes a `linalg.generic`. A 1x1
    filter: over (n, f, j, p), pixels collapsed, out[n, f, p] +=
    w[f, j] * x[n, idx[f, j + 1], p], `x` read by `tensor.extract`, with
    the compressed filter `w` [F, J] and the table `idx` [F, J + 1] (i32:
    per row its group's count of kept channels, then the channels, padded
    to J with channel 0 and weight 0) as constants. A larger window (any
    padding already in its input): x flattened per image, out[n, f, y, x]
    += w[f, j] * x[n, idx[f, j + 1] + y * W + x], each kept (channel, tap)
    the offset c * H * W + kh * W + kw (H, W the input's). A stride S > 1
    reads x's S x S phases instead (a generic of its own, marked
    dlc.materialize: x[n, c, S * y + py, S * x + px] at phase (py, px)),
    tap (kh, kw) at phase (kh mod S, kw mod S), offset (kh / S, kw / S).
    The op carries
    `dlc.sparse_rows = rows`; dlc-cpu-sparse-tile writes its loop nest.
    A `linalg.matmul` x[M, K] * w with a constant f32 w ([K, N], or [N, K]
    read transposed) and N a multiple of `columns` gets the same in its
    own layout: groups of `columns` output columns (the CPU kernel's
    vectors), on the output seen as [M, N / columns, columns]:
    out[m, g, l] += x[m, idx[g, j + 1]] * w[g, j, l] with w compressed to
    [N / columns, J, columns], the table [N / columns, J + 1], and
    `dlc.sparse_rows = columns`. Any lowering of the generic computes the
    same sums without the dropped zeros.
  }];
  let options = [
    Option<"rows", "rows", "int64_t", "4",
           "Output channels that share one list of input channels">,
    Option<"columns", "columns", "int64_t", "16",
           "Matrix products: output columns that share one list (the CPU's f32 lanes)">,
    Option<"force", "force", "bool", "false",
           "Rewrite every candidate with at least one dropped pair">,
    Option<"stepCost", "step-cost", "double", "1.0",
           "What a kept (group, channel) pair costs against a dense one">,
    Option<"outputCost", "output-cost", "double", "0.0",
           "What writing one output element costs, in multiply-adds">,
    Option<"inputCost", "input-cost", "double", "0.0",
           "What reading one input element costs, in multiply-adds">,
    Option<"maxRatio", "max-ratio", "double", "0.8",
           "Rewrite (without force) when the predicted ratio is below this">,
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::tensor::TensorDialect"];
  let statistics = [
    Statistic<"numSparse", "sparse", "Convolutions made sparse">,
  ];
}

#endif // DLC_DIALECT_DLC_TRANSFORMS_PASSES_TD
