//===- Passes.td - dlc conversion passes -------------------*- tablegen -*-===//

#ifndef DLC_CONVERSION_PASSES_TD
#define DLC_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertONNXToLinalg : Pass<"dlc-convert-onnx-to-linalg", "mlir::ModuleOp"> {
  let summary = "Give ONNX nodes meaning: onnx.node to linalg/tensor/arith/math";
  let description = [{
    Converts every `onnx.node` of every function with the handler registered
    for its (domain, op type) and opset version, in program order, so that
    each handler sees converted, statically shaped inputs. Shape subgraphs
    (Shape -> Gather -> Concat -> Reshape and friends) fold to constants on
    the way, so the result is fully static.

    Unsigned ONNX element types become signless; the original type of
    function arguments and results is kept in a `dlc.element_type`
    attribute. int4/uint4 arguments and results are packed two per byte
    (low nibble first, as ONNX stores them): the argument becomes its bytes,
    unpacked by a linalg.generic, and the result is packed by one;
    `dlc.packed_shape` keeps their ONNX dims.

    Fails, after reporting every node it cannot convert, when an op has no
    handler, the opset is outside what dlc knows, or a handler rejects the
    node; each diagnostic names the node, op type, opset and reason.
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect",
    "mlir::linalg::LinalgDialect",
    "mlir::math::MathDialect",
    "mlir::scf::SCFDialect",
    "mlir::tensor::TensorDialect",
  ];
}

def FoldQDQ : Pass<"dlc-fold-qdq", "mlir::func::FuncOp"> {
  let summary = "QDQ convolutions and matrix products to QLinearConv, QLinearMatMul and QGemm: quantized models run as integer kernels";
  let description = [{
    Runs on `onnx.node` ops before dlc-convert-onnx-to-linalg. Quantization
    tools (ONNX Runtime's `quantize_static`, TensorRT-style exporters)
    write quantized convolutions as float Conv nodes between
    DequantizeLinear and QuantizeLinear nodes:

      y = QuantizeLinear(Conv(DequantizeLinear(xq, sx, zx),
                              DequantizeLinear(wq, sw, zw),
                              DequantizeLinear(bq, sb, 0)), sy, zy)

    which, taken literally, convolves in f32 and keeps f32 activations
    between kernels. This pass rewrites the pattern to the integer operator
    it stands for, `QLinearConv(xq, sx, zx, wq, sw, zw, sy, zy, bq)`, with
    the Conv's attributes. It applies when every scale and zero point of x
    and y is per tensor, the weights' are per tensor or per output channel
    (axis 0), the Conv result feeds only the QuantizeLinear, and the bias
    (if any) is int32 with zero point 0 and scale sx * sw (checked on the
    constants, to a relative 1e-6). Anything else is left as it is.

    Likewise QuantizeLinear(MatMul(DQ(a), DQ(b))) becomes QLinearMatMul
    (b a matrix, per tensor or per output column) and
    QuantizeLinear(Gemm(DQ(a), DQ(b), DQ(c))) ONNX Runtime's
    com.microsoft QGemm with the Gemm's transA, transB and alpha (b per
    tensor or per output column, c an int32 bias as above, beta 1).

    A Conv of dequantized 8-bit input and weights whose result is not
    quantized again (TensorRT-style QDQ, with QuantizeLinear only before
    each convolution's inputs, or a result the matches above leave)
    becomes `ConvInteger(xq, wq, zx, zw)`, cast to f32, times sx * sw[m]
    and plus the bias, when the scales, zero points and bias are constants
    (the bias a float constant or the DequantizeLinear of constants), and
    the Conv is 2-D. Likewise such a MatMul (a per tensor, b a matrix per
    tensor or per output column) becomes `MatMulInteger`, cast, times
    sa * sb[n].

    And `Mul(DequantizeLinear(q, 1, z), c)` with a constant `c` that
    varies along axis 1 only becomes `DequantizeLinear(q, c, z)` per axis
    1 (bit-exact), after the convolutions have taken their inputs: the
    dequantization of `dlc-compile --quantize`'s per-channel activations,
    which is one op to fuse instead of two.

    The first pass of the legalize pipeline, for every target.
  }];
}

def FoldBlockedDequantize
    : Pass<"dlc-fold-blocked-dequantize", "mlir::func::FuncOp"> {
  let summary = "MatMul of a blocked DequantizeLinear of 4- or 8-bit constants to com.microsoft.MatMulNBits";
  let description = [{
    Runs on `onnx.node` ops before dlc-convert-onnx-to-linalg, for every
    target. Opset 21's DequantizeLinear with `block_size` dequantizes
    blocks of a tensor along `axis` with a scale (and zero point) each;
    ONNX Runtime's 4-bit weight quantizer writes its QDQ format that way:

      Y = MatMul(A, DequantizeLinear(W, scale, zero_point,
                                     axis = 0, block_size = B))

    with W a constant [K, N] of int4/uint4 (or int8/uint8), scale and
    zero_point constants [ceil(K / B), N]. This pass rewrites it to
    `com.microsoft.MatMulNBits(A, W', scale', zero_point')` with W packed
    as MatMulNBits stores it ([N, blocks, B * bits / 8], unsigned fields,
    low first; signed values and their zero points moved up by
    2^(bits-1)), so that the kernel reads the packed weights and
    dequantizes them next to the multiply. It applies when B is a power of
    two of at least 16 and A's last dim is K (or not known yet: ONNX's
    shape inference types no blocked 4-bit dequantization, nor what
    follows it; MatMulNBits' conversion checks A). Anything else is left
    as it is (a 4-bit constant that reaches a kernel boundary is then an
    error).
  }];
  let statistics = [
    Statistic<"numFolded", "folded", "MatMuls rewritten to MatMulNBits">,
  ];
}

#endif // DLC_CONVERSION_PASSES_TD
