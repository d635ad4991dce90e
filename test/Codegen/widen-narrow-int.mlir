// RUN: dlc-opt %s --dlc-widen-narrow-int | FileCheck %s
// RUN: dlc-opt %s --dlc-widen-narrow-int=native-int8 | FileCheck %s --check-prefix=INT8

// Unsigned ops zero-extend, signed ops sign-extend; each computes in i32
// and truncates back.
// CHECK-LABEL: func.func @arith
// CHECK-SAME: (%[[A:.*]]: i8, %[[B:.*]]: i8)
// CHECK-DAG: %[[AU:.*]] = arith.extui %[[A]] : i8 to i32
// CHECK-DAG: %[[BU:.*]] = arith.extui %[[B]] : i8 to i32
// CHECK-DAG: %[[DU:.*]] = arith.divui %[[AU]], %[[BU]] : i32
// CHECK-DAG: arith.trunci %[[DU]] : i32 to i8
// CHECK-DAG: %[[AS:.*]] = arith.extsi %[[A]] : i8 to i32
// CHECK-DAG: %[[BS:.*]] = arith.extsi %[[B]] : i8 to i32
// CHECK-DAG: %[[M:.*]] = arith.maxsi %[[AS]], %[[BS]] : i32
// CHECK-DAG: arith.trunci %[[M]] : i32 to i8
// CHECK-DAG: arith.cmpi ult, %{{.*}}, %{{.*}} : i32
// CHECK-DAG: arith.uitofp %{{.*}} : i32 to f32
// CHECK-NOT: arith.divui {{.*}} : i8
func.func @arith(%a: i8, %b: i8) -> (i8, i8, i1, f32) {
  %0 = arith.divui %a, %b : i8
  %1 = arith.maxsi %a, %b : i8
  %2 = arith.cmpi ult, %a, %b : i8
  %3 = arith.uitofp %a : i8 to f32
  return %0, %1, %2, %3 : i8, i8, i1, f32
}

// Narrow-to-narrow and narrow-to-i64 extensions go through i32; float to
// narrow conversions produce i32 and truncate. i32 code is left alone.
// CHECK-LABEL: func.func @conversions
// CHECK: %[[E:.*]] = arith.extui %{{.*}} : i8 to i32
// CHECK: arith.trunci %[[E]] : i32 to i16
// CHECK: %[[S:.*]] = arith.extsi %{{.*}} : i8 to i32
// CHECK: arith.extsi %[[S]] : i32 to i64
// CHECK: %[[F:.*]] = arith.fptosi %{{.*}} : f32 to i32
// CHECK: arith.trunci %[[F]] : i32 to i8
// CHECK: arith.addi %{{.*}}, %{{.*}} : i32
// CHECK-NOT: arith.extsi
// CHECK: return
func.func @conversions(%a: i8, %f: f32, %x: i32) -> (i16, i64, i8, i32) {
  %0 = arith.extui %a : i8 to i16
  %1 = arith.extsi %a : i8 to i64
  %2 = arith.fptosi %f : f32 to i8
  %3 = arith.addi %x, %x : i32
  return %0, %1, %2, %3 : i16, i64, i8, i32
}

// Boolean max/min are or/and (signed: the other way round).
// CHECK-LABEL: func.func @booleans
// CHECK: arith.ori
// CHECK: arith.andi
// CHECK: arith.andi
// CHECK: arith.ori
func.func @booleans(%a: i1, %b: i1) -> (i1, i1, i1, i1) {
  %0 = arith.maxui %a, %b : i1
  %1 = arith.minui %a, %b : i1
  %2 = arith.maxsi %a, %b : i1
  %3 = arith.minsi %a, %b : i1
  return %0, %1, %2, %3 : i1, i1, i1, i1
}

// Index casts of a narrow value (a table lookup by a uint8) extend it
// first: the unsigned cast by zero extension, the signed one by sign
// extension.
// CHECK-LABEL: func.func @index_casts
// CHECK: %[[U:.*]] = arith.extui %{{.*}} : i8 to i32
// CHECK: arith.index_castui %[[U]] : i32 to index
// CHECK: %[[S:.*]] = arith.extsi %{{.*}} : i8 to i32
// CHECK: arith.index_cast %[[S]] : i32 to index
func.func @index_casts(%a: i8) -> (index, index) {
  %0 = arith.index_castui %a : i8 to index
  %1 = arith.index_cast %a : i8 to index
  return %0, %1 : index, index
}

