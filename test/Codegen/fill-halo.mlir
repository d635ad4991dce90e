// RUN: dlc-opt %s --split-input-file --dlc-fill-halo | FileCheck %s

// A padded tile as bufferization writes it: the buffer filled whole, then
// the input rows copied over its middle (rows [%o, %o + %n), columns
// [1, 9)). Only the rest is filled: the rows before and after the middle's
// (whole rows), then within the middle's rows the column before and the
// column after.
// CHECK-LABEL: func.func @tile
// CHECK-SAME: (%[[IN:[a-z0-9]+]]: memref<?x8xf32>, %[[O:[a-z0-9]+]]: index, %[[N:[a-z0-9]+]]: index)
// CHECK: %[[CST:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[A:.*]] = memref.alloc() {alignment = 64 : i64} : memref<6x10xf32>
// CHECK-NOT: linalg.generic
// CHECK: %[[MID:.*]] = memref.subview %[[A]][%[[O]], 1] [%[[N]], 8] [1, 1]
// CHECK: %[[TOP:.*]] = memref.subview %[[A]][0, 0] [%[[O]], 10] [1, 1]
// CHECK-NEXT: linalg.fill ins(%[[CST]] : f32) outs(%[[TOP]]
// CHECK: %[[END:.*]] = affine.apply #{{.*}}()[%[[O]], %[[N]]]
// CHECK: %[[REST:.*]] = affine.apply #{{.*}}()[%[[O]], %[[N]]]
// CHECK: %[[BOTTOM:.*]] = memref.subview %[[A]][%[[END]], 0] [%[[REST]], 10] [1, 1]
// CHECK-NEXT: linalg.fill ins(%[[CST]] : f32) outs(%[[BOTTOM]]
// CHECK: %[[LEFT:.*]] = memref.subview %[[A]][%[[O]], 0] [%[[N]], 1] [1, 1]
// CHECK-NEXT: linalg.fill ins(%[[CST]] : f32) outs(%[[LEFT]]
// CHECK: %[[RIGHT:.*]] = memref.subview %[[A]][%[[O]], 9] [%[[N]], 1] [1, 1]
// CHECK-NEXT: linalg.fill ins(%[[CST]] : f32) outs(%[[RIGHT]]
// CHECK-NEXT: linalg.generic {{.*}} ins(%{{.*}} : memref<?x8xf32, {{.*}}>) outs(%[[MID]]
// CHECK-NOT: linalg.fill
#flat = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @tile(%in: memref<?x8xf32>, %o: index, %n: index) -> memref<6x10xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %a = memref.alloc() {alignment = 64 : i64} : memref<6x10xf32>
  %flat = memref.collapse_shape %a [[0, 1]] : memref<6x10xf32> into memref<60xf32>
  linalg.generic {indexing_maps = [#flat], iterator_types = ["parallel"]} outs(%flat : memref<60xf32>) {
  ^bb0(%out: f32):
    linalg.yield %cst : f32
  }
  %src = memref.subview %in[%c0, 0] [%n, 8] [1, 1] : memref<?x8xf32> to memref<?x8xf32, strided<[8, 1], offset: ?>>
  %mid = memref.subview %a[%o, 1] [%n, 8] [1, 1] : memref<6x10xf32> to memref<?x8xf32, strided<[10, 1], offset: ?>>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%src : memref<?x8xf32, strided<[8, 1], offset: ?>>) outs(%mid : memref<?x8xf32, strided<[10, 1], offset: ?>>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  return %a : memref<6x10xf32>
}

// -----

