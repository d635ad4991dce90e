// RUN: dlc-opt %s --dlc-cpu-bf16-memory | FileCheck %s

// A masked store of bf16 stores the same bits as i16; a masked load loads
// i16 (its pass-through too) and gives bf16 back; f16 and plain loads and
// stores stay as they are.
// CHECK-LABEL: llvm.func @masked
// CHECK: %[[W:.*]] = llvm.bitcast %arg1 : vector<8xbf16> to vector<8xi16>
// CHECK: llvm.intr.masked.store %[[W]], %arg0, %arg2 {alignment = 2 : i32} : vector<8xi16>, vector<8xi1> into !llvm.ptr
// CHECK: %[[P:.*]] = llvm.bitcast %arg1 : vector<8xbf16> to vector<8xi16>
// CHECK: %[[L:.*]] = llvm.intr.masked.load %arg0, %arg2, %[[P]] {alignment = 2 : i32} : (!llvm.ptr, vector<8xi1>, vector<8xi16>) -> vector<8xi16>
// CHECK: %[[B:.*]] = llvm.bitcast %[[L]] : vector<8xi16> to vector<8xbf16>
// CHECK: llvm.intr.masked.store %arg3, %arg0, %arg2 {alignment = 2 : i32} : vector<8xf16>, vector<8xi1> into !llvm.ptr
// CHECK: llvm.store %[[B]], %arg0 : vector<8xbf16>, !llvm.ptr
llvm.func @masked(%p: !llvm.ptr, %v: vector<8xbf16>, %m: vector<8xi1>, %h: vector<8xf16>) {
  llvm.intr.masked.store %v, %p, %m {alignment = 2 : i32} : vector<8xbf16>, vector<8xi1> into !llvm.ptr
  %l = llvm.intr.masked.load %p, %m, %v {alignment = 2 : i32} : (!llvm.ptr, vector<8xi1>, vector<8xbf16>) -> vector<8xbf16>
  llvm.intr.masked.store %h, %p, %m {alignment = 2 : i32} : vector<8xf16>, vector<8xi1> into !llvm.ptr
  llvm.store %l, %p : vector<8xbf16>, !llvm.ptr
  llvm.return
}
