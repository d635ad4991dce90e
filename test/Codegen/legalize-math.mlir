// RUN: dlc-opt %s --dlc-legalize-math | FileCheck %s
// RUN: dlc-opt %s --dlc-legalize-math | FileCheck %s --check-prefix=NOLIB
// NOLIB-NOT: math.sin
// NOLIB-NOT: math.cos
// NOLIB-NOT: math.tanh
// NOLIB-NOT: math.exp

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

// Sines and cosines: k = floor(x * 2/pi + 1/2), the argument reduced by
// k * pi/2 in four parts (Cody and Waite; the first three with few enough
// bits that their products with k are exact), then Taylor polynomials on
// [-pi/4, pi/4] chosen and signed by k mod 4 (scripts/math_accuracy.py
// measures them: 2 ULPs on [-100, 100]).
// CHECK-LABEL: func.func @sin_cos
// CHECK-DAG: arith.constant dense<1.5703125> : vector<8xf32>
// CHECK-DAG: arith.constant dense<4.83751297E-4> : vector<8xf32>
// CHECK-DAG: arith.constant dense<7.54953362E-8> : vector<8xf32>
// CHECK-DAG: arith.constant dense<2.56334407E-12> : vector<8xf32>
// CHECK-DAG: arith.constant dense<0.636619746> : vector<8xf32>
// CHECK: math.floor
// CHECK: arith.fptosi {{.*}} : vector<8xf32> to vector<8xi32>
// CHECK: arith.andi
// CHECK: arith.select
// CHECK: arith.negf
// CHECK: return
func.func @sin_cos(%x: vector<8xf32>) -> (vector<8xf32>, vector<8xf32>) {
  %0 = math.sin %x : vector<8xf32>
  %1 = math.cos %x : vector<8xf32>
  return %0, %1 : vector<8xf32>, vector<8xf32>
}

