// RUN: dlc-opt %s --split-input-file --dlc-gpu-serial-loops="threads=64 budget=4096" --canonicalize | FileCheck %s
// RUN: dlc-opt %s --split-input-file --dlc-gpu-serial-loops="threads=64 budget=1024" | FileCheck %s --check-prefix=SMALL
// RUN: dlc-opt %s --split-input-file --dlc-gpu-serial-loops="threads=64 budget=1024 min-int-bits=32" | FileCheck %s --check-prefix=WIDE

// A recurrent step: a temporary (the gate pre-activations) and a state the
// loop reads and writes (%h). Both move to workgroup memory; each op is
// spread over the 64 threads along its largest parallel loop (cyclically:
// from the thread id in steps of 64) with a barrier after it; the state is
// copied in from its argument before the loop and back after it, spread
// the same way.
// CHECK-LABEL: func.func @step
// CHECK-SAME: dlc.workgroup_size = array<i64: 64, 1, 1>
// CHECK-DAG: %[[TID:.*]] = gpu.thread_id x
// CHECK-DAG: %[[T:.*]] = arith.constant 64 : index
// CHECK-DAG: %[[TMP:.*]] = memref.alloc() {{.*}} : memref<1x256xf32, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[STATE:.*]] = memref.alloc() : memref<1x256xf32, #gpu.address_space<workgroup>>
// CHECK: scf.for %{{.*}} = %[[TID]] to %{{.*}} step %[[T]]
// CHECK:   linalg.copy ins(%{{.*}} : memref<1x1xf32, strided<[256, 1], offset: ?>>) outs(%{{.*}} : memref<1x1xf32, strided<[256, 1], offset: ?>, #gpu.address_space<workgroup>>)
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK:   scf.for %{{.*}} = %[[TID]] to %{{.*}} step %[[T]]
// CHECK:     linalg.fill {{.*}} #gpu.address_space<workgroup>>)
// CHECK:   gpu.barrier
// CHECK:   scf.for %[[J:.*]] = %[[TID]] to %{{.*}} step %[[T]]
// CHECK:     linalg.generic {{.*}} ins(%[[STATE]], %{{.*}} : memref<1x256xf32, #gpu.address_space<workgroup>>, memref<1x256xf32, strided<[256, 1], offset: ?>>)
// CHECK:   gpu.barrier
// CHECK:   scf.for %{{.*}} = %[[TID]] to %{{.*}} step %[[T]]
// CHECK:     linalg.generic
// CHECK:   gpu.barrier
// CHECK: gpu.barrier
// CHECK: scf.for %{{.*}} = %[[TID]] to %{{.*}} step %[[T]]
// CHECK:   linalg.copy ins(%{{.*}} : memref<1x1xf32, strided<[256, 1], offset: ?>, #gpu.address_space<workgroup>>)
// CHECK: gpu.barrier
// SMALL-LABEL: func.func @step
// SMALL-SAME: dlc.workgroup_size = array<i64: 1, 1, 1>
// SMALL-NOT: gpu.thread_id
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @step(%r: memref<256x256xf32>, %h: memref<1x256xf32>) attributes {dlc.kernel, dlc.grid = array<i64: 1, 1, 1>, dlc.workgroup_size = array<i64: 1, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %tmp = memref.alloca() {alignment = 64 : i64} : memref<1x256xf32>
  scf.for %s = %c0 to %c8 step %c1 {
    linalg.fill ins(%zero : f32) outs(%tmp : memref<1x256xf32>)
    linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]} ins(%h, %r : memref<1x256xf32>, memref<256x256xf32>) outs(%tmp : memref<1x256xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %m = arith.mulf %a, %b : f32
      %sum = arith.addf %o, %m : f32
      linalg.yield %sum : f32
    }
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%tmp : memref<1x256xf32>) outs(%h : memref<1x256xf32>) {
    ^bb0(%a: f32, %o: f32):
      %t = math.tanh %a : f32
      linalg.yield %t : f32
    }
  }
  return
}

// -----

// A kernel tiled over threads already is left alone.
// CHECK-LABEL: func.func @tiled
// SMALL-LABEL: func.func @tiled
// CHECK-NOT: gpu.thread_id
// CHECK-NOT: gpu.barrier
func.func @tiled(%a: memref<64xf32>) attributes {dlc.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  scf.forall (%t) in (64) {
    scf.for %s = %c0 to %c2 step %c1 {
      linalg.fill ins(%zero : f32) outs(%a : memref<64xf32>)
    }
  } {mapping = [#gpu.thread<x>]}
  return
}

// -----

// An op with no parallel loop (a reduction to one value) runs on thread 0.
// CHECK-LABEL: func.func @scalar
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: scf.for
// CHECK:   %[[FIRST:.*]] = arith.cmpi eq, %[[TID]], %{{.*}} : index
// CHECK:   scf.if %[[FIRST]] {
// CHECK:     linalg.generic {{.*}}iterator_types = ["reduction"]
// CHECK:   }
// CHECK:   gpu.barrier
func.func @scalar(%a: memref<16xf32>, %s: memref<f32>) attributes {dlc.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%a : memref<16xf32>) outs(%s : memref<f32>) {
    ^bb0(%x: f32, %o: f32):
      %y = arith.addf %x, %o : f32
      linalg.yield %y : f32
    }
  }
  return
}

// -----

// An int8 temporary of 512 bytes fits a budget of 1024 bytes, unless
// integers take 32 bits in workgroup memory (SPIR-V without 8-bit types):
// then the kernel keeps one thread.
// SMALL-LABEL: func.func @int8_temporary
// SMALL-SAME: dlc.workgroup_size = array<i64: 64, 1, 1>
// SMALL: memref.alloc() {{.*}} : memref<1x512xi8, #gpu.address_space<workgroup>>
// WIDE-LABEL: func.func @int8_temporary
// WIDE-SAME: dlc.workgroup_size = array<i64: 1, 1, 1>
// WIDE-NOT: gpu.thread_id
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @int8_temporary(%out: memref<1x512xi32>) attributes {dlc.kernel, dlc.grid = array<i64: 1, 1, 1>, dlc.workgroup_size = array<i64: 1, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %seven = arith.constant 7 : i8
  %tmp = memref.alloca() {alignment = 64 : i64} : memref<1x512xi8>
  scf.for %s = %c0 to %c8 step %c1 {
    linalg.fill ins(%seven : i8) outs(%tmp : memref<1x512xi8>)
    linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%tmp : memref<1x512xi8>) outs(%out : memref<1x512xi32>) {
    ^bb0(%a: i8, %o: i32):
      %e = arith.extsi %a : i8 to i32
      linalg.yield %e : i32
    }
  }
  return
}
