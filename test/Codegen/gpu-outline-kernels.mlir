// RUN: dlc-opt %s --split-input-file --verify-diagnostics --dlc-gpu-outline-kernels=module-per-kernel=1 | FileCheck %s

// Workgroup and thread loops become block and thread ids; the last forall
// dimension is x.
// CHECK: module attributes {gpu.container_module}
// CHECK: gpu.module @k
// CHECK: gpu.func @k(%[[A:.*]]: memref<64x32xf32>) kernel attributes {{{.*}}known_block_size = array<i32: 16, 2, 1>
// CHECK-DAG: %[[BX:.*]] = gpu.block_id  x
// CHECK-DAG: %[[BY:.*]] = gpu.block_id  y
// CHECK-DAG: %[[TX:.*]] = gpu.thread_id  x
// CHECK-DAG: %[[TY:.*]] = gpu.thread_id  y
// CHECK: memref.store %{{.*}}, %[[A]]
// CHECK: gpu.return
// CHECK-NOT: func.func @k
func.func @k(%a: memref<64x32xf32>) attributes {dlc.kernel, dlc.grid = array<i64: 2, 32, 1>, dlc.workgroup_size = array<i64: 16, 2, 1>} {
  %c = arith.constant 1.0 : f32
  scf.forall (%i, %j) = (0, 0) to (64, 32) step (2, 16) {
    scf.forall (%ti, %tj) in (2, 16) {
      %r = arith.addi %i, %ti : index
      %s = arith.addi %j, %tj : index
      memref.store %c, %a[%r, %s] : memref<64x32xf32>
    } {mapping = [#gpu.thread<y>, #gpu.thread<x>]}
  } {mapping = [#gpu.block<y>, #gpu.block<x>]}
  return
}

// -----

// expected-error @below {{a kernel must have at most one workgroup loop}}
func.func @two(%a: memref<8xf32>) attributes {dlc.kernel} {
  %c = arith.constant 1.0 : f32
  scf.forall (%i) in (8) {
    memref.store %c, %a[%i] : memref<8xf32>
  }
  scf.forall (%i) in (8) {
    memref.store %c, %a[%i] : memref<8xf32>
  }
  return
}

// -----

// Workgroup-memory buffers become the function's workgroup attributions,
// aligned for the 16-byte vector accesses NVPTX forms from scalar ones.
// CHECK: gpu.func @staged(%{{.*}}: memref<8xf32>) workgroup(%[[S:.*]] : memref<8xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
// CHECK-NOT: memref.alloc
// CHECK: memref.store %{{.*}}, %[[S]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[S]]
func.func @staged(%a: memref<8xf32>) attributes {dlc.kernel, dlc.workgroup_size = array<i64: 8, 1, 1>} {
  %c = arith.constant 1.0 : f32
  %c7 = arith.constant 7 : index
  scf.forall (%t) in (8) {
    %s = memref.alloc() : memref<8xf32, #gpu.address_space<workgroup>>
    memref.store %c, %s[%t] : memref<8xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %r = arith.subi %c7, %t : index
    %v = memref.load %s[%r] : memref<8xf32, #gpu.address_space<workgroup>>
    memref.store %v, %a[%t] : memref<8xf32>
  } {mapping = [#gpu.thread<x>]}
  return
}

// -----

// A buffer that asks for more than 16 bytes of alignment keeps it.
// CHECK: gpu.func @wide(%{{.*}}: memref<8xf32>) workgroup(%{{.*}} : memref<8xf32, #gpu.address_space<workgroup>> {llvm.align = 64 : i64}) kernel
func.func @wide(%a: memref<8xf32>) attributes {dlc.kernel, dlc.workgroup_size = array<i64: 8, 1, 1>} {
  scf.forall (%t) in (8) {
    %s = memref.alloc() {alignment = 64 : i64} : memref<8xf32, #gpu.address_space<workgroup>>
    %v = memref.load %s[%t] : memref<8xf32, #gpu.address_space<workgroup>>
    memref.store %v, %a[%t] : memref<8xf32>
  } {mapping = [#gpu.thread<x>]}
  return
}

// -----

func.func @dynamic(%a: memref<8xf32>, %n: index) attributes {dlc.kernel} {
  %c = arith.constant 1.0 : f32
  scf.forall (%t) in (8) {
    // expected-error @below {{workgroup buffers must have a static shape}}
    %s = memref.alloc(%n) : memref<?xf32, #gpu.address_space<workgroup>>
    memref.store %c, %s[%t] : memref<?xf32, #gpu.address_space<workgroup>>
  } {mapping = [#gpu.thread<x>]}
  return
}

// -----

// A kernel that runs only when argument 1 holds false (dlc.run_if): the
// body, workgroup ids included, moves into an scf.if on the negated flag.
// CHECK: gpu.func @p(%[[A:.*]]: memref<64xf32>, %[[F:.*]]: memref<i1>)
// CHECK: %[[FLAG:.*]] = memref.load %[[F]][] : memref<i1>
// CHECK: %[[NOT:.*]] = arith.xori %[[FLAG]], %{{.*}} : i1
// CHECK: scf.if %[[NOT]] {
// CHECK: gpu.block_id  x
// CHECK: memref.store %{{.*}}, %[[A]]
// CHECK: }
// CHECK-NEXT: gpu.return
func.func @p(%a: memref<64xf32>, %f: memref<i1>) attributes {dlc.kernel, dlc.grid = array<i64: 64, 1, 1>, dlc.run_if = array<i64: 1, 0>} {
  %c = arith.constant 1.0 : f32
  scf.forall (%i) in (64) {
    memref.store %c, %a[%i] : memref<64xf32>
  } {mapping = [#gpu.block<x>]}
  return
}

// -----

// expected-error @below {{dlc.run_if names argument 0 of type 'memref<64xf32>', not a buffer of one boolean}}
func.func @q(%a: memref<64xf32>) attributes {dlc.kernel, dlc.run_if = array<i64: 0, 1>} {
  return
}

// -----

// expected-error @below {{dlc.run_if names argument 1 of a kernel with 1 arguments}}
func.func @r(%a: memref<64xf32>) attributes {dlc.kernel, dlc.run_if = array<i64: 1, 1>} {
  return
}