// f32 tanh: MLIR's rational approximation, a few ULPs also near 0, where
// the expansion through exp (1 - e^-2x) cancels.
// CHECK-LABEL: func.func @tanh_f32
// CHECK: math.absf
// CHECK: arith.divf
// CHECK: return
func.func @tanh_f32(%x: f32) -> f32 {
  %0 = math.tanh %x : f32
  return %0 : f32
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
// Without it, f32 rounds by adding and subtracting 2^23 (0x4B000000) to the
// magnitude, with the sign copied back; no integer conversion.
// EXPAND-LABEL: func.func @round_half_even
// EXPAND-NOT: math.roundeven
// EXPAND-NOT: fptosi
// EXPAND: %[[BIG:.*]] = arith.constant dense<0x4B000000> : vector<16xf32>
// EXPAND: %[[ABS:.*]] = math.absf %{{.*}} : vector<16xf32>
// EXPAND: %[[UP:.*]] = arith.addf %[[ABS]], %[[BIG]]
// EXPAND: %[[R:.*]] = arith.subf %[[UP]], %[[BIG]]
// EXPAND: %[[SMALL:.*]] = arith.cmpf olt, %[[ABS]], %[[BIG]]
// EXPAND: %[[S:.*]] = math.copysign %[[R]], %{{.*}}
// EXPAND: arith.select %[[SMALL]], %[[S]], %{{.*}}
// EXPAND: return
// NATIVE-LABEL: func.func @round_half_even
// NATIVE: math.roundeven %{{.*}} : vector<16xf32>
// NATIVE-NOT: math.sinh
func.func @round_half_even(%x: vector<16xf32>, %y: f32) -> (vector<16xf32>, f32) {
  %0 = math.roundeven %x : vector<16xf32>
  %1 = math.sinh %y : f32
  return %0, %1 : vector<16xf32>, f32
}

// -----

// math.floor stays unless expand-floor (no rounding instruction: ARMv7,
// Cortex-M4, x86 without SSE4.1, where LLVM would call floorf): then it is
// roundeven minus one where that rounded up, and roundeven in turn the
// additions above; no integer conversion, no call.
// RUN: dlc-opt %s --split-input-file --dlc-legalize-math | FileCheck %s --check-prefix=FLOOR-KEPT
// RUN: dlc-opt %s --split-input-file --dlc-legalize-math="expand-floor=true native-roundeven=true" | FileCheck %s --check-prefix=FLOOR
// RUN: dlc-opt %s --split-input-file --dlc-legalize-math="expand-floor=true" | FileCheck %s --check-prefix=FLOOR-ARITH
// FLOOR-KEPT-LABEL: func.func @floor
// FLOOR-KEPT: math.floor %{{.*}} : vector<4xf32>
// FLOOR-KEPT: math.floor %{{.*}} : f64
// FLOOR-LABEL: func.func @floor
// FLOOR-NOT: math.floor
// FLOOR: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : vector<4xf32>
// FLOOR: %[[R:.*]] = math.roundeven %[[X:.*]] : vector<4xf32>
// FLOOR: %[[UP:.*]] = arith.cmpf ogt, %[[R]], %[[X]] : vector<4xf32>
// FLOOR: %[[BELOW:.*]] = arith.subf %[[R]], %[[ONE]] : vector<4xf32>
// FLOOR: arith.select %[[UP]], %[[BELOW]], %[[R]] : vector<4xi1>, vector<4xf32>
// FLOOR: math.roundeven %{{.*}} : f64
// FLOOR-NOT: math.floor
// FLOOR-ARITH-LABEL: func.func @floor
// FLOOR-ARITH-NOT: math.floor
// FLOOR-ARITH-NOT: math.roundeven
// FLOOR-ARITH-NOT: fptosi
// FLOOR-ARITH: return
func.func @floor(%x: vector<4xf32>, %y: f64) -> (vector<4xf32>, f64) {
  %0 = math.floor %x : vector<4xf32>
  %1 = math.floor %y : f64
  return %0, %1 : vector<4xf32>, f64
}

// -----

// ARMv7 has no maxnum instruction (LLVM would call fmaxf): with
// expand-num-min-max, maxnumf/minnumf are compares and selects that return
// the other operand when one is NaN.
// RUN: dlc-opt %s --split-input-file --dlc-legalize-math="expand-num-min-max=true" | FileCheck %s --check-prefix=MINMAX
// MINMAX-LABEL: func.func @num_min_max
// MINMAX-NOT: arith.maxnumf
// MINMAX-NOT: arith.minnumf
// MINMAX: %[[ANAN:.*]] = arith.cmpf uno, %[[A:.*]], %[[A]] : f32
// MINMAX: %[[BNAN:.*]] = arith.cmpf uno, %[[B:.*]], %[[B]] : f32
// MINMAX: %[[GT:.*]] = arith.cmpf ogt, %[[A]], %[[B]] : f32
// MINMAX: %[[M:.*]] = arith.select %[[GT]], %[[A]], %[[B]]
// MINMAX: %[[NB:.*]] = arith.select %[[BNAN]], %[[A]], %[[M]]
// MINMAX: arith.select %[[ANAN]], %[[B]], %[[NB]]
// MINMAX: arith.cmpf olt
func.func @num_min_max(%a: f32, %b: f32) -> (f32, f32) {
  %0 = arith.maxnumf %a, %b : f32
  %1 = arith.minnumf %a, %b : f32
  return %0, %1 : f32, f32
}

// -----

// x86 without AVX512-FP16 has no f64 -> f16 conversion (LLVM would call
// __truncdfhf2): with expand-f64-to-f16 it goes through f32 rounded to odd,
// then to f16; other truncations are left alone.
// RUN: dlc-opt %s --split-input-file --dlc-legalize-math="expand-f64-to-f16=true" | FileCheck %s --check-prefix=F16
// F16-LABEL: func.func @f64_to_f16
// F16: %[[N:.*]] = arith.truncf %[[X:.*]] : f64 to f32
// F16: %[[B:.*]] = arith.extf %[[N]] : f32 to f64
// F16: %[[INEXACT:.*]] = arith.cmpf one, %[[B]], %[[X]] : f64
// F16: %[[AWAY:.*]] = arith.cmpf ogt
// F16: %[[BITS:.*]] = arith.bitcast %[[N]] : f32 to i32
// F16: %[[DOWN:.*]] = arith.subi %[[BITS]]
// F16: %[[T:.*]] = arith.select %[[AWAY]], %[[DOWN]], %[[BITS]]
// F16: %[[ODD:.*]] = arith.ori %[[T]]
// F16: %[[R:.*]] = arith.select %[[INEXACT]], %[[ODD]], %[[BITS]]
// F16: %[[F:.*]] = arith.bitcast %[[R]] : i32 to f32
// F16: arith.truncf %[[F]] : f32 to f16
// F16: arith.truncf %{{.*}} : f32 to f16
// F16-NOT: arith.truncf
// F16-NOT: arith.extf
func.func @f64_to_f16(%x: f64, %y: f32) -> (f16, f16) {
  %0 = arith.truncf %x : f64 to f16
  %1 = arith.truncf %y : f32 to f16
  return %0, %1 : f16, f16
}

// -----

// RUN: dlc-opt %s --split-input-file --dlc-legalize-math="expand-f16-conversions=true" | FileCheck %s --check-prefix=EXPAND-F16
// RUN: dlc-opt %s --split-input-file --dlc-legalize-math="expand-bf16-conversions=true" | FileCheck %s --check-prefix=EXPAND-BF16
// RUN: dlc-opt %s --split-input-file --dlc-legalize-math | FileCheck %s --check-prefix=KEEP-16
// Without conversion instructions, f16 and bf16 move to and from f32 in
// integer operations (scalars and vectors alike), so that LLVM calls no
// __extendhfsf2, __truncsfhf2 or __truncsfbf2. f16 -> f32: the magnitude's
// bits moved by 13 with the exponent rebiased (0x38000000), all-ones
// exponents kept (0x7F800000), subnormals as their mantissa times 2^-24.
// f32 -> f16: NaN 0x7E00, infinity from 65520 on (0x477FF000), below 2^-14
// (0x38800000) through an f32 addition of 0.5, else the rebiased bits
// rounded to even at bit 13.
// F16-LABEL: func.func @sixteen_bits
// EXPAND-F16-LABEL: func.func @sixteen_bits
// EXPAND-F16-DAG: arith.constant dense<939524096> : vector<8xi32>
// EXPAND-F16-DAG: arith.constant dense<2139095040> : vector<8xi32>
// EXPAND-F16-DAG: arith.constant dense<5.96046448E-8> : vector<8xf32>
// EXPAND-F16-DAG: arith.constant 32256 : i32
// EXPAND-F16-DAG: arith.constant 1199566848 : i32
// EXPAND-F16-DAG: arith.constant 947912704 : i32
// EXPAND-F16: arith.bitcast %{{.*}} : vector<8xf16> to vector<8xi16>
// EXPAND-F16: arith.bitcast %{{.*}} : f32 to i32
// EXPAND-F16: arith.bitcast %{{.*}} : i16 to f16
// EXPAND-F16: arith.truncf %{{.*}} : f32 to bf16
// EXPAND-F16-NOT: arith.extf %{{.*}} : vector<8xf16>
// EXPAND-BF16-LABEL: func.func @sixteen_bits
// EXPAND-BF16: arith.extf %{{.*}} : vector<8xf16> to vector<8xf32>
// EXPAND-BF16: arith.truncf %{{.*}} : f32 to f16
// EXPAND-BF16-NOT: arith.truncf %{{.*}} to bf16
// KEEP-16: arith.extf %{{.*}} : vector<8xf16> to vector<8xf32>
// KEEP-16: arith.truncf %{{.*}} : f32 to f16
// KEEP-16: arith.truncf %{{.*}} : f32 to bf16
func.func @sixteen_bits(%v: vector<8xf16>, %x: f32) -> (vector<8xf32>, f16, bf16) {
  %0 = arith.extf %v : vector<8xf16> to vector<8xf32>
  %1 = arith.truncf %x : f32 to f16
  %2 = arith.truncf %x : f32 to bf16
  return %0, %1, %2 : vector<8xf32>, f16, bf16
}

// -----

// RUN: dlc-opt %s --split-input-file --dlc-legalize-math="exact-bf16-subnormals=true" | FileCheck %s --check-prefix=BF16-SUB
// x86's vcvtneps2bf16 treats subnormal f32 inputs as zero: those (a zero
// exponent field, 0x7F800000 masked off) take the integer rounding to
// nearest even, (u + 0x7FFF + (u >> 16 & 1)) >> 16; the others keep the
// instruction (the truncf that stays, once).
// BF16-SUB-LABEL: func.func @bf16_subnormals
// BF16-SUB: %[[U:.*]] = arith.bitcast %arg0 : vector<16xf32> to vector<16xi32>
// BF16-SUB: arith.constant dense<32767> : vector<16xi32>
// BF16-SUB: %[[T:.*]] = arith.trunci %{{.*}} : vector<16xi32> to vector<16xi16>
// BF16-SUB: %[[B:.*]] = arith.bitcast %[[T]] : vector<16xi16> to vector<16xbf16>
// BF16-SUB: %[[N:.*]] = arith.truncf %arg0 : vector<16xf32> to vector<16xbf16>
// BF16-SUB: arith.constant dense<2139095040> : vector<16xi32>
// BF16-SUB: %[[S:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : vector<16xi32>
// BF16-SUB: arith.select %[[S]], %[[B]], %[[N]] : vector<16xi1>, vector<16xbf16>
// BF16-SUB-NOT: arith.truncf
// BF16-SUB: return
func.func @bf16_subnormals(%x: vector<16xf32>) -> vector<16xbf16> {
  %0 = arith.truncf %x : vector<16xf32> to vector<16xbf16>
  return %0 : vector<16xbf16>
}

// -----

// RUN: dlc-opt %s --split-input-file --dlc-legalize-math | FileCheck %s --check-prefix=HALF-MATH
// Math on 16-bit floats computes in f32 and rounds once; a constant
// operand is extended at compile time, so that pow by 3 is a product
// (negative bases included), not exp(3 * log(x)).
// HALF-MATH-LABEL: func.func @half_math
// HALF-MATH: %[[X:.*]] = arith.extf %arg0 : vector<8xf16> to vector<8xf32>
// HALF-MATH: %[[S:.*]] = arith.mulf %[[X]], %[[X]] : vector<8xf32>
// HALF-MATH: %[[C:.*]] = arith.mulf %[[S]], %[[X]] : vector<8xf32>
// HALF-MATH: arith.truncf %[[C]] : vector<8xf32> to vector<8xf16>
// HALF-MATH-NOT: math.
// HALF-MATH: return
func.func @half_math(%x: vector<8xf16>) -> vector<8xf16> {
  %c = arith.constant dense<3.0> : vector<8xf16>
  %0 = math.powf %x, %c : vector<8xf16>
  return %0 : vector<8xf16>
}

// -----

// RUN: dlc-opt %s --split-input-file --dlc-legalize-math="native-fma=true" | FileCheck %s --check-prefix=NATIVE-FMA

// math.fma is a multiplication and an addition unless marked dlc.fused on
// a target with a fused multiply-add (native-fma).
// CHECK-LABEL: func.func @fma
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: arith.mulf
// CHECK: arith.addf
// NATIVE-FMA-LABEL: func.func @fma
// NATIVE-FMA: arith.mulf
// NATIVE-FMA: arith.addf
// NATIVE-FMA: math.fma {{.*}} {dlc.fused}
// NATIVE-FMA-NOT: math.fma
func.func @fma(%a: f32, %b: f32, %c: f32) -> (f32, f32) {
  %0 = math.fma %a, %b, %c : f32
  %1 = math.fma %a, %b, %c {dlc.fused} : f32
  return %0, %1 : f32, f32
}

// -----

// 32-bit targets convert i64 to f32 through a helper call (__aeabi_l2f on
// ARMv7, which a kernel cannot import): with expand-i64-to-f32, integer
// operations instead. The magnitude is shifted so that its top bit is bit
// 63 (the shift from its leading zeros, expanded too), the top 24 bits
// rounded to nearest even by the 40 below, the exponent added; signed
// inputs take their sign bit. Conversions from other types stay.
// RUN: dlc-opt %s --split-input-file --dlc-legalize-math="expand-i64-to-f32=true" | FileCheck %s --check-prefix=I64
// RUN: dlc-opt %s --split-input-file --dlc-legalize-math | FileCheck %s --check-prefix=I64-KEPT
// I64-LABEL: func.func @i64_to_f32
// I64-NOT: arith.sitofp %{{.*}} : i64
// I64-NOT: arith.uitofp %{{.*}} : vector<4xi64>
// I64-DAG: arith.constant 63 : i64
// I64-DAG: arith.constant 40 : i64
// I64-DAG: arith.constant 549755813888 : i64
// I64: arith.shli %{{.*}}, %{{.*}} : i32
// I64: arith.bitcast %{{.*}} : i32 to f32
// I64: arith.bitcast %{{.*}} : vector<4xi32> to vector<4xf32>
// I64: arith.sitofp %{{.*}} : i32 to f32
// I64-KEPT-LABEL: func.func @i64_to_f32
// I64-KEPT: arith.sitofp %{{.*}} : i64 to f32
// I64-KEPT: arith.uitofp %{{.*}} : vector<4xi64> to vector<4xf32>
func.func @i64_to_f32(%a: i64, %v: vector<4xi64>, %b: i32) -> (f32, vector<4xf32>, f32) {
  %0 = arith.sitofp %a : i64 to f32
  %1 = arith.uitofp %v : vector<4xi64> to vector<4xf32>
  %2 = arith.sitofp %b : i32 to f32
  return %0, %1, %2 : f32, vector<4xf32>, f32
}

// Ceil is -floor(-x) (no integer conversion, no copysign: Vulkan has no
// f64 copysign without 64-bit integers); f64 Exp and Log are polynomials
// like f32 ones (no exp/log of the C library).
// CHECK-LABEL: func.func @ceil_exp_log_f64
// CHECK: %[[N:.*]] = arith.negf %arg0 : f64
// CHECK: %[[F:.*]] = math.floor %[[N]] : f64
// CHECK: arith.negf %[[F]] : f64
// CHECK-NOT: math.copysign
// CHECK-NOT: math.exp
// CHECK-NOT: math.log
// CHECK: return
func.func @ceil_exp_log_f64(%x: f64) -> (f64, f64, f64) {
  %0 = math.ceil %x : f64
  %1 = math.exp %x : f64
  %2 = math.log %x : f64
  return %0, %1, %2 : f64, f64, f64
}
