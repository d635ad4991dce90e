// RUN: dlc-opt %s --dlc-legalize-math | FileCheck %s

// No math library calls survive: transcendental functions become
// polynomials, remf becomes arithmetic, f16 is computed in f32.
// CHECK-LABEL: func.func @math
// CHECK-NOT: math.erf
// CHECK-NOT: math.tanh
// CHECK-NOT: math.exp
// CHECK-NOT: arith.remf
// CHECK-NOT: math.trunc
// CHECK-NOT: math.sinh
// CHECK: return
func.func @math(%x: f32, %y: f32, %h: f16) -> (f32, f32, f32, f32, f32, f16) {
  %0 = math.erf %x : f32
  %1 = math.tanh %x : f32
  %2 = math.exp %x : f32
  %3 = arith.remf %x, %y : f32
  %4 = math.sinh %x : f32
  %5 = math.exp %h : f16
  return %0, %1, %2, %3, %4, %5 : f32, f32, f32, f32, f32, f16
}

// Integer powers: a loop over the exponent's bits, and the negative
// exponent cases by select.
// CHECK-LABEL: func.func @ipowi
// CHECK-NOT: math.ipowi
// CHECK: scf.for {{.*}} iter_args
// CHECK: arith.muli
// CHECK: arith.shrui
// CHECK: arith.cmpi slt
// CHECK: return
func.func @ipowi(%b: i32, %e: i32) -> i32 {
  %0 = math.ipowi %b, %e : i32
  return %0 : i32
}

// -----

// math.roundeven becomes arithmetic, unless the target rounds half to even
// in one instruction (native-roundeven: x86 with SSE4.1, AArch64, CUDA).
// RUN: dlc-opt %s --split-input-file --dlc-legalize-math | FileCheck %s --check-prefix=EXPAND
// RUN: dlc-opt %s --split-input-file --dlc-legalize-math="native-roundeven=true" | FileCheck %s --check-prefix=NATIVE
// EXPAND-LABEL: func.func @round_half_even
// EXPAND-NOT: math.roundeven
// EXPAND: return
// NATIVE-LABEL: func.func @round_half_even
// NATIVE: math.roundeven %{{.*}} : vector<16xf32>
// NATIVE-NOT: math.sinh
func.func @round_half_even(%x: vector<16xf32>, %y: f32) -> (vector<16xf32>, f32) {
  %0 = math.roundeven %x : vector<16xf32>
  %1 = math.sinh %y : f32
  return %0, %1 : vector<16xf32>, f32
}
