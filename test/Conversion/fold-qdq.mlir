// RUN: dlc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dlc-fold-qdq))' | FileCheck %s

// A QDQ convolution as quantize_static writes it: u8 activations, s8
// weights per output channel (axis 0), int32 bias with scale sx * sw.
// It becomes one QLinearConv on the quantized tensors, with the Conv's
// attributes and name; the DequantizeLinear nodes are gone.
// CHECK-LABEL: func.func @conv
// CHECK-SAME: (%[[XQ:.*]]: tensor<1x4x8x8xui8>)
// CHECK-NOT: "DequantizeLinear"
// CHECK-NOT: "Conv"
// CHECK: %[[Y:.*]] = onnx.node "QLinearConv" (%[[XQ]], %[[SX:.*]], %[[ZX:.*]], %[[WQ:.*]], %[[SW:.*]], %[[ZW:.*]], %[[SY:.*]], %[[ZY:.*]], %[[BQ:.*]]) {attrs = {kernel_shape = [3, 3], pads = [1, 1, 1, 1]}, name = "conv0", version = 10 : i64}
// CHECK-SAME: -> tensor<1x2x8x8xui8>
// CHECK-NOT: "QuantizeLinear"
// CHECK: return %[[Y]]
func.func @conv(%xq: tensor<1x4x8x8xui8>) -> tensor<1x2x8x8xui8> {
  %sx = arith.constant dense<0.5> : tensor<f32>
  %zx = arith.constant dense<3> : tensor<ui8>
  %wq = arith.constant dense<1> : tensor<2x4x3x3xi8>
  %sw = arith.constant dense<[0.25, 0.125]> : tensor<2xf32>
  %zw = arith.constant dense<0> : tensor<2xi8>
  %bq = arith.constant dense<[10, -20]> : tensor<2xi32>
  %sb = arith.constant dense<[0.125, 0.0625]> : tensor<2xf32>
  %zb = arith.constant dense<0> : tensor<2xi32>
  %sy = arith.constant dense<2.0> : tensor<f32>
  %zy = arith.constant dense<7> : tensor<ui8>
  %x = onnx.node "DequantizeLinear" (%xq, %sx, %zx) {version = 13 : i64} : (tensor<1x4x8x8xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4x8x8xf32>
  %w = onnx.node "DequantizeLinear" (%wq, %sw, %zw) {version = 13 : i64, attrs = {axis = 0 : i64}} : (tensor<2x4x3x3xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x4x3x3xf32>
  %b = onnx.node "DequantizeLinear" (%bq, %sb, %zb) {version = 13 : i64, attrs = {axis = 0 : i64}} : (tensor<2xi32>, tensor<2xf32>, tensor<2xi32>) -> tensor<2xf32>
  %c = onnx.node "Conv" (%x, %w, %b) {version = 11 : i64, name = "conv0", attrs = {kernel_shape = [3, 3], pads = [1, 1, 1, 1]}} : (tensor<1x4x8x8xf32>, tensor<2x4x3x3xf32>, tensor<2xf32>) -> tensor<1x2x8x8xf32>
  %y = onnx.node "QuantizeLinear" (%c, %sy, %zy) {version = 13 : i64} : (tensor<1x2x8x8xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x8x8xui8>
  return %y : tensor<1x2x8x8xui8>
}

// -----

// Not a QLinearConv: a bias whose scale is not sx * sw (the integer bias
// would mean something else), and a Conv whose float result is also
// returned. Both become ConvInteger and the dequantization of its sums
// (times sx * sw, plus the bias as floats: 10 * 0.5 and -20 * 0.5), which
// the QuantizeLinear reads as before.
// CHECK-LABEL: func.func @bias_scale
// CHECK-NOT: QLinearConv
// CHECK: %[[S:.*]] = onnx.node "ConvInteger" (%arg0, %{{.*}}, %{{.*}}, %{{.*}}) {version = 10 : i64} : (tensor<1x4x8x8xui8>, tensor<2x4x1x1xi8>, tensor<ui8>, tensor<i8>) -> tensor<1x2x8x8xi32>
// CHECK: %[[F:.*]] = onnx.node "Cast" (%[[S]]) {attrs = {to = 1 : i64}
// CHECK: %[[K:.*]] = arith.constant dense<1.250000e-01> : tensor<1x2x1x1xf32>
// CHECK: %[[M:.*]] = onnx.node "Mul" (%[[F]], %[[K]])
// CHECK: %[[B:.*]] = arith.constant dense<{{\[\[\[\[}}5.000000e+00]], {{\[\[}}-1.000000e+01]]]]> : tensor<1x2x1x1xf32>
// CHECK: %[[A:.*]] = onnx.node "Add" (%[[M]], %[[B]])
// CHECK: onnx.node "QuantizeLinear" (%[[A]],
// CHECK-LABEL: func.func @two_uses
// CHECK-NOT: QLinearConv
// CHECK: onnx.node "ConvInteger"
// CHECK: %[[M:.*]] = onnx.node "Mul"
// CHECK: %[[Y:.*]] = onnx.node "QuantizeLinear" (%[[M]],
// CHECK: return %[[Y]], %[[M]]
func.func @bias_scale(%xq: tensor<1x4x8x8xui8>) -> tensor<1x2x8x8xui8> {
  %sx = arith.constant dense<0.5> : tensor<f32>
  %zx = arith.constant dense<3> : tensor<ui8>
  %wq = arith.constant dense<1> : tensor<2x4x1x1xi8>
  %sw = arith.constant dense<0.25> : tensor<f32>
  %zw = arith.constant dense<0> : tensor<i8>
  %bq = arith.constant dense<[10, -20]> : tensor<2xi32>
  %sb = arith.constant dense<0.5> : tensor<f32>
  %zb = arith.constant dense<0> : tensor<i32>
  %sy = arith.constant dense<2.0> : tensor<f32>
  %zy = arith.constant dense<7> : tensor<ui8>
  %x = onnx.node "DequantizeLinear" (%xq, %sx, %zx) {version = 13 : i64} : (tensor<1x4x8x8xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4x8x8xf32>
  %w = onnx.node "DequantizeLinear" (%wq, %sw, %zw) {version = 13 : i64} : (tensor<2x4x1x1xi8>, tensor<f32>, tensor<i8>) -> tensor<2x4x1x1xf32>
  %b = onnx.node "DequantizeLinear" (%bq, %sb, %zb) {version = 13 : i64} : (tensor<2xi32>, tensor<f32>, tensor<i32>) -> tensor<2xf32>
  %c = onnx.node "Conv" (%x, %w, %b) {version = 11 : i64} : (tensor<1x4x8x8xf32>, tensor<2x4x1x1xf32>, tensor<2xf32>) -> tensor<1x2x8x8xf32>
  %y = onnx.node "QuantizeLinear" (%c, %sy, %zy) {version = 13 : i64} : (tensor<1x2x8x8xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x8x8xui8>
  return %y : tensor<1x2x8x8xui8>
}
func.func @two_uses(%xq: tensor<1x4x8x8xui8>) -> (tensor<1x2x8x8xui8>, tensor<1x2x8x8xf32>) {
  %sx = arith.constant dense<0.5> : tensor<f32>
  %zx = arith.constant dense<3> : tensor<ui8>
  %wq = arith.constant dense<1> : tensor<2x4x1x1xi8>
  %sw = arith.constant dense<0.25> : tensor<f32>
  %zw = arith.constant dense<0> : tensor<i8>
  %sy = arith.constant dense<2.0> : tensor<f32>
  %zy = arith.constant dense<7> : tensor<ui8>
  %x = onnx.node "DequantizeLinear" (%xq, %sx, %zx) {version = 13 : i64} : (tensor<1x4x8x8xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4x8x8xf32>
  %w = onnx.node "DequantizeLinear" (%wq, %sw, %zw) {version = 13 : i64} : (tensor<2x4x1x1xi8>, tensor<f32>, tensor<i8>) -> tensor<2x4x1x1xf32>
  %c = onnx.node "Conv" (%x, %w) {version = 11 : i64} : (tensor<1x4x8x8xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x8x8xf32>
  %y = onnx.node "QuantizeLinear" (%c, %sy, %zy) {version = 13 : i64} : (tensor<1x2x8x8xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x8x8xui8>
  return %y, %c : tensor<1x2x8x8xui8>, tensor<1x2x8x8xf32>
}

// -----

// TensorRT-style QDQ: only the convolution's inputs are quantized, its
// result goes on in float (a float bias, per-channel weights). It becomes
// ConvInteger, with the Conv's name and attributes, and the dequantization
// of its sums: times sx * sw[m], plus the bias. Left alone where a scale is
// not a constant (it would have to be read at run time).
// CHECK-LABEL: func.func @conv_float_out
// CHECK-NOT: "DequantizeLinear"
// CHECK: %[[S:.*]] = onnx.node "ConvInteger" (%arg0, %{{.*}}, %{{.*}}, %{{.*}}) {attrs = {kernel_shape = [3, 3], pads = [1, 1, 1, 1]}, name = "conv0", version = 10 : i64}
// CHECK: %[[F:.*]] = onnx.node "Cast" (%[[S]])
// CHECK: %[[K:.*]] = arith.constant dense<{{\[\[\[\[}}1.250000e-01]], {{\[\[}}6.250000e-02]]]]> : tensor<1x2x1x1xf32>
// CHECK: %[[M:.*]] = onnx.node "Mul" (%[[F]], %[[K]])
// CHECK: %[[B:.*]] = arith.constant dense<{{\[\[\[\[}}1.000000e+00]], {{\[\[}}-2.000000e+00]]]]> : tensor<1x2x1x1xf32>
// CHECK: %[[A:.*]] = onnx.node "Add" (%[[M]], %[[B]])
// CHECK: %[[R:.*]] = onnx.node "Relu" (%[[A]])
// CHECK: return %[[R]]
// CHECK-LABEL: func.func @conv_runtime_scale
// CHECK: onnx.node "DequantizeLinear"
// CHECK: onnx.node "Conv"
// CHECK-NOT: ConvInteger
func.func @conv_float_out(%xq: tensor<1x4x8x8xui8>) -> tensor<1x2x8x8xf32> {
  %sx = arith.constant dense<0.5> : tensor<f32>
  %zx = arith.constant dense<3> : tensor<ui8>
  %wq = arith.constant dense<1> : tensor<2x4x3x3xi8>
  %sw = arith.constant dense<[0.25, 0.125]> : tensor<2xf32>
  %zw = arith.constant dense<0> : tensor<2xi8>
  %b = arith.constant dense<[1.0, -2.0]> : tensor<2xf32>
  %x = onnx.node "DequantizeLinear" (%xq, %sx, %zx) {version = 13 : i64} : (tensor<1x4x8x8xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4x8x8xf32>
  %w = onnx.node "DequantizeLinear" (%wq, %sw, %zw) {version = 13 : i64, attrs = {axis = 0 : i64}} : (tensor<2x4x3x3xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x4x3x3xf32>
  %c = onnx.node "Conv" (%x, %w, %b) {version = 11 : i64, name = "conv0", attrs = {kernel_shape = [3, 3], pads = [1, 1, 1, 1]}} : (tensor<1x4x8x8xf32>, tensor<2x4x3x3xf32>, tensor<2xf32>) -> tensor<1x2x8x8xf32>
  %r = onnx.node "Relu" (%c) {version = 14 : i64} : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  return %r : tensor<1x2x8x8xf32>
}
func.func @conv_runtime_scale(%xq: tensor<1x4x8x8xui8>, %sx: tensor<f32>) -> tensor<1x2x8x8xf32> {
  %zx = arith.constant dense<3> : tensor<ui8>
  %wq = arith.constant dense<1> : tensor<2x4x3x3xi8>
  %sw = arith.constant dense<[0.25, 0.125]> : tensor<2xf32>
  %zw = arith.constant dense<0> : tensor<2xi8>
  %x = onnx.node "DequantizeLinear" (%xq, %sx, %zx) {version = 13 : i64} : (tensor<1x4x8x8xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4x8x8xf32>
  %w = onnx.node "DequantizeLinear" (%wq, %sw, %zw) {version = 13 : i64, attrs = {axis = 0 : i64}} : (tensor<2x4x3x3xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x4x3x3xf32>
  %c = onnx.node "Conv" (%x, %w) {version = 11 : i64, attrs = {kernel_shape = [3, 3], pads = [1, 1, 1, 1]}} : (tensor<1x4x8x8xf32>, tensor<2x4x3x3xf32>) -> tensor<1x2x8x8xf32>
  return %c : tensor<1x2x8x8xf32>
}

// -----

// The same for a MatMul whose result stays float: MatMulInteger, with the
// MatMul's name, its sums times sa * sb[n].
// CHECK-LABEL: func.func @matmul_float_out
// CHECK-NOT: "DequantizeLinear"
// CHECK: %[[S:.*]] = onnx.node "MatMulInteger" (%arg0, %{{.*}}, %{{.*}}, %{{.*}}) {name = "mm0", version = 10 : i64} : (tensor<2x3x4xui8>, tensor<4x2xi8>, tensor<ui8>, tensor<2xi8>) -> tensor<2x3x2xi32>
// CHECK: %[[F:.*]] = onnx.node "Cast" (%[[S]])
// CHECK: %[[K:.*]] = arith.constant dense<[1.250000e-01, 6.250000e-02]> : tensor<2xf32>
// CHECK: %[[M:.*]] = onnx.node "Mul" (%[[F]], %[[K]])
// CHECK: return %[[M]]
func.func @matmul_float_out(%aq: tensor<2x3x4xui8>) -> tensor<2x3x2xf32> {
  %sa = arith.constant dense<0.5> : tensor<f32>
  %za = arith.constant dense<3> : tensor<ui8>
  %bq = arith.constant dense<1> : tensor<4x2xi8>
  %sb = arith.constant dense<[0.25, 0.125]> : tensor<2xf32>
  %zb = arith.constant dense<0> : tensor<2xi8>
  %a = onnx.node "DequantizeLinear" (%aq, %sa, %za) {version = 13 : i64} : (tensor<2x3x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x3x4xf32>
  %b = onnx.node "DequantizeLinear" (%bq, %sb, %zb) {version = 13 : i64, attrs = {axis = 1 : i64}} : (tensor<4x2xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<4x2xf32>
  %y = onnx.node "MatMul" (%a, %b) {version = 13 : i64, name = "mm0"} : (tensor<2x3x4xf32>, tensor<4x2xf32>) -> tensor<2x3x2xf32>
  return %y : tensor<2x3x2xf32>
}

// -----

// A QDQ MatMul: u8 activations, s8 weights per output column (axis 1 of a
// (K, N) matrix). It becomes QLinearMatMul with the MatMul's name.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[AQ:.*]]: tensor<3x4xui8>)
// CHECK-NOT: "DequantizeLinear"
// CHECK: %[[Y:.*]] = onnx.node "QLinearMatMul" (%[[AQ]], {{.*}}) {name = "mm0", version = 10 : i64}
// CHECK-SAME: -> tensor<3x2xui8>
// CHECK-NOT: "QuantizeLinear"
// CHECK: return %[[Y]]
func.func @matmul(%aq: tensor<3x4xui8>) -> tensor<3x2xui8> {
  %sa = arith.constant dense<0.5> : tensor<f32>
  %za = arith.constant dense<3> : tensor<ui8>
  %bq = arith.constant dense<1> : tensor<4x2xi8>
  %sb = arith.constant dense<[0.25, 0.125]> : tensor<2xf32>
  %zb = arith.constant dense<0> : tensor<2xi8>
  %sy = arith.constant dense<2.0> : tensor<f32>
  %zy = arith.constant dense<7> : tensor<ui8>
  %a = onnx.node "DequantizeLinear" (%aq, %sa, %za) {version = 13 : i64} : (tensor<3x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<3x4xf32>
  %b = onnx.node "DequantizeLinear" (%bq, %sb, %zb) {version = 13 : i64, attrs = {axis = 1 : i64}} : (tensor<4x2xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<4x2xf32>
  %c = onnx.node "MatMul" (%a, %b) {version = 13 : i64, name = "mm0"} : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
  %y = onnx.node "QuantizeLinear" (%c, %sy, %zy) {version = 13 : i64} : (tensor<3x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<3x2xui8>
  return %y : tensor<3x2xui8>
}

// -----

// A QDQ Gemm with transB = 1 (weights per output row of the (N, K) matrix,
// axis 0) and an int32 bias of scale sa * sb: ONNX Runtime's QGemm, with the
// Gemm's attributes. A Gemm with beta != 1 scales its bias: left alone.
// CHECK-LABEL: func.func @gemm
// CHECK-SAME: (%[[AQ:.*]]: tensor<3x4xui8>)
// CHECK-NOT: "DequantizeLinear"
// CHECK-NOT: onnx.none
// CHECK: %[[Y:.*]] = onnx.node "QGemm" (%[[AQ]], {{.*}}) {attrs = {transB = 1 : i64}, domain = "com.microsoft", name = "fc", version = 1 : i64}
// CHECK-SAME: -> tensor<3x2xui8>
// CHECK: return %[[Y]]
func.func @gemm(%aq: tensor<3x4xui8>) -> tensor<3x2xui8> {
  %sa = arith.constant dense<0.5> : tensor<f32>
  %za = arith.constant dense<3> : tensor<ui8>
  %bq = arith.constant dense<1> : tensor<2x4xi8>
  %sb = arith.constant dense<[0.25, 0.125]> : tensor<2xf32>
  %zb = arith.constant dense<0> : tensor<2xi8>
  %cq = arith.constant dense<[10, -20]> : tensor<2xi32>
  %sc = arith.constant dense<[0.125, 0.0625]> : tensor<2xf32>
  %zc = arith.constant dense<0> : tensor<2xi32>
  %sy = arith.constant dense<2.0> : tensor<f32>
  %zy = arith.constant dense<7> : tensor<ui8>
  %a = onnx.node "DequantizeLinear" (%aq, %sa, %za) {version = 13 : i64} : (tensor<3x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<3x4xf32>
  %b = onnx.node "DequantizeLinear" (%bq, %sb, %zb) {version = 13 : i64, attrs = {axis = 0 : i64}} : (tensor<2x4xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x4xf32>
  %c = onnx.node "DequantizeLinear" (%cq, %sc, %zc) {version = 13 : i64, attrs = {axis = 0 : i64}} : (tensor<2xi32>, tensor<2xf32>, tensor<2xi32>) -> tensor<2xf32>
  %g = onnx.node "Gemm" (%a, %b, %c) {version = 13 : i64, name = "fc", attrs = {transB = 1 : i64}} : (tensor<3x4xf32>, tensor<2x4xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %y = onnx.node "QuantizeLinear" (%g, %sy, %zy) {version = 13 : i64} : (tensor<3x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<3x2xui8>
  return %y : tensor<3x2xui8>
}

// -----

// The classifier's input often comes from a Reshape to a computed shape,
// unranked until shape subgraphs fold: a Gemm's input has rank 2 anyway.
// CHECK-LABEL: func.func @gemm_unranked_input
// CHECK: onnx.node "QGemm"
// CHECK-SAME: (tensor<*xui8>, {{.*}}) -> tensor<*xui8>
func.func @gemm_unranked_input(%aq: tensor<*xui8>) -> tensor<*xui8> {
  %sa = arith.constant dense<0.5> : tensor<f32>
  %za = arith.constant dense<3> : tensor<ui8>
  %bq = arith.constant dense<1> : tensor<2x4xi8>
  %sb = arith.constant dense<0.25> : tensor<f32>
  %zb = arith.constant dense<0> : tensor<i8>
  %sy = arith.constant dense<2.0> : tensor<f32>
  %zy = arith.constant dense<7> : tensor<ui8>
  %a = onnx.node "DequantizeLinear" (%aq, %sa, %za) {version = 13 : i64} : (tensor<*xui8>, tensor<f32>, tensor<ui8>) -> tensor<*xf32>
  %b = onnx.node "DequantizeLinear" (%bq, %sb, %zb) {version = 13 : i64} : (tensor<2x4xi8>, tensor<f32>, tensor<i8>) -> tensor<2x4xf32>
  %g = onnx.node "Gemm" (%a, %b) {version = 13 : i64, name = "fc", attrs = {transB = 1 : i64}} : (tensor<*xf32>, tensor<2x4xf32>) -> tensor<*xf32>
  %y = onnx.node "QuantizeLinear" (%g, %sy, %zy) {version = 13 : i64} : (tensor<*xf32>, tensor<f32>, tensor<ui8>) -> tensor<*xui8>
  return %y : tensor<*xui8>
}

// -----

// CHECK-LABEL: func.func @gemm_beta
// CHECK: onnx.node "Gemm"
// CHECK-NOT: QGemm
func.func @gemm_beta(%aq: tensor<3x4xui8>) -> tensor<3x2xui8> {
  %sa = arith.constant dense<0.5> : tensor<f32>
  %za = arith.constant dense<3> : tensor<ui8>
  %bq = arith.constant dense<1> : tensor<2x4xi8>
  %sb = arith.constant dense<0.25> : tensor<f32>
  %zb = arith.constant dense<0> : tensor<i8>
  %cq = arith.constant dense<[10, -20]> : tensor<2xi32>
  %sc = arith.constant dense<0.125> : tensor<f32>
  %zc = arith.constant dense<0> : tensor<i32>
  %sy = arith.constant dense<2.0> : tensor<f32>
  %zy = arith.constant dense<7> : tensor<ui8>
  %a = onnx.node "DequantizeLinear" (%aq, %sa, %za) {version = 13 : i64} : (tensor<3x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<3x4xf32>
  %b = onnx.node "DequantizeLinear" (%bq, %sb, %zb) {version = 13 : i64} : (tensor<2x4xi8>, tensor<f32>, tensor<i8>) -> tensor<2x4xf32>
  %c = onnx.node "DequantizeLinear" (%cq, %sc, %zc) {version = 13 : i64} : (tensor<2xi32>, tensor<f32>, tensor<i32>) -> tensor<2xf32>
  %g = onnx.node "Gemm" (%a, %b, %c) {version = 13 : i64, name = "fc", attrs = {transB = 1 : i64, beta = 0.5 : f32}} : (tensor<3x4xf32>, tensor<2x4xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %y = onnx.node "QuantizeLinear" (%g, %sy, %zy) {version = 13 : i64} : (tensor<3x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<3x2xui8>
  return %y : tensor<3x2xui8>
}

// -----

// Left alone: weights dequantized along an axis beyond their rank (a fuzzed
// model reached the dim lookup with it; an assert in the checking build).
// CHECK-LABEL: func.func @axis_out_of_range
// CHECK: onnx.node "Conv"
// CHECK-NOT: QLinearConv
func.func @axis_out_of_range(%xq: tensor<1x4x8x8xui8>) -> tensor<1x2x8x8xui8> {
  %sx = arith.constant dense<0.5> : tensor<f32>
  %zx = arith.constant dense<3> : tensor<ui8>
  %wq = arith.constant dense<1> : tensor<2x4x3x3xi8>
  %sw = arith.constant dense<[0.25, 0.125]> : tensor<2xf32>
  %zw = arith.constant dense<0> : tensor<2xi8>
  %sy = arith.constant dense<2.0> : tensor<f32>
  %zy = arith.constant dense<7> : tensor<ui8>
  %x = onnx.node "DequantizeLinear" (%xq, %sx, %zx) {version = 13 : i64} : (tensor<1x4x8x8xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4x8x8xf32>
  %w = onnx.node "DequantizeLinear" (%wq, %sw, %zw) {version = 13 : i64, attrs = {axis = 7 : i64}} : (tensor<2x4x3x3xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x4x3x3xf32>
  %c = onnx.node "Conv" (%x, %w) {version = 11 : i64, attrs = {kernel_shape = [3, 3], pads = [1, 1, 1, 1]}} : (tensor<1x4x8x8xf32>, tensor<2x4x3x3xf32>) -> tensor<1x2x8x8xf32>
  %y = onnx.node "QuantizeLinear" (%c, %sy, %zy) {version = 13 : i64} : (tensor<1x2x8x8xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x8x8xui8>
  return %y : tensor<1x2x8x8xui8>
}

// -----

// Left alone: a Conv without its weight input and a MatMul with one input
// (this pass runs before the conversion handlers report the missing input;
// a fuzzed model reached the operand lookup with them).
// CHECK-LABEL: func.func @missing_inputs
// CHECK: onnx.node "Conv"
// CHECK: onnx.node "MatMul"
// CHECK-NOT: QLinear
func.func @missing_inputs(%xq: tensor<1x4x8x8xui8>, %aq: tensor<3x4xui8>) -> (tensor<1x2x8x8xui8>, tensor<3x4xui8>) {
  %sx = arith.constant dense<0.5> : tensor<f32>
  %zx = arith.constant dense<3> : tensor<ui8>
  %sy = arith.constant dense<2.0> : tensor<f32>
  %zy = arith.constant dense<7> : tensor<ui8>
  %x = onnx.node "DequantizeLinear" (%xq, %sx, %zx) {version = 13 : i64} : (tensor<1x4x8x8xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4x8x8xf32>
  %c = onnx.node "Conv" (%x) {version = 11 : i64, attrs = {kernel_shape = [3, 3], pads = [1, 1, 1, 1]}} : (tensor<1x4x8x8xf32>) -> tensor<1x2x8x8xf32>
  %y = onnx.node "QuantizeLinear" (%c, %sy, %zy) {version = 13 : i64} : (tensor<1x2x8x8xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x8x8xui8>
  %a = onnx.node "DequantizeLinear" (%aq, %sx, %zx) {version = 13 : i64} : (tensor<3x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<3x4xf32>
  %m = onnx.node "MatMul" (%a) {version = 13 : i64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %z = onnx.node "QuantizeLinear" (%m, %sy, %zy) {version = 13 : i64} : (tensor<3x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<3x4xui8>
  return %y, %z : tensor<1x2x8x8xui8>, tensor<3x4xui8>
}

// -----

// Left alone: a bias dequantized with an f16 scale (QLinearConv's bias
// takes f32 scales; reading the f16 constant as f32 was an assert, found by
// the fuzzer).
// CHECK-LABEL: func.func @f16_bias_scale
// CHECK: onnx.node "Conv"
// CHECK-NOT: QLinearConv
func.func @f16_bias_scale(%xq: tensor<1x4x8x8xui8>) -> tensor<1x2x8x8xui8> {
  %sx = arith.constant dense<0.5> : tensor<f32>
  %zx = arith.constant dense<3> : tensor<ui8>
  %wq = arith.constant dense<1> : tensor<2x4x3x3xi8>
  %sw = arith.constant dense<0.25> : tensor<f32>
  %zw = arith.constant dense<0> : tensor<i8>
  %bq = arith.constant dense<[5, -5]> : tensor<2xi32>
  %sb = arith.constant dense<0.125> : tensor<f16>
  %zb = arith.constant dense<0> : tensor<i32>
  %sy = arith.constant dense<2.0> : tensor<f32>
  %zy = arith.constant dense<7> : tensor<ui8>
  %x = onnx.node "DequantizeLinear" (%xq, %sx, %zx) {version = 13 : i64} : (tensor<1x4x8x8xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4x8x8xf32>
  %w = onnx.node "DequantizeLinear" (%wq, %sw, %zw) {version = 13 : i64} : (tensor<2x4x3x3xi8>, tensor<f32>, tensor<i8>) -> tensor<2x4x3x3xf32>
  %b = onnx.node "DequantizeLinear" (%bq, %sb, %zb) {version = 19 : i64} : (tensor<2xi32>, tensor<f16>, tensor<i32>) -> tensor<2xf16>
  %c = onnx.node "Conv" (%x, %w, %b) {version = 11 : i64, attrs = {kernel_shape = [3, 3], pads = [1, 1, 1, 1]}} : (tensor<1x4x8x8xf32>, tensor<2x4x3x3xf32>, tensor<2xf16>) -> tensor<1x2x8x8xf32>
  %y = onnx.node "QuantizeLinear" (%c, %sy, %zy) {version = 13 : i64} : (tensor<1x2x8x8xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x8x8xui8>
  return %y : tensor<1x2x8x8xui8>
}

// -----

// Per-channel activations as dlc-compile --quantize writes them: the steps
// q - z (scale 1) feed a convolution and, times the channels' scales, the
// other readers. The convolution folds first; the Mul then becomes a
// per-axis DequantizeLinear. Not with a scale other than 1, nor with a
// constant that varies along another axis.
// CHECK-LABEL: func.func @channel_scales
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x4x4xui8>)
// CHECK: onnx.node "QLinearConv" (%[[Q]],
// CHECK-DAG: %[[S:.*]] = arith.constant dense<[5.000000e-01, 2.500000e-01]> : tensor<2xf32>
// CHECK-DAG: %[[Z:.*]] = arith.constant dense<3> : tensor<2xui8>
// CHECK: onnx.node "DequantizeLinear" (%[[Q]], %[[S]], %[[Z]]) {attrs = {axis = 1 : i64}, name = "x_dequantize", version = 13 : i64}
// CHECK-NOT: "Mul"
// CHECK-LABEL: func.func @not_steps
// CHECK: onnx.node "Mul"
// CHECK: onnx.node "Mul"
func.func @channel_scales(%q: tensor<1x2x4x4xui8>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xui8>) {
  %one = arith.constant dense<1.0> : tensor<f32>
  %z = arith.constant dense<3> : tensor<ui8>
  %c = arith.constant dense<[[[[0.5]], [[0.25]]]]> : tensor<1x2x1x1xf32>
  %wq = arith.constant dense<1> : tensor<2x2x1x1xi8>
  %sw = arith.constant dense<0.25> : tensor<f32>
  %zw = arith.constant dense<0> : tensor<i8>
  %sy = arith.constant dense<1.0> : tensor<f32>
  %zy = arith.constant dense<7> : tensor<ui8>
  %steps = onnx.node "DequantizeLinear" (%q, %one, %z) {version = 13 : i64} : (tensor<1x2x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x4x4xf32>
  %w = onnx.node "DequantizeLinear" (%wq, %sw, %zw) {version = 13 : i64} : (tensor<2x2x1x1xi8>, tensor<f32>, tensor<i8>) -> tensor<2x2x1x1xf32>
  %conv = onnx.node "Conv" (%steps, %w) {version = 11 : i64} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %y = onnx.node "QuantizeLinear" (%conv, %sy, %zy) {version = 13 : i64} : (tensor<1x2x4x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x4x4xui8>
  %x = onnx.node "Mul" (%steps, %c) {version = 14 : i64, name = "x_dequantize"} : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  return %x, %y : tensor<1x2x4x4xf32>, tensor<1x2x4x4xui8>
}
func.func @not_steps(%q: tensor<1x2x4x4xui8>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %half = arith.constant dense<0.5> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %z = arith.constant dense<3> : tensor<ui8>
  %c = arith.constant dense<[[[[0.5]], [[0.25]]]]> : tensor<1x2x1x1xf32>
  %r = arith.constant dense<[[[[0.5, 1.0, 2.0, 4.0]]]]> : tensor<1x1x1x4xf32>
  %a = onnx.node "DequantizeLinear" (%q, %half, %z) {version = 13 : i64} : (tensor<1x2x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x4x4xf32>
  %x = onnx.node "Mul" (%a, %c) {version = 14 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %b = onnx.node "DequantizeLinear" (%q, %one, %z) {version = 13 : i64} : (tensor<1x2x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x4x4xf32>
  %y = onnx.node "Mul" (%b, %r) {version = 14 : i64} : (tensor<1x2x4x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x2x4x4xf32>
  return %x, %y : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}