// A pooling window's padding (-inf, the fill's scalar input) around a
// middle that spans the leading dims (unit batch, all channels: no slabs
// there) and ends at the last column (no slab after it): top and bottom
// rows, then the two columns on the left.
// CHECK-LABEL: func.func @pool
// CHECK: %[[NEG:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[A:.*]] = memref.alloc
// CHECK-COUNT-3: linalg.fill ins(%[[NEG]] : f32)
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.*}} : memref<1x4x?x6xf32
#c0 = affine_map<(d0) -> ()>
#c1 = affine_map<(d0) -> (0, d0)>
#p4 = affine_map<(d0, d1, d2) -> (0, d0, d1, d2)>
func.func @pool(%in: memref<1x4x5x6xf32>, %o: index, %n: index) -> memref<1x4x9x8xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %a = memref.alloc() {alignment = 64 : i64} : memref<1x4x9x8xf32>
  %flat = memref.collapse_shape %a [[0], [1, 2, 3]] : memref<1x4x9x8xf32> into memref<1x288xf32>
  linalg.generic {indexing_maps = [#c0, #c1], iterator_types = ["parallel"]} ins(%ninf : f32) outs(%flat : memref<1x288xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  %src = memref.subview %in[0, 0, 0, 0] [1, 4, %n, 6] [1, 1, 1, 1] : memref<1x4x5x6xf32> to memref<1x4x?x6xf32, strided<[120, 30, 6, 1]>>
  %mid = memref.subview %a[0, 0, %o, 2] [1, 4, %n, 6] [1, 1, 1, 1] : memref<1x4x9x8xf32> to memref<1x4x?x6xf32, strided<[288, 72, 8, 1], offset: ?>>
  linalg.generic {indexing_maps = [#p4, #p4], iterator_types = ["parallel", "parallel", "parallel"]} ins(%src : memref<1x4x?x6xf32, strided<[120, 30, 6, 1]>>) outs(%mid : memref<1x4x?x6xf32, strided<[288, 72, 8, 1], offset: ?>>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  return %a : memref<1x4x9x8xf32>
}

// -----

// Left alone: something reads the buffer between the fill and the copy
// (@read_between); the copy reads what it overwrites (@accumulates); the
// copy writes one column of each row only (@partial: a constant index on
// a dim of extent 2); the copy's input is the buffer itself
// (@self_copy); the buffer's shape is dynamic (@dynamic).
// CHECK-LABEL: func.func @read_between
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<4x4xf32>)
// CHECK-NOT: linalg.fill
// CHECK-LABEL: func.func @accumulates
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<4x4xf32>)
// CHECK-NOT: linalg.fill
// CHECK-LABEL: func.func @partial
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<4x4xf32>)
// CHECK-NOT: linalg.fill
// CHECK-LABEL: func.func @self_copy
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<4x4xf32>)
// CHECK-NOT: linalg.fill
// CHECK-LABEL: func.func @dynamic
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<?x4xf32>)
// CHECK-NOT: linalg.fill
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0) -> (d0, 0)>
#row = affine_map<(d0) -> (d0)>
func.func @read_between(%in: memref<2x2xf32>, %s: memref<f32>) -> memref<4x4xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<4x4xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<4x4xf32>)
  %v = memref.load %a[%c0, %c0] : memref<4x4xf32>
  memref.store %v, %s[] : memref<f32>
  %mid = memref.subview %a[1, 1] [2, 2] [1, 1] : memref<4x4xf32> to memref<2x2xf32, strided<[4, 1], offset: 5>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%in : memref<2x2xf32>) outs(%mid : memref<2x2xf32, strided<[4, 1], offset: 5>>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  return %a : memref<4x4xf32>
}
func.func @accumulates(%in: memref<2x2xf32>) -> memref<4x4xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %a = memref.alloc() : memref<4x4xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<4x4xf32>)
  %mid = memref.subview %a[1, 1] [2, 2] [1, 1] : memref<4x4xf32> to memref<2x2xf32, strided<[4, 1], offset: 5>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%in : memref<2x2xf32>) outs(%mid : memref<2x2xf32, strided<[4, 1], offset: 5>>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return %a : memref<4x4xf32>
}
func.func @partial(%in: memref<2xf32>) -> memref<4x4xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %a = memref.alloc() : memref<4x4xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<4x4xf32>)
  %mid = memref.subview %a[1, 1] [2, 2] [1, 1] : memref<4x4xf32> to memref<2x2xf32, strided<[4, 1], offset: 5>>
  linalg.generic {indexing_maps = [#row, #col], iterator_types = ["parallel"]} ins(%in : memref<2xf32>) outs(%mid : memref<2x2xf32, strided<[4, 1], offset: 5>>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  return %a : memref<4x4xf32>
}
func.func @self_copy() -> memref<4x4xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %a = memref.alloc() : memref<4x4xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<4x4xf32>)
  %src = memref.subview %a[0, 0] [2, 2] [1, 1] : memref<4x4xf32> to memref<2x2xf32, strided<[4, 1]>>
  %mid = memref.subview %a[2, 2] [2, 2] [1, 1] : memref<4x4xf32> to memref<2x2xf32, strided<[4, 1], offset: 10>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%src : memref<2x2xf32, strided<[4, 1]>>) outs(%mid : memref<2x2xf32, strided<[4, 1], offset: 10>>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  return %a : memref<4x4xf32>
}
func.func @dynamic(%in: memref<2x2xf32>, %m: index) -> memref<?x4xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %a = memref.alloc(%m) : memref<?x4xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<?x4xf32>)
  %mid = memref.subview %a[1, 1] [2, 2] [1, 1] : memref<?x4xf32> to memref<2x2xf32, strided<[4, 1], offset: 5>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%in : memref<2x2xf32>) outs(%mid : memref<2x2xf32, strided<[4, 1], offset: 5>>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  return %a : memref<?x4xf32>
}
