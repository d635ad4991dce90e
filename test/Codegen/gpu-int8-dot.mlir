// RUN: dlc-opt %s --split-input-file --dlc-gpu-int8-dot | FileCheck %s
// RUN: dlc-opt %s --split-input-file --dlc-gpu-int8-dot=nvvm=true | FileCheck %s --check-prefix=NVVM

// A u8 x s8 product with a zero point on each side, K = 10: two chunks of
// four as SUDot (the signed side first), the zero points expanded with dot
// products against ones, and a remainder of two through the original body.
// CHECK-LABEL: func.func @mixed
// CHECK-SAME: (%[[A:.*]]: memref<3x10xi8>, %[[B:.*]]: memref<10x5xi8>, %[[ZA:.*]]: memref<i8>, %[[ZB:.*]]: memref<i8>, %[[O:.*]]: memref<3x5xi32>)
// CHECK-NOT: linalg.generic
// CHECK: scf.for %[[M:.*]] = %c0{{.*}} to %c3
// CHECK:   scf.for %[[N:.*]] = %c0{{.*}} to %c5
// CHECK:     %[[ACC:.*]] = memref.load %[[O]][%[[M]], %[[N]]]
// CHECK:     %[[ZAV:.*]] = memref.load %[[ZA]][]
// CHECK:     %[[ZA32:.*]] = arith.extui %[[ZAV]] : i8 to i32
// CHECK:     %[[ZBV:.*]] = memref.load %[[ZB]][]
// CHECK:     %[[ZB32:.*]] = arith.extsi %[[ZBV]] : i8 to i32
// CHECK:     %[[CHUNKS:.*]] = scf.for %[[K:.*]] = %c0{{.*}} to %c8{{.*}} step %c4{{.*}} iter_args(%[[S:.*]] = %[[ACC]]) -> (i32)
// CHECK:       memref.load %[[A]][%[[M]], %[[K]]]
// CHECK:       memref.load %[[B]][%[[K]], %[[N]]]
// CHECK:       %[[VA:.*]] = vector.from_elements {{.*}} : vector<4xi8>
// CHECK:       %[[VB:.*]] = vector.from_elements {{.*}} : vector<4xi8>
// CHECK:       %[[D:.*]] = spirv.SUDot %[[VB]], %[[VA]] : vector<4xi8> -> i32
// CHECK:       %[[ONES:.*]] = arith.constant dense<1> : vector<4xi8>
// CHECK:       spirv.UDot %[[VA]], %[[ONES]]
// CHECK:       arith.muli %[[ZB32]]
// CHECK:       spirv.SDot %[[ONES]], %[[VB]]
// CHECK:       arith.muli %[[ZA32]]
// CHECK:       scf.yield
// CHECK:     %[[TAIL:.*]] = scf.for %[[K2:.*]] = %c8{{.*}} to %c10{{.*}} step %c1{{.*}} iter_args(%[[T:.*]] = %[[CHUNKS]]) -> (i32)
// CHECK:       arith.muli
// CHECK:       %[[NEXT:.*]] = arith.addi %[[T]]
// CHECK:       scf.yield %[[NEXT]]
// CHECK:     memref.store %[[TAIL]], %[[O]][%[[M]], %[[N]]]
// CUDA (`nvvm`): dp4a accumulates into the running sum itself (unsigned a,
// signed b, in their order); the sums against ones start from zero.
// NVVM-LABEL: func.func @mixed
// NVVM: scf.for %{{.*}} iter_args(%[[S:.*]] = %{{.*}}) -> (i32)
// NVVM:   %[[VA:.*]] = vector.from_elements {{.*}} : vector<4xi8>
// NVVM:   %[[VB:.*]] = vector.from_elements {{.*}} : vector<4xi8>
// NVVM:   nvvm.dot.accumulate.4way %[[VA]] <unsigned>, %[[VB]] <signed>, %[[S]] : vector<4xi8>, vector<4xi8>
// NVVM:   nvvm.dot.accumulate.4way %[[VA]] <unsigned>, %{{.*}} <unsigned>, %c0_i32
// NVVM:   nvvm.dot.accumulate.4way %{{.*}} <signed>, %[[VB]] <signed>, %c0_i32
// NVVM-NOT: spirv.
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#s = affine_map<(m, n, k) -> ()>
#o = affine_map<(m, n, k) -> (m, n)>
func.func @mixed(%a: memref<3x10xi8>, %b: memref<10x5xi8>, %za: memref<i8>, %zb: memref<i8>, %o: memref<3x5xi32>) {
  linalg.generic {indexing_maps = [#a, #b, #s, #s, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b, %za, %zb : memref<3x10xi8>, memref<10x5xi8>, memref<i8>, memref<i8>) outs(%o : memref<3x5xi32>) {
  ^bb0(%x: i8, %y: i8, %zx: i8, %zy: i8, %acc: i32):
    %0 = arith.extui %x : i8 to i32
    %1 = arith.extui %zx : i8 to i32
    %2 = arith.subi %0, %1 : i32
    %3 = arith.extsi %y : i8 to i32
    %4 = arith.extsi %zy : i8 to i32
    %5 = arith.subi %3, %4 : i32
    %6 = arith.muli %2, %5 : i32
    %7 = arith.addi %acc, %6 : i32
    linalg.yield %7 : i32
  }
  return
}

// -----

// A convolution: the channel loop (8) is the longest reduction, taken four
// at a time inside the kernel-window loops; no zero points, both signed.
// CHECK-LABEL: func.func @conv
// CHECK: scf.for {{.*}} to %c4
// CHECK:   scf.for {{.*}} to %c4
// CHECK:     scf.for %[[KH:.*]] = {{.*}} to %c3{{.*}} iter_args
// CHECK:       scf.for %[[KW:.*]] = {{.*}} to %c3{{.*}} iter_args
// CHECK:         scf.for %[[C:.*]] = {{.*}} to %c8{{.*}} step %c4{{.*}} iter_args
// CHECK:           affine.apply
// CHECK:           spirv.SDot
// CHECK-NOT:       spirv.UDot
// CHECK:           scf.yield
// CHECK-NOT: scf.for
// CHECK: memref.store
#in = affine_map<(f, x, c, kh, kw) -> (c, x + kh, kw)>
#w = affine_map<(f, x, c, kh, kw) -> (f, c, kh, kw)>
#out = affine_map<(f, x, c, kh, kw) -> (f, x)>
func.func @conv(%x: memref<8x6x3xi8>, %w: memref<4x8x3x3xi8>, %o: memref<4x4xi32>) {
  linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<8x6x3xi8>, memref<4x8x3x3xi8>) outs(%o : memref<4x4xi32>) {
  ^bb0(%p: i8, %q: i8, %acc: i32):
    %0 = arith.extsi %p : i8 to i32
    %1 = arith.extsi %q : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  return
}

// -----

// Left alone: a reduction shorter than four, a zero point that changes
// along the reduction, and 16-bit operands.
// CHECK-LABEL: func.func @short
// CHECK: linalg.generic
// CHECK-NOT: spirv.
// CHECK-LABEL: func.func @varying_zero_point
// CHECK: linalg.generic
// CHECK-NOT: spirv.
// CHECK-LABEL: func.func @wide
// CHECK: linalg.generic
// CHECK-NOT: spirv.
#a2 = affine_map<(m, k) -> (m, k)>
#b2 = affine_map<(m, k) -> (k)>
#o2 = affine_map<(m, k) -> (m)>
func.func @short(%a: memref<2x3xi8>, %b: memref<3xi8>, %o: memref<2xi32>) {
  linalg.generic {indexing_maps = [#a2, #b2, #o2], iterator_types = ["parallel", "reduction"]}
      ins(%a, %b : memref<2x3xi8>, memref<3xi8>) outs(%o : memref<2xi32>) {
  ^bb0(%p: i8, %q: i8, %acc: i32):
    %0 = arith.extsi %p : i8 to i32
    %1 = arith.extsi %q : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  return
}
func.func @varying_zero_point(%a: memref<2x8xi8>, %b: memref<8xi8>, %z: memref<8xi8>, %o: memref<2xi32>) {
  linalg.generic {indexing_maps = [#a2, #b2, #b2, #o2], iterator_types = ["parallel", "reduction"]}
      ins(%a, %b, %z : memref<2x8xi8>, memref<8xi8>, memref<8xi8>) outs(%o : memref<2xi32>) {
  ^bb0(%p: i8, %q: i8, %zp: i8, %acc: i32):
    %0 = arith.extsi %p : i8 to i32
    %1 = arith.extsi %zp : i8 to i32
    %2 = arith.subi %0, %1 : i32
    %3 = arith.extsi %q : i8 to i32
    %4 = arith.muli %2, %3 : i32
    %5 = arith.addi %acc, %4 : i32
    linalg.yield %5 : i32
  }
  return
}
func.func @wide(%a: memref<2x8xi16>, %b: memref<8xi16>, %o: memref<2xi32>) {
  linalg.generic {indexing_maps = [#a2, #b2, #o2], iterator_types = ["parallel", "reduction"]}
      ins(%a, %b : memref<2x8xi16>, memref<8xi16>) outs(%o : memref<2xi32>) {
  ^bb0(%p: i16, %q: i16, %acc: i32):
    %0 = arith.extsi %p : i16 to i32
    %1 = arith.extsi %q : i16 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  return
}