// A private buffer of i8 (SPIR-V Function storage) holds i32: stores
// zero-extend, loads truncate. Storage buffers keep their narrow type.
// CHECK-LABEL: func.func @private_buffer
// CHECK: %[[W:.*]] = memref.alloca() : memref<4xi32, #spirv.storage_class<Function>>
// CHECK: %[[E:.*]] = arith.extui %{{.*}} : i8 to i32
// CHECK: memref.store %[[E]], %[[W]][%{{.*}}] : memref<4xi32, #spirv.storage_class<Function>>
// CHECK: %[[L:.*]] = memref.load %[[W]][%{{.*}}] : memref<4xi32, #spirv.storage_class<Function>>
// CHECK: %[[T:.*]] = arith.trunci %[[L]] : i32 to i8
// CHECK: memref.store %[[T]], %{{.*}} : memref<4xi8, #spirv.storage_class<StorageBuffer>>
func.func @private_buffer(%in: memref<4xi8, #spirv.storage_class<StorageBuffer>>,
                          %out: memref<4xi8, #spirv.storage_class<StorageBuffer>>,
                          %i: index) {
  %buf = memref.alloca() : memref<4xi8, #spirv.storage_class<Function>>
  %v = memref.load %in[%i] : memref<4xi8, #spirv.storage_class<StorageBuffer>>
  memref.store %v, %buf[%i] : memref<4xi8, #spirv.storage_class<Function>>
  %w = memref.load %buf[%i] : memref<4xi8, #spirv.storage_class<Function>>
  memref.store %w, %out[%i] : memref<4xi8, #spirv.storage_class<StorageBuffer>>
  return
}

// So does a workgroup buffer (memref.alloc in Workgroup storage: per-row
// zero points a serial loop shares between threads); emulating bytes there
// would pack neighbouring threads' bytes into one word.
// CHECK-LABEL: func.func @workgroup_buffer
// CHECK: %[[W:.*]] = memref.alloc() : memref<3xi32, #spirv.storage_class<Workgroup>>
// CHECK: arith.extui %{{.*}} : i8 to i32
// CHECK: memref.store %{{.*}}, %[[W]][%{{.*}}] : memref<3xi32, #spirv.storage_class<Workgroup>>
// CHECK: memref.load %[[W]]
// CHECK: arith.trunci %{{.*}} : i32 to i8
// CHECK: memref.dealloc %[[W]]
func.func @workgroup_buffer(%v: i8, %i: index) -> i8 {
  %buf = memref.alloc() : memref<3xi8, #spirv.storage_class<Workgroup>>
  memref.store %v, %buf[%i] : memref<3xi8, #spirv.storage_class<Workgroup>>
  %w = memref.load %buf[%i] : memref<3xi8, #spirv.storage_class<Workgroup>>
  memref.dealloc %buf : memref<3xi8, #spirv.storage_class<Workgroup>>
  return %w : i8
}

// With native 8-bit integers (Vulkan's Int8 capability), i8 arithmetic
// stays, and 4- and 16-bit values still widen: without the pass their
// registers (i32 in SPIR-V) held the unmasked bits, and an int4 nibble
// unpacked from a byte read back as 16 instead of 0 (DequantizeLinear of
// int4 was silently wrong on vulkan:+int8).
// INT8-LABEL: func.func @native_int8
// INT8-SAME: (%[[A:.*]]: i8, %[[B:.*]]: i8, %[[N:.*]]: i4, %[[H:.*]]: i16)
// INT8: arith.divui %[[A]], %[[B]] : i8
// INT8: %[[NS:.*]] = arith.extsi %[[N]] : i4 to i32
// INT8: arith.sitofp %[[NS]] : i32 to f32
// INT8: %[[HU:.*]] = arith.extui %[[H]] : i16 to i32
// INT8: arith.uitofp %[[HU]] : i32 to f32
// CHECK-LABEL: func.func @native_int8
// CHECK: arith.divui %{{.*}}, %{{.*}} : i32
func.func @native_int8(%a: i8, %b: i8, %n: i4, %h: i16) -> (i8, f32, f32) {
  %0 = arith.divui %a, %b : i8
  %1 = arith.sitofp %n : i4 to f32
  %2 = arith.uitofp %h : i16 to f32
  return %0, %1, %2 : i8, f32, f32
}
