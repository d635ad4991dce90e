// RUN: dlc-opt %s --split-input-file --dlc-convert-onnx-to-linalg | FileCheck %s

// com.microsoft.GatherBlockQuantized (lib/Conversion/ONNXToLinalg/
// WeightOnly.cpp; the ONNX text format has no 4-bit literals, so these
// tests are onnx.node ops): a uint4 table [4, 32] in blocks of 16 with
// uint4 zero points, gathered by [2] indices. The table is packed two
// values a byte at compile time ([4, 16] bytes: no 4-bit constant reaches
// a kernel), and one generic over (index, column) reads the row's byte,
// takes the column's nibble, subtracts the block's zero point and scales
// it: only the gathered rows are dequantized. Row 0 starts 0, 5: byte 0x50.
// CHECK-LABEL: func.func @uint4
// CHECK-DAG: %[[T:.*]] = arith.constant dense<{{\[\[}}80, {{.*}}> : tensor<4x16xi8>
// CHECK-DAG: %[[Z:.*]] = arith.constant dense<{{\[\[}}1, 2], [3, 4], [5, 6], [7, 8]]> : tensor<4x2xi8>
// CHECK: linalg.generic {{.*}} ins(%arg0 : tensor<2xi64>) outs(%{{.*}} : tensor<2x32xf32>)
// CHECK: tensor.extract %[[T]]
// CHECK: arith.shrui
// CHECK: arith.uitofp
// CHECK: tensor.extract %[[Z]]
// CHECK: arith.subf
// CHECK: arith.mulf
func.func @uint4(%i: tensor<2xi64>) -> tensor<2x32xf32> {
  %d = arith.constant dense<[[0, 5, 10, 15, 4, 9, 14, 3, 8, 13, 2, 7, 12, 1, 6, 11, 0, 5, 10, 15, 4, 9, 14, 3, 8, 13, 2, 7, 12, 1, 6, 11], [0, 5, 10, 15, 4, 9, 14, 3, 8, 13, 2, 7, 12, 1, 6, 11, 0, 5, 10, 15, 4, 9, 14, 3, 8, 13, 2, 7, 12, 1, 6, 11], [0, 5, 10, 15, 4, 9, 14, 3, 8, 13, 2, 7, 12, 1, 6, 11, 0, 5, 10, 15, 4, 9, 14, 3, 8, 13, 2, 7, 12, 1, 6, 11], [0, 5, 10, 15, 4, 9, 14, 3, 8, 13, 2, 7, 12, 1, 6, 11, 0, 5, 10, 15, 4, 9, 14, 3, 8, 13, 2, 7, 12, 1, 6, 11]]> : tensor<4x32xui4>
  %s = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]> : tensor<4x2xf32>
  %z = arith.constant dense<[[1, 2], [3, 4], [5, 6], [7, 8]]> : tensor<4x2xui4>
  %y = onnx.node "GatherBlockQuantized" (%d, %i, %s, %z) {attrs = {block_size = 16 : i64}, domain = "com.microsoft", version = 1 : i64} : (tensor<4x32xui4>, tensor<2xi64>, tensor<4x2xf32>, tensor<4x2xui4>) -> tensor<2x32xf32>
  return %y : tensor<2x32xf32>
}

// -----

// int4 without zero points (0): a nibble with bit 3 set is v - 16.
// CHECK-LABEL: func.func @int4
// CHECK: arith.cmpi uge
// CHECK: arith.subi
// CHECK: arith.sitofp
func.func @int4(%i: tensor<3xi32>) -> tensor<3x16xf32> {
  %d = arith.constant dense<-3> : tensor<2x16xi4>
  %s = arith.constant dense<0.5> : tensor<2x1xf32>
  %y = onnx.node "GatherBlockQuantized" (%d, %i, %s) {attrs = {block_size = 16 : i64}, domain = "com.microsoft", version = 1 : i64} : (tensor<2x16xi4>, tensor<3xi32>, tensor<2x1xf32>) -> tensor<3x16xf32>
  return %y : tensor<3x16xf32>
}

// -----

// uint8 data holding two 4-bit values a byte (bits 4, what dlc-compile
// --weights writes): read as it is, the logical row twice its bytes; zero
// points packed the same way along the blocks, unpacked at compile time
// (0x21: 1 and 2).
// CHECK-LABEL: func.func @uint8_packed
// CHECK: %[[Z:.*]] = arith.constant dense<{{\[\[}}1, 2], [1, 2]]> : tensor<2x2xi8>
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x32xf32>)
// CHECK: tensor.extract %arg1
// CHECK: arith.shrui
func.func @uint8_packed(%i: tensor<1xi64>, %d: tensor<2x16xui8>) -> tensor<1x32xf32> {
  %s = arith.constant dense<0.5> : tensor<2x2xf32>
  %z = arith.constant dense<33> : tensor<2x1xui8>
  %y = onnx.node "GatherBlockQuantized" (%d, %i, %s, %z) {attrs = {block_size = 16 : i64, bits = 4 : i64}, domain = "com.microsoft", version = 1 : i64} : (tensor<2x16xui8>, tensor<1xi64>, tensor<2x2xf32>, tensor<2x1xui8>) -> tensor<1x32xf32>
  return %y : tensor<1x32xf32>
}
