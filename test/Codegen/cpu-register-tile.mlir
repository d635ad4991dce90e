// RUN: dlc-opt %s --split-input-file --dlc-cpu-register-tile="vector-bits=256 chunk-bytes=16384" | FileCheck %s
// RUN: dlc-opt %s --split-input-file --dlc-cpu-register-tile="vector-bits=256 chunk-bytes=16384 int8-dot=llvm.x86.avx512.vpdpbusd.256" | FileCheck %s --check-prefix=DOT
// RUN: dlc-opt %s --split-input-file --dlc-cpu-register-tile="vector-bits=128 vector-registers=32 chunk-bytes=16384" | FileCheck %s --check-prefix=NEON
// RUN: dlc-opt %s --split-input-file --dlc-cpu-register-tile="vector-bits=128 vector-registers=16 chunk-bytes=16384" | FileCheck %s --check-prefix=NEON16
// RUN: dlc-opt %s --split-input-file --dlc-cpu-register-tile="vector-bits=128 vector-registers=32 chunk-bytes=16384 int8-dot=llvm.aarch64.neon.sdot.v4i32.v16i8 int8-dot-signed=true" | FileCheck %s --check-prefix=SDOT
// RUN: dlc-opt %s --split-input-file --dlc-cpu-register-tile="vector-bits=512 chunk-bytes=65536" | FileCheck %s --check-prefix=AVX512
// RUN: dlc-opt %s --split-input-file --dlc-cpu-register-tile="vector-bits=256 chunk-bytes=16384 int8-dot=llvm.x86.avx2.pmadd.wd int8-dot-pairs=true window-dot=false" | FileCheck %s --check-prefix=PAIRS
// RUN: not dlc-opt %s --split-input-file --dlc-cpu-register-tile="int8-dot=llvm.x86.avx2.pmadd.wd int8-dot-pairs=true int8-dot-signed=true" 2>&1 | FileCheck %s --check-prefix=BADPAIRS
// RUN: dlc-opt %s --split-input-file --dlc-cpu-register-tile="vector-bits=256 chunk-bytes=16384 two-vector-permute=false" | FileCheck %s --check-prefix=INLANE
// BADPAIRS: error: dlc-cpu-register-tile: int8-dot-pairs builds unsigned x signed dot products; int8-dot-signed cannot go with it

// C[7x37] += A[7x16] * B[16x37] with 8-lane vectors: blocks of 4 rows x 2
// vectors (16 columns) keep 8 accumulators in registers through the k loop;
// rows 4-6 get a block of 3 rows, the last 5 columns a block of one masked
// vector. B (16x37) is larger than A (7x16): the column blocks are the
// outer loop, so each column slice of B is read once for all rows.
// With 32 registers of 4 lanes (AArch64's NEON) a block has up to 8 rows:
// all 7 rows x 2 vectors, 14 accumulators; with 16 registers (ARMv7) 4.
// NEON-LABEL: func.func @matmul
// NEON: %[[R:.*]]:14 = scf.for {{.*}} -> (vector<4xf32>,
// NEON16-LABEL: func.func @matmul
// NEON16: %[[R:.*]]:8 = scf.for {{.*}} -> (vector<4xf32>,
// CHECK-LABEL: func.func @matmul
// CHECK: scf.for %[[P:.*]] = %c0{{.*}} to %c32{{.*}} step %c16
// CHECK:   scf.for %[[F:.*]] = %c0{{.*}} to %c4{{.*}} step %c4
// CHECK-COUNT-8: vector.load %{{.*}} : memref<7x37xf32>, vector<8xf32>
// CHECK:     %[[R:.*]]:8 = scf.for {{.*}} iter_args
// CHECK-COUNT-2: vector.load %{{.*}} : memref<16x37xf32>, vector<8xf32>
// CHECK:       memref.load %{{.*}} : memref<7x16xf32>
// CHECK:       vector.broadcast
// CHECK-COUNT-2: vector.fma
// CHECK:       scf.yield
// CHECK-COUNT-8: vector.store
// CHECK:   }
// CHECK-COUNT-6: vector.load %{{.*}} : memref<7x37xf32>, vector<8xf32>
// CHECK:   scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK: vector.create_mask %c5
// CHECK: vector.maskedload
// CHECK-NOT: linalg.generic
#ma = affine_map<(i, j, k) -> (i, k)>
#mb = affine_map<(i, j, k) -> (k, j)>
#mc = affine_map<(i, j, k) -> (i, j)>
func.func @matmul(%a: memref<7x16xf32>, %b: memref<16x37xf32>, %c: memref<7x37xf32>) {
  linalg.generic {indexing_maps = [#ma, #mb, #mc], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<7x16xf32>, memref<16x37xf32>) outs(%c : memref<7x37xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %z, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// 16-bit float inputs (--precision=fp16) summed in f32: the vectors of B
// load as f16 and extend, A's scalars extend before the broadcast, the
// accumulators and the output stay f32.
// CHECK-LABEL: func.func @matmul_f16
// CHECK: scf.for {{.*}} iter_args
// CHECK: %[[V:.*]] = vector.load %{{.*}} : memref<16x37xf16>, vector<8xf16>
// CHECK: arith.extf %[[V]] : vector<8xf16> to vector<8xf32>
// CHECK: %[[S:.*]] = memref.load %{{.*}} : memref<7x16xf16>
// CHECK: %[[E:.*]] = arith.extf %[[S]] : f16 to f32
// CHECK: vector.broadcast %[[E]] : f32 to vector<8xf32>
// CHECK: vector.fma
// CHECK: vector.maskedload %{{.*}} : memref<16x37xf16>, vector<8xi1>, vector<8xf16> into vector<8xf16>
// CHECK-NOT: linalg.generic
#ha = affine_map<(i, j, k) -> (i, k)>
#hb = affine_map<(i, j, k) -> (k, j)>
#hc = affine_map<(i, j, k) -> (i, j)>
func.func @matmul_f16(%a: memref<7x16xf16>, %b: memref<16x37xf16>, %c: memref<7x37xf32>) {
  linalg.generic {indexing_maps = [#ha, #hb, #hc], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<7x16xf16>, memref<16x37xf16>) outs(%c : memref<7x37xf32>) {
  ^bb0(%x: f16, %y: f16, %z: f32):
    %xe = arith.extf %x : f16 to f32
    %ye = arith.extf %y : f16 to f32
    %m = arith.mulf %xe, %ye : f32
    %s = arith.addf %z, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Not a contraction of that shape (B is walked by the column loop with a
// stride): left alone. Nor is integer arithmetic.
// CHECK-LABEL: func.func @transposed
// CHECK-NOT: vector.
// CHECK: linalg.generic
// CHECK-LABEL: func.func @integer
// CHECK-NOT: vector.
// CHECK: linalg.generic
#ta = affine_map<(i, j, k) -> (i, k)>
#tb = affine_map<(i, j, k) -> (j, k)>
#tc = affine_map<(i, j, k) -> (i, j)>
#ib = affine_map<(i, j, k) -> (k, j)>
func.func @transposed(%a: memref<8x16xf32>, %b: memref<32x16xf32>, %c: memref<8x32xf32>) {
  linalg.generic {indexing_maps = [#ta, #tb, #tc], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x16xf32>, memref<32x16xf32>) outs(%c : memref<8x32xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %z, %m : f32
    linalg.yield %s : f32
  }
  return
}
func.func @integer(%a: memref<8x16xi32>, %b: memref<16x32xi32>, %c: memref<8x32xi32>) {
  linalg.generic {indexing_maps = [#ta, #ib, #tc], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x16xi32>, memref<16x32xi32>) outs(%c : memref<8x32xi32>) {
  ^bb0(%x: i32, %y: i32, %z: i32):
    %m = arith.muli %x, %y : i32
    %s = arith.addi %z, %m : i32
    linalg.yield %s : i32
  }
  return
}

// -----

// A depthwise 3x3 convolution (stride 1): no row loop of the filter (every
// operand uses the channel), so the rows are the output's rows h, read
// through the input's h + kh: each step loads a vector of the input per
// accumulator, so a quarter of the 16 registers hold accumulators: blocks
// of 3 rows x 1 vector, each step three input vectors and one broadcast
// filter scalar for three multiply-adds. The column loop is ow (input
// read at ow + kw, still stride 1).
// CHECK-LABEL: func.func @depthwise
// CHECK: scf.for %[[C:.*]] = %c0{{.*}} to %c4{{.*}} step %c1
// CHECK:   scf.for %[[H:.*]] = %c0{{.*}} to %c6{{.*}} step %c3
// CHECK:     scf.for %[[W:.*]] = %c0{{.*}} to %c16{{.*}} step %c8
// CHECK-COUNT-3: vector.load %{{.*}} : memref<4x6x20xf32>, vector<8xf32>
// CHECK:       scf.for {{.*}} to %c3{{.*}} iter_args
// CHECK:         scf.for {{.*}} to %c3{{.*}} iter_args
// CHECK-COUNT-3:   vector.load %{{.*}} : memref<4x8x22xf32>, vector<8xf32>
// CHECK-NOT:       vector.fma
// CHECK:           memref.load %{{.*}} : memref<4x3x3xf32>
// CHECK-NOT:       memref.load
// CHECK-COUNT-3:   vector.fma
// CHECK:     vector.create_mask %c4
// CHECK-NOT: linalg.generic
#din = affine_map<(c, h, w, kh, kw) -> (c, h + kh, w + kw)>
#dw = affine_map<(c, h, w, kh, kw) -> (c, kh, kw)>
#dout = affine_map<(c, h, w, kh, kw) -> (c, h, w)>
func.func @depthwise(%in: memref<4x8x22xf32>, %w: memref<4x3x3xf32>, %out: memref<4x6x20xf32>) {
  linalg.generic {indexing_maps = [#din, #dw, #dout], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%in, %w : memref<4x8x22xf32>, memref<4x3x3xf32>) outs(%out : memref<4x6x20xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %z, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Stride 2 with a filter 3 taps wide, rows in the filter: the input's even
// and odd columns are split once, into (4, 2, 17), two vectors in and a
// shuffle for each phase out, the last step masked to the 33rd column
// (an even one: the odd phase has none left); every input vector of the
// multiply-adds is then one load from a phase, column 2w + kw being
// column w + kw / 2 of phase kw % 2.
// CHECK-LABEL: func.func @strided
// CHECK: %[[P:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x2x17xf32>
// CHECK: scf.for %[[C:.*]] = %{{.*}} to %c4
// CHECK:   scf.for %[[Q:.*]] = %{{.*}} to %c16{{.*}} step %c8
// CHECK:     %[[LO:.*]] = vector.load %{{.*}}[%[[C]], %{{.*}}] : memref<4x33xf32>, vector<8xf32>
// CHECK:     %[[HI:.*]] = vector.load %{{.*}}[%[[C]], %{{.*}}] : memref<4x33xf32>, vector<8xf32>
// CHECK:     %[[EVEN:.*]] = vector.shuffle %[[LO]], %[[HI]] [0, 2, 4, 6, 8, 10, 12, 14]
// CHECK:     vector.store %[[EVEN]], %[[P]][%[[C]], %{{.*}}, %[[Q]]]
// CHECK:     %[[ODD:.*]] = vector.shuffle %[[LO]], %[[HI]] [1, 3, 5, 7, 9, 11, 13, 15]
// CHECK:     vector.store %[[ODD]], %[[P]][%[[C]], %{{.*}}, %[[Q]]]
// CHECK:   vector.maskedload %{{.*}} : memref<4x33xf32>
// CHECK:   vector.maskedstore %[[P]]
// CHECK-NOT: vector.maskedstore %[[P]]
// CHECK: vector.load %[[P]]
// CHECK-NOT: vector.shuffle
// CHECK: memref.dealloc %[[P]]
#sin = affine_map<(f, w, c, kw) -> (c, w * 2 + kw)>
#sw = affine_map<(f, w, c, kw) -> (f, c, kw)>
#sout = affine_map<(f, w, c, kw) -> (f, w)>
func.func @strided(%in: memref<4x33xf32>, %w: memref<8x4x3xf32>, %out: memref<8x16xf32>) {
  linalg.generic {indexing_maps = [#sin, #sw, #sout], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%in, %w : memref<4x33xf32>, memref<8x4x3xf32>) outs(%out : memref<8x16xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %z, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A channels-last 3x3 convolution (dlc-conv-channels-last): vectors along
// the output channels (the filter's and the output's innermost dim), rows
// along ow, whose input index ow + kw is a window, not a plain dim; the
// row blocks prefer ow (the input's innermost dim) over oh. 4 pixels make
// one block of 4 rows x 2 vectors. What a block reads over all 32 input
// channels (23 KiB) exceeds the 16 KiB chunk budget: the channel loop runs
// in two chunks of 16, outermost, each block reloading its accumulators.
// CHECK-LABEL: func.func @channels_last
// CHECK: scf.for %[[C0:.*]] = %c0{{.*}} to %c32{{.*}} step %c16
// CHECK:   scf.for %{{.*}} = %c0{{.*}} to %c16{{.*}} step %c16
// CHECK:     scf.for %[[OH:.*]] = %c0{{.*}} to %c5{{.*}} step %c1
// CHECK-COUNT-8: vector.load %{{.*}} : memref<5x4x16xf32>, vector<8xf32>
// CHECK:     %[[END:.*]] = arith.addi %[[C0]], %c16
// CHECK:     scf.for {{.*}} = %[[C0]] to %[[END]] step %c1{{.*}} iter_args
// CHECK:       scf.for {{.*}} to %c3{{.*}} iter_args
// CHECK:         scf.for {{.*}} to %c3{{.*}} iter_args
// CHECK-COUNT-2:   vector.load %{{.*}} : memref<32x3x3x16xf32>, vector<8xf32>
// CHECK:           affine.apply
// CHECK:           memref.load %{{.*}} : memref<32x7x6xf32>
// CHECK-COUNT-2:   vector.fma
// CHECK-COUNT-8: vector.store
// CHECK-NOT: linalg.generic
#cin = affine_map<(oh, ow, f, c, kh, kw) -> (c, oh + kh, ow + kw)>
#cw = affine_map<(oh, ow, f, c, kh, kw) -> (c, kh, kw, f)>
#cout = affine_map<(oh, ow, f, c, kh, kw) -> (oh, ow, f)>
func.func @channels_last(%in: memref<32x7x6xf32>, %w: memref<32x3x3x16xf32>, %out: memref<5x4x16xf32>) {
  linalg.generic {indexing_maps = [#cin, #cw, #cout], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%in, %w : memref<32x7x6xf32>, memref<32x3x3x16xf32>) outs(%out : memref<5x4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %z, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Max pooling, 3x3 with stride 2 (the second input is only the window's
// shape): the rows are channels, a loop of the input only; a stride-2
// vector is two loads and a shuffle, so an eighth of the 16 registers
// hold accumulators: 2 rows x 1 vector along ow; each step the even
// elements of two loads folded in with arith.maximumf, which need not
// order -0 and +0 (nsz: on x86 three instructions instead of six); the
// window operand is never read.
// CHECK-LABEL: func.func @max_pool
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c5{{.*}} step %c1
// CHECK:   scf.for %{{.*}} = %c0{{.*}} to %c4{{.*}} step %c2
// CHECK:     scf.for %{{.*}} = %c0{{.*}} to %c16{{.*}} step %c8
// CHECK-COUNT-2: vector.load %{{.*}} : memref<4x5x20xf32>, vector<8xf32>
// CHECK:       scf.for {{.*}} to %c3{{.*}} iter_args
// CHECK:         scf.for {{.*}} to %c3{{.*}} iter_args
// CHECK-COUNT-2:   vector.shuffle
// CHECK-COUNT-2:   arith.maximumf %{{.*}} fastmath<nsz> : vector<8xf32>
// CHECK-NOT: memref<3x3xf32>
// CHECK:     vector.create_mask %c4
// CHECK-NOT: linalg.generic
// Where the even lanes of two vectors take two shuffles (AVX2), each row
// of the input is split into its even and odd columns once (memref
// <4x11x2x21xf32>), and every tap is one load from it.
// INLANE-LABEL: func.func @max_pool
// INLANE: %[[P:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x11x2x21xf32>
// INLANE: scf.for {{.*}} to %c3{{.*}} iter_args
// INLANE:   scf.for {{.*}} to %c3{{.*}} iter_args
// INLANE-NOT: vector.shuffle
// INLANE:     vector.load %[[P]]
// INLANE:     arith.maximumf
// INLANE: memref.dealloc %[[P]]
#pin = affine_map<(c, h, w, kh, kw) -> (c, h * 2 + kh, w * 2 + kw)>
#pwin = affine_map<(c, h, w, kh, kw) -> (kh, kw)>
#pout = affine_map<(c, h, w, kh, kw) -> (c, h, w)>
func.func @max_pool(%in: memref<4x11x41xf32>, %win: memref<3x3xf32>, %out: memref<4x5x20xf32>) {
  linalg.generic {indexing_maps = [#pin, #pwin, #pout], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%in, %win : memref<4x11x41xf32>, memref<3x3xf32>) outs(%out : memref<4x5x20xf32>) {
  ^bb0(%x: f32, %w: f32, %z: f32):
    %m = arith.maximumf %z, %x : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// A contraction into a temporary that a constant fill initializes and an
// elementwise epilogue (bias per row, residual add, ReLU6 clamp, a square
// root) maps into the kernel's output: the accumulators start as the
// constant in registers, the epilogue runs on them as vectors, and the
// results go straight to the output; the temporary, its fill and the
// epilogue are gone. The epilogue reads through a unit dim, (0, f, p).
// CHECK-LABEL: func.func @epilogue
// CHECK-NOT: memref.alloc
// CHECK-NOT: linalg.generic
// CHECK: %[[Z:.*]] = vector.broadcast %{{.*}} : f32 to vector<8xf32>
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[Z]]
// CHECK: vector.fma
// CHECK: memref.load %{{.*}} : memref<8xf32>
// CHECK: vector.load %{{.*}} : memref<1x8x37xf32>, vector<8xf32>
// CHECK: arith.addf %{{.*}} : vector<8xf32>
// CHECK: math.sqrt %{{.*}} : vector<8xf32>
// CHECK: arith.maximumf %{{.*}} : vector<8xf32>
// CHECK: arith.minimumf %{{.*}} : vector<8xf32>
// CHECK: vector.store %{{.*}}, %{{.*}} : memref<1x8x37xf32, strided<[296, 37, 1]>>, vector<8xf32>
// The last 5 columns: masked loads of the residual, masked stores.
// CHECK: vector.maskedload %{{.*}} : memref<1x8x37xf32>, vector<8xi1>, vector<8xf32>
// CHECK: vector.maskedstore %{{.*}} : memref<1x8x37xf32, strided<[296, 37, 1]>>, vector<8xi1>, vector<8xf32>
// CHECK-NOT: memref.dealloc
#ea = affine_map<(f, k, p) -> (k, p)>
#eb = affine_map<(f, k, p) -> (f, k)>
#ec = affine_map<(f, k, p) -> (0, f, p)>
#eid = affine_map<(f, p) -> (0, f, p)>
#erow = affine_map<(f, p) -> (f)>
#efill = affine_map<(f, p) -> ()>
#eall = affine_map<(f, p) -> (f, p)>
func.func @epilogue(%x: memref<16x37xf32>, %w: memref<8x16xf32>, %bias: memref<8xf32>, %res: memref<1x8x37xf32>, %y: memref<1x8x37xf32>) {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %t = memref.alloc() {alignment = 64 : i64} : memref<1x8x37xf32>
  %flat = memref.collapse_shape %t [[0, 1], [2]] : memref<1x8x37xf32> into memref<8x37xf32>
  linalg.generic {indexing_maps = [#efill, #eall], iterator_types = ["parallel", "parallel"]} ins(%zero : f32) outs(%flat : memref<8x37xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [#ea, #eb, #ec], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<16x37xf32>, memref<8x16xf32>) outs(%t : memref<1x8x37xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  }
  %ry = memref.subview %y[0, 0, 0] [1, 8, 37] [1, 1, 1] : memref<1x8x37xf32> to memref<1x8x37xf32, strided<[296, 37, 1]>>
  linalg.generic {indexing_maps = [#eid, #erow, #eid, #eid], iterator_types = ["parallel", "parallel"]}
      ins(%t, %bias, %res : memref<1x8x37xf32>, memref<8xf32>, memref<1x8x37xf32>) outs(%ry : memref<1x8x37xf32, strided<[296, 37, 1]>>) {
  ^bb0(%acc: f32, %b: f32, %r: f32, %o: f32):
    %s = arith.addf %acc, %b : f32
    %q = arith.addf %s, %r : f32
    %sq = math.sqrt %b : f32
    %u = arith.mulf %q, %sq : f32
    %lo = arith.maximumf %u, %zero : f32
    %hi = arith.minimumf %lo, %six : f32
    linalg.yield %hi : f32
  }
  memref.dealloc %t : memref<1x8x37xf32>
  return
}

// -----

// A quantize-dequantize epilogue (what a QDQ model puts after each
// convolution): division by the scale, round half to even, clamp to
// [0, 255], to u8 and back. math.roundeven is one vector instruction
// (vroundps, frintn), so it runs on the accumulators too.
// CHECK-LABEL: func.func @fake_quant_epilogue
// CHECK-NOT: memref.alloc
// CHECK: vector.fma
// CHECK: arith.divf %{{.*}} : vector<8xf32>
// CHECK: math.roundeven %{{.*}} : vector<8xf32>
// CHECK: arith.fptoui %{{.*}} : vector<8xf32> to vector<8xi8>
// CHECK: arith.uitofp %{{.*}} : vector<8xi8> to vector<8xf32>
// CHECK: vector.store
// CHECK-NOT: linalg.generic
#qa = affine_map<(f, k, p) -> (k, p)>
#qb = affine_map<(f, k, p) -> (f, k)>
#qc = affine_map<(f, k, p) -> (f, p)>
#qid = affine_map<(f, p) -> (f, p)>
#qfill = affine_map<(f, p) -> ()>
func.func @fake_quant_epilogue(%x: memref<16x32xf32>, %w: memref<8x16xf32>, %y: memref<8x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %max = arith.constant 255.0 : f32
  %s = arith.constant 0.0123 : f32
  %t = memref.alloc() {alignment = 64 : i64} : memref<8x32xf32>
  linalg.generic {indexing_maps = [#qfill, #qid], iterator_types = ["parallel", "parallel"]} ins(%zero : f32) outs(%t : memref<8x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [#qa, #qb, #qc], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<16x32xf32>, memref<8x16xf32>) outs(%t : memref<8x32xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#qid, #qid], iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<8x32xf32>) outs(%y : memref<8x32xf32>) {
  ^bb0(%acc: f32, %o: f32):
    %d = arith.divf %acc, %s : f32
    %r = math.roundeven %d : f32
    %lo = arith.maxnumf %r, %zero : f32
    %hi = arith.minnumf %lo, %max : f32
    %q = arith.fptoui %hi : f32 to i8
    %f = arith.uitofp %q : i8 to f32
    %v = arith.mulf %f, %s : f32
    linalg.yield %v : f32
  }
  memref.dealloc %t : memref<8x32xf32>
  return
}

// -----

// Kept: an epilogue that writes a buffer the contraction reads (its
// output would change under the contraction's feet), and one that is no
// elementwise map of the accumulators (it reads them transposed). The
// fill still becomes the accumulators' start.
// CHECK-LABEL: func.func @kept_epilogues
// CHECK: memref.alloc
// CHECK-NOT: linalg.generic
// CHECK: vector.fma
// CHECK: vector.store
// CHECK: linalg.generic
// CHECK: memref.alloc
// CHECK-NOT: linalg.generic
// CHECK: vector.fma
// CHECK: vector.store
// CHECK: linalg.generic
#ka = affine_map<(f, k, p) -> (k, p)>
#kb = affine_map<(f, k, p) -> (f, k)>
#kc = affine_map<(f, k, p) -> (f, p)>
#kid = affine_map<(f, p) -> (f, p)>
#ktr = affine_map<(f, p) -> (p, f)>
#kfill = affine_map<(f, p) -> ()>
func.func @kept_epilogues(%x: memref<16x16xf32>, %w: memref<16x16xf32>, %y: memref<16x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<16x16xf32>
  linalg.generic {indexing_maps = [#kfill, #kid], iterator_types = ["parallel", "parallel"]} ins(%zero : f32) outs(%t : memref<16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [#ka, #kb, #kc], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<16x16xf32>, memref<16x16xf32>) outs(%t : memref<16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#kid, #kid], iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<16x16xf32>) outs(%x : memref<16x16xf32>) {
  ^bb0(%acc: f32, %o: f32):
    %n = arith.negf %acc : f32
    linalg.yield %n : f32
  }
  %u = memref.alloc() : memref<16x16xf32>
  linalg.generic {indexing_maps = [#kfill, #kid], iterator_types = ["parallel", "parallel"]} ins(%zero : f32) outs(%u : memref<16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [#ka, #kb, #kc], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<16x16xf32>, memref<16x16xf32>) outs(%u : memref<16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#ktr, #kid], iterator_types = ["parallel", "parallel"]}
      ins(%u : memref<16x16xf32>) outs(%y : memref<16x16xf32>) {
  ^bb0(%acc: f32, %o: f32):
    %n = arith.negf %acc : f32
    linalg.yield %n : f32
  }
  return
}

// -----

// A reduction long enough to run in chunks (256 x 80 bytes of operands per
// block > chunk-bytes) keeps its partial sums in the temporary between
// chunks: the first chunk starts from the fill's value, the others from
// the temporary; the last one applies the epilogue and stores into its
// output, the others store into the temporary. Neither the fill nor the
// epilogue stays a pass of its own.
// CHECK-LABEL: func.func @chunked_epilogue
// CHECK: %[[T:.*]] = memref.alloc() : memref<8x16xf32>
// CHECK-NOT: linalg.generic
// CHECK: scf.for %[[K0:.*]] = %c0{{.*}} to %c256{{.*}} step %[[STEP:.*]] {
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[K0]], %c0
// CHECK: scf.if %[[FIRST]] -> (vector<8xf32>
// CHECK:   vector.broadcast %cst : f32 to vector<8xf32>
// CHECK: } else {
// CHECK:   vector.load %[[T]]
// CHECK: vector.fma
// CHECK: %[[LAST:.*]] = arith.cmpi eq, %[[K0]], %c{{[0-9]+}}
// CHECK: scf.if %[[LAST]] {
// CHECK:   arith.negf %{{.*}} : vector<8xf32>
// CHECK:   vector.store %{{.*}}, %arg2
// CHECK: } else {
// CHECK:   vector.store %{{.*}}, %[[T]]
// CHECK-NOT: linalg.generic
// CHECK: return
#ca = affine_map<(f, k, p) -> (k, p)>
#cb = affine_map<(f, k, p) -> (f, k)>
#cc = affine_map<(f, k, p) -> (f, p)>
#cid = affine_map<(f, p) -> (f, p)>
#cfill = affine_map<(f, p) -> ()>
func.func @chunked_epilogue(%x: memref<256x16xf32>, %w: memref<8x256xf32>, %y: memref<8x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<8x16xf32>
  linalg.generic {indexing_maps = [#cfill, #cid], iterator_types = ["parallel", "parallel"]} ins(%zero : f32) outs(%t : memref<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [#ca, #cb, #cc], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<256x16xf32>, memref<8x256xf32>) outs(%t : memref<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#cid, #cid], iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<8x16xf32>) outs(%y : memref<8x16xf32>) {
  ^bb0(%acc: f32, %o: f32):
    %n = arith.negf %acc : f32
    linalg.yield %n : f32
  }
  return
}

// -----

// A depthwise convolution into a stack tile (2 channels x 4 rows x 16
// columns) whose epilogue reads the tile through a reshape (2 x 64): the
// epilogue's indices are the same linear offset's, (c, 16 * r + w), each
// view index its group of tile indices linearized (a collapse: nothing is
// divided to take a linear offset apart again).
// CHECK-LABEL: func.func @reshaped_epilogue
// CHECK-NOT: memref.alloca
// CHECK-NOT: linalg.generic
// CHECK: vector.fma
// CHECK: %[[M:.*]] = affine.linearize_index disjoint [%{{.*}}, %{{.*}}] by (4, 16) : index
// CHECK-NOT: affine.delinearize_index
// CHECK: memref.load %{{.*}} : memref<2xf32>
// CHECK: arith.addf %{{.*}} : vector<8xf32>
// CHECK: vector.store %{{.*}}, %{{.*}}[%{{.*}}, %[[M]]] : memref<2x64xf32>, vector<8xf32>
#da = affine_map<(c, r, w, kh, kw) -> (c, r + kh, w + kw)>
#db = affine_map<(c, r, w, kh, kw) -> (c, kh, kw)>
#dc = affine_map<(c, r, w, kh, kw) -> (c, r, w)>
#dfill = affine_map<(i) -> ()>
#did = affine_map<(i) -> (i)>
#deid = affine_map<(c, p) -> (c, p)>
#derow = affine_map<(c, p) -> (c)>
func.func @reshaped_epilogue(%x: memref<2x6x18xf32>, %w: memref<2x3x3xf32>, %bias: memref<2xf32>, %y: memref<2x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %t = memref.alloca() {alignment = 64 : i64} : memref<2x4x16xf32>
  %flat = memref.collapse_shape %t [[0, 1, 2]] : memref<2x4x16xf32> into memref<128xf32>
  linalg.generic {indexing_maps = [#dfill, #did], iterator_types = ["parallel"]} ins(%zero : f32) outs(%flat : memref<128xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [#da, #db, #dc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %w : memref<2x6x18xf32>, memref<2x3x3xf32>) outs(%t : memref<2x4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  }
  %rows = memref.collapse_shape %t [[0], [1, 2]] : memref<2x4x16xf32> into memref<2x64xf32>
  linalg.generic {indexing_maps = [#deid, #derow, #deid], iterator_types = ["parallel", "parallel"]}
      ins(%rows, %bias : memref<2x64xf32>, memref<2xf32>) outs(%y : memref<2x64xf32>) {
  ^bb0(%acc: f32, %b: f32, %o: f32):
    %s = arith.addf %acc, %b : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// With 4-byte dot products (int8-dot names the intrinsic), dlc-cpu-int8-conv's
// channels-last integer convolution: 16 output channels (two vectors of 8
// lanes, each lane 4 adjacent input channels: 32 bytes of filter) by rows of
// output pixels, whose 4 input bytes are loaded as one i32 and broadcast.
// The 4-step innermost reduction is the dot product instruction's own.
// AArch64's sdot multiplies signed by signed bytes: this unsigned x signed
// contraction is not its (the integer multiply-adds stay).
// SDOT-LABEL: func.func @dot_channels
// SDOT-NOT: llvm.call_intrinsic
// Without VNNI (x86 AVX2), each dot product from two pmaddwd: the broadcast
// activations' bytes (unsigned) and the filter's (signed) split into even
// and odd bytes as 16-bit lanes, once per vector.
// PAIRS-LABEL: func.func @dot_channels
// PAIRS: %[[UB:.*]] = vector.bitcast %{{.*}} : vector<8xi32> to vector<32xi8>
// PAIRS: %[[U:.*]] = vector.bitcast %[[UB]] : vector<32xi8> to vector<16xi16>
// PAIRS: %[[UE:.*]] = arith.andi %[[U]], %{{.*}} : vector<16xi16>
// PAIRS: %[[UO:.*]] = arith.shrui %[[U]], %{{.*}} : vector<16xi16>
// PAIRS: %[[V:.*]] = vector.bitcast %{{.*}} : vector<32xi8> to vector<16xi16>
// PAIRS: %[[VL:.*]] = arith.shli %[[V]], %{{.*}} : vector<16xi16>
// PAIRS: %[[VE:.*]] = arith.shrsi %[[VL]], %{{.*}} : vector<16xi16>
// PAIRS: %[[VO:.*]] = arith.shrsi %[[V]], %{{.*}} : vector<16xi16>
// PAIRS: %[[E:.*]] = llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%[[UE]], %[[VE]]) : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>
// PAIRS: %[[O:.*]] = llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%[[UO]], %[[VO]])
// PAIRS: %[[S:.*]] = arith.addi %[[E]], %[[O]] : vector<8xi32>
// PAIRS: arith.addi %{{.*}}, %[[S]] : vector<8xi32>
// PAIRS-NOT: arith.andi %[[U]]
// PAIRS: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%[[UE]]
// PAIRS-NOT: linalg.generic
// DOT-LABEL: func.func @dot_channels
// DOT: scf.for
// DOT-COUNT-2: vector.load %{{.*}} : memref<1x2x1x1x16x4xi8>, vector<32xi8>
// DOT: %[[FOUR:.*]] = vector.load %{{.*}} : memref<1x2x5x5x4xi8>, vector<4xi8>
// DOT: %[[WORD:.*]] = vector.bitcast %[[FOUR]] : vector<4xi8> to vector<1xi32>
// DOT: %[[W:.*]] = vector.extract %[[WORD]][0] : i32 from vector<1xi32>
// DOT: %[[SPLAT:.*]] = vector.broadcast %[[W]] : i32 to vector<8xi32>
// DOT: %[[BYTES:.*]] = vector.bitcast %[[SPLAT]] : vector<8xi32> to vector<32xi8>
// DOT: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"(%{{.*}}, %[[BYTES]], %{{.*}}) : (vector<8xi32>, vector<32xi8>, vector<32xi8>) -> vector<8xi32>
// DOT-NOT: linalg.generic
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d5, d1 + d6, d2 + d7, d8)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d3, d5, d6, d7, d4, d8)>
#o = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d2, d3, d4)>
func.func @dot_channels(%x: memref<1x2x5x5x4xi8>, %w: memref<1x2x1x1x16x4xi8>, %out: memref<1x5x5x1x16xi32>) {
  linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x2x5x5x4xi8>, memref<1x2x1x1x16x4xi8>) outs(%out : memref<1x5x5x1x16xi32>) {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %0 = arith.extui %a : i8 to i32
    %1 = arith.extsi %b : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  return
}

// -----

// The same over a workgroup of 2 output rows by 14 columns: both could be
// the rows of a block; the columns, the longer, are (4 of them a block with
// 8 accumulators, then one of 2), the output rows an outer loop.
// DOT-LABEL: func.func @dot_channels_columns
// DOT: scf.for %[[OH:.*]] = %{{.*}} to %c2 step
// DOT: scf.for %{{.*}} = %{{.*}} to %c12 step %c4
// DOT-COUNT-8: vector.load %arg2[%{{.*}}, %[[OH]], %{{.*}}] : memref<1x2x14x1x16xi32>, vector<8xi32>
// DOT-COUNT-8: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"
// DOT: scf.for %{{.*}} = %{{.*}} to %c16 step %c16
// DOT-COUNT-4: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d5, d1 + d6, d2 + d7, d8)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d3, d5, d6, d7, d4, d8)>
#o = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d2, d3, d4)>
func.func @dot_channels_columns(%x: memref<1x2x4x16x4xi8>, %w: memref<1x2x3x3x16x4xi8>, %out: memref<1x2x14x1x16xi32>) {
  linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x2x4x16x4xi8>, memref<1x2x3x3x16x4xi8>) outs(%out : memref<1x2x14x1x16xi32>) {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %0 = arith.extui %a : i8 to i32
    %1 = arith.extsi %b : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  return
}

// -----

// Along pixels: a's vectors are 8 pixels x 4 input channels of a window
// `ow + kw`, the filter's 4 bytes broadcast per output channel (row). 12
// pixels are one vector and one of 4 lanes, whose bytes are loaded under a
// mask of 16 (4 lanes x 4 bytes); the signed filter is the second operand.
// DOT-LABEL: func.func @dot_pixels
// DOT: vector.load %{{.*}} : memref<1x1x6x14x4xi8>, vector<32xi8>
// DOT: vector.create_mask %c16{{.*}} : vector<32xi1>
// DOT: vector.maskedload %{{.*}} : memref<1x1x6x14x4xi8>, vector<32xi1>, vector<32xi8> into vector<32xi8>
// DOT: vector.load %{{.*}} : memref<2x1x3x3x4xi8>, vector<4xi8>
// DOT: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"
// DOT: vector.maskedstore
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d4, d2 + d5, d3 + d6, d7)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d4, d5, d6, d7)>
#o = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3)>
func.func @dot_pixels(%x: memref<1x1x6x14x4xi8>, %w: memref<2x1x3x3x4xi8>, %out: memref<1x2x4x12xi32>) {
  linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x1x6x14x4xi8>, memref<2x1x3x3x4xi8>) outs(%out : memref<1x2x4x12xi32>) {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %0 = arith.extui %a : i8 to i32
    %1 = arith.extsi %b : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  return
}

// -----

// Integer multiply-adds from bytes without dot products (a depthwise
// convolution: the rows are the output's, a loop of the input): vectors of
// 8 input bytes zero-extended to i32, the filter byte sign-extended and
// broadcast, then muli and addi on i32 accumulators.
// CHECK-LABEL: func.func @integer_depthwise
// CHECK: vector.load %{{.*}} : memref<2x6x20xi8>, vector<8xi8>
// CHECK: arith.extui %{{.*}} : vector<8xi8> to vector<8xi32>
// CHECK: memref.load %{{.*}} : memref<2x3x3xi8>
// CHECK: arith.extsi %{{.*}} : i8 to i32
// CHECK: vector.broadcast %{{.*}} : i32 to vector<8xi32>
// CHECK: arith.muli %{{.*}} : vector<8xi32>
// CHECK: arith.addi %{{.*}} : vector<8xi32>
// CHECK-NOT: linalg.generic
// With dot products the 3-tap window is the dot product's reduction: one
// load of 32 bytes from each vector's first tap (masked to the row's
// end), a byte shuffle giving lane l the taps l .. l + 3, and the filter's
// 3 bytes padded with a zero to 4 and broadcast.
// Without a byte shuffle across the vector (window-dot=false), the
// depthwise window stays a multiply-add per tap.
// PAIRS-LABEL: func.func @integer_depthwise
// PAIRS-NOT: llvm.call_intrinsic
// PAIRS: arith.muli %{{.*}} : vector<8xi32>
// PAIRS-NOT: llvm.call_intrinsic
// PAIRS-LABEL: func.func @dot_pixels_stride2
// DOT-LABEL: func.func @integer_depthwise
// DOT: vector.load %{{.*}} : memref<2x3x3xi8>, vector<3xi8>
// DOT: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3] : vector<3xi8>, vector<3xi8>
// DOT: vector.bitcast %{{.*}} : vector<4xi8> to vector<1xi32>
// DOT: vector.maskedload %{{.*}} : memref<2x6x20xi8>, vector<32xi1>, vector<32xi8> into vector<32xi8>
// DOT: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 1, 2, 3, 4, 2, 3, 4, 5, 3, 4, 5, 6, 4, 5, 6, 7, 5, 6, 7, 8, 6, 7, 8, 9, 7, 8, 9, 10] : vector<32xi8>, vector<32xi8>
// DOT: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"
// DOT-NOT: arith.muli %{{.*}} : vector<8xi32>
#x = affine_map<(c, y, x, i, j) -> (c, y + i, x + j)>
#w = affine_map<(c, y, x, i, j) -> (c, i, j)>
#o = affine_map<(c, y, x, i, j) -> (c, y, x)>
func.func @integer_depthwise(%x: memref<2x6x20xi8>, %w: memref<2x3x3xi8>, %out: memref<2x4x18xi32>) {
  linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %w : memref<2x6x20xi8>, memref<2x3x3xi8>) outs(%out : memref<2x4x18xi32>) {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %0 = arith.extui %a : i8 to i32
    %1 = arith.extsi %b : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  return
}

// -----

// Along pixels at stride 2: each vector of a is the even groups of 4 bytes
// of 16 contiguous ones, two loads bitcast to i32 lanes and shuffled; the
// second load, and both in the partial block, are masked to the groups a
// block needs.
// CHECK-LABEL: func.func @dot_pixels_stride2
// DOT-LABEL: func.func @dot_pixels_stride2
// DOT: vector.load %{{.*}} : memref<1x1x3x40x4xi8>, vector<32xi8>
// DOT: vector.bitcast %{{.*}} : vector<32xi8> to vector<8xi32>
// DOT: vector.maskedload %{{.*}} : memref<1x1x3x40x4xi8>, vector<32xi1>, vector<32xi8> into vector<32xi8>
// DOT: vector.shuffle %{{.*}}, %{{.*}} [0, 2, 4, 6, 8, 10, 12, 14] : vector<8xi32>, vector<8xi32>
// DOT: vector.bitcast %{{.*}} : vector<8xi32> to vector<32xi8>
// DOT: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d4, d2 + d5, d3 * 2 + d6, d7)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d4, d5, d6, d7)>
#o = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3)>
func.func @dot_pixels_stride2(%x: memref<1x1x3x40x4xi8>, %w: memref<2x1x1x3x4xi8>, %out: memref<1x2x3x12xi32>) {
  linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x1x3x40x4xi8>, memref<2x1x1x3x4xi8>) outs(%out : memref<1x2x3x12xi32>) {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %0 = arith.extui %a : i8 to i32
    %1 = arith.extsi %b : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  return
}

// -----

// A weight dequantized in the body (MatMulNBits, columns innermost): 4-bit
// fields of bytes B[kb, j, n] (field f of byte j is k = 2 j + f), minus the
// block's zero point Z[kb, n] (bytes), times its scale S[kb, n], times
// A[m, kb, j, f]. Z and S stay the same through a block's loops (j, f), so
// a block's steps multiply A by the bare field Q (bytes loaded along the
// columns, the field's shift a loop index, the same for every lane,
// broadcast) into sums of their own that start at zero, beside each row's
// sum of A; after the block, acc + S * (sum - Z * sum(A)), S and Z loaded
// once per block. 3 rows x 20 columns: blocks of 2 rows x 2 vectors, then
// the last row, then one masked vector for the last 4 columns.
// CHECK-LABEL: func.func @dequantized_weight
// CHECK: %[[ZERO:[a-z0-9_]+]] = arith.constant dense<0.000000e+00> : vector<8xf32>
// CHECK: scf.for %[[KB:[a-z0-9_]+]] = {{.*}} iter_args(%[[ACC:[a-z0-9_]+]] = 
// CHECK:   %[[BLK:[a-z0-9_]+]]:6 = scf.for {{.*}} iter_args(%{{[a-z0-9_]+}} = %[[ZERO]], %{{[a-z0-9_]+}} = %[[ZERO]], %{{[a-z0-9_]+}} = %[[ZERO]], %{{[a-z0-9_]+}} = %[[ZERO]], %{{[a-z0-9_]+}} = %[[ZERO]], %{{[a-z0-9_]+}} = %[[ZERO]])
// CHECK:     scf.for %[[F:[a-z0-9_]+]] = {{.*}} iter_args
// CHECK:       vector.load %{{.*}} : memref<2x8x20xi8>, vector<8xi8>
// CHECK-NOT:   memref<2x20x
// CHECK:       arith.remui %[[F]]
// CHECK:       vector.broadcast %{{.*}} : i8 to vector<8xi8>
// CHECK:       arith.shrui %{{.*}} : vector<8xi8>
// CHECK:       arith.andi %{{.*}} : vector<8xi8>
// CHECK:       %[[Q:[a-z0-9_]+]] = arith.uitofp %{{.*}} : vector<8xi8> to vector<8xf32>
// CHECK-NOT:   arith.subf
// CHECK-NOT:   arith.mulf
// CHECK:       %[[X:[a-z0-9_]+]] = memref.load %{{.*}} : memref<3x2x8x2xf32>
// CHECK:       %[[XV:[a-z0-9_]+]] = vector.broadcast %[[X]]
// CHECK:       vector.fma %[[Q]], %[[XV]], %{{.*}}
// CHECK:       arith.addf %{{.*}}, %[[XV]] : vector<8xf32>
// CHECK:   %[[NEG:[a-z0-9_]+]] = arith.negf %[[BLK]]#4
// CHECK:   %[[S:[a-z0-9_]+]] = vector.load %{{.*}}[%[[KB]], %{{.*}}] : memref<2x20xf32>, vector<8xf32>
// CHECK:   %[[ZB:[a-z0-9_]+]] = vector.load %{{.*}}[%[[KB]], %{{.*}}] : memref<2x20xi8>, vector<8xi8>
// CHECK:   %[[Z:[a-z0-9_]+]] = arith.uitofp %[[ZB]]
// CHECK:   %[[D:[a-z0-9_]+]] = vector.fma %[[NEG]], %[[Z]], %[[BLK]]#0
// CHECK:   vector.fma %[[D]], %[[S]], %[[ACC]]
// CHECK: vector.create_mask %c4
// CHECK: vector.maskedload %{{.*}} : memref<2x8x20xi8>, vector<8xi1>, vector<8xi8> into vector<8xi8>
// CHECK-NOT: linalg.generic
#qa = affine_map<(m, n, kb, j, f) -> (m, kb, j, f)>
#qb = affine_map<(m, n, kb, j, f) -> (kb, j, n)>
#qs = affine_map<(m, n, kb, j, f) -> (kb, n)>
#qo = affine_map<(m, n, kb, j, f) -> (m, n)>
func.func @dequantized_weight(%a: memref<3x2x8x2xf32>, %b: memref<2x8x20xi8>, %s: memref<2x20xf32>, %z: memref<2x20xi8>, %y: memref<3x20xf32>) {
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : i8
  %c15 = arith.constant 15 : i8
  linalg.generic {indexing_maps = [#qa, #qb, #qs, #qs, #qo], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%a, %b, %s, %z : memref<3x2x8x2xf32>, memref<2x8x20xi8>, memref<2x20xf32>, memref<2x20xi8>) outs(%y : memref<3x20xf32>) {
  ^bb0(%x: f32, %byte: i8, %scale: f32, %zp: i8, %acc: f32):
    %f = linalg.index 4 : index
    %slot = arith.remui %f, %c2 : index
    %slot8 = arith.index_castui %slot : index to i8
    %shift = arith.muli %slot8, %c4 : i8
    %sh = arith.shrui %byte, %shift : i8
    %q = arith.andi %sh, %c15 : i8
    %qf = arith.uitofp %q : i8 to f32
    %zf = arith.uitofp %zp : i8 to f32
    %c = arith.subf %qf, %zf : f32
    %w = arith.mulf %c, %scale : f32
    %p = arith.mulf %x, %w : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A float16 activation (MatMulNBits with T1 = float16) is loaded in its
// type and extended after the load, like any 16-bit operand.
// CHECK-LABEL: func.func @dequantized_weight_f16_activation
// CHECK:       scf.for
// CHECK:         %[[XH:[a-z0-9_]+]] = memref.load %{{.*}} : memref<1x2x8x2xf16>
// CHECK:         %[[XF:[a-z0-9_]+]] = arith.extf %[[XH]] : f16 to f32
// CHECK:         %[[XV:[a-z0-9_]+]] = vector.broadcast %[[XF]]
// CHECK:         vector.fma %{{.*}}, %[[XV]], %{{.*}}
// CHECK-NOT: linalg.generic
#ha = affine_map<(m, n, kb, j, f) -> (m, kb, j, f)>
#hb = affine_map<(m, n, kb, j, f) -> (kb, j, n)>
#hs = affine_map<(m, n, kb, j, f) -> (kb, n)>
#ho = affine_map<(m, n, kb, j, f) -> (m, n)>
func.func @dequantized_weight_f16_activation(%a: memref<1x2x8x2xf16>, %b: memref<2x8x16xi8>, %s: memref<2x16xf32>, %y: memref<1x16xf32>) {
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : i8
  %c15 = arith.constant 15 : i8
  %c8 = arith.constant 8.0 : f32
  linalg.generic {indexing_maps = [#ha, #hb, #hs, #ho], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%a, %b, %s : memref<1x2x8x2xf16>, memref<2x8x16xi8>, memref<2x16xf32>) outs(%y : memref<1x16xf32>) {
  ^bb0(%x: f16, %byte: i8, %scale: f32, %acc: f32):
    %f = linalg.index 4 : index
    %slot = arith.remui %f, %c2 : index
    %slot8 = arith.index_castui %slot : index to i8
    %shift = arith.muli %slot8, %c4 : i8
    %sh = arith.shrui %byte, %shift : i8
    %q = arith.andi %sh, %c15 : i8
    %qf = arith.uitofp %q : i8 to f32
    %c = arith.subf %qf, %c8 : f32
    %w = arith.mulf %c, %scale : f32
    %xf = arith.extf %x : f16 to f32
    %p = arith.mulf %xf, %w : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A scale that changes within a block's loops (one per byte here) is no
// block factor: the weight is dequantized whole at every step, as the
// body says.
// CHECK-LABEL: func.func @dequantized_weight_scale_per_byte
// CHECK:       scf.for
// CHECK:         arith.uitofp %{{.*}} : vector<8xi8> to vector<8xf32>
// CHECK:         arith.subf %{{.*}} : vector<8xf32>
// CHECK:         arith.mulf %{{.*}} : vector<8xf32>
// CHECK:         vector.fma
// CHECK-NOT:   arith.negf
// CHECK: return
#pa = affine_map<(m, n, kb, j, f) -> (m, kb, j, f)>
#pb = affine_map<(m, n, kb, j, f) -> (kb, j, n)>
#pz = affine_map<(m, n, kb, j, f) -> (kb, n)>
#po = affine_map<(m, n, kb, j, f) -> (m, n)>
func.func @dequantized_weight_scale_per_byte(%a: memref<3x2x8x2xf32>, %b: memref<2x8x20xi8>, %s: memref<2x8x20xf32>, %z: memref<2x20xi8>, %y: memref<3x20xf32>) {
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : i8
  %c15 = arith.constant 15 : i8
  linalg.generic {indexing_maps = [#pa, #pb, #pb, #pz, #po], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%a, %b, %s, %z : memref<3x2x8x2xf32>, memref<2x8x20xi8>, memref<2x8x20xf32>, memref<2x20xi8>) outs(%y : memref<3x20xf32>) {
  ^bb0(%x: f32, %byte: i8, %scale: f32, %zp: i8, %acc: f32):
    %f = linalg.index 4 : index
    %slot = arith.remui %f, %c2 : index
    %slot8 = arith.index_castui %slot : index to i8
    %shift = arith.muli %slot8, %c4 : i8
    %sh = arith.shrui %byte, %shift : i8
    %q = arith.andi %sh, %c15 : i8
    %qf = arith.uitofp %q : i8 to f32
    %zf = arith.uitofp %zp : i8 to f32
    %c = arith.subf %qf, %zf : f32
    %w = arith.mulf %c, %scale : f32
    %p = arith.mulf %x, %w : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Signed x signed bytes (dlc-cpu-int8-conv with signed-dot repacks the
// activations as signed bytes): AArch64's sdot, 4 lanes of 4 bytes, the
// filter's 4 bytes broadcast; VNNI's unsigned x signed instruction does not
// take it.
// SDOT-LABEL: func.func @dot_signed
// SDOT: llvm.call_intrinsic "llvm.aarch64.neon.sdot.v4i32.v16i8"(%{{.*}}, %{{.*}}, %{{.*}}) : (vector<4xi32>, vector<16xi8>, vector<16xi8>) -> vector<4xi32>
// SDOT-NOT: linalg.generic
// DOT-LABEL: func.func @dot_signed
// DOT-NOT: llvm.call_intrinsic
// CHECK-LABEL: func.func @dot_signed
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d5, d1 + d6, d2 + d7, d8)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d3, d5, d6, d7, d4, d8)>
#o = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d2, d3, d4)>
func.func @dot_signed(%x: memref<1x2x5x5x4xi8>, %w: memref<1x2x1x1x8x4xi8>, %out: memref<1x5x5x1x8xi32>) {
  linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x2x5x5x4xi8>, memref<1x2x1x1x8x4xi8>) outs(%out : memref<1x5x5x1x8xi32>) {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %0 = arith.extsi %a : i8 to i32
    %1 = arith.extsi %b : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  return
}

// -----

// 80 columns of 16 lanes: blocks of two vectors would end in a block of
// one, so with 32 registers (AVX-512) each row block is all 5 vectors x 4
// rows, 20 accumulators, and no narrower block follows.
// AVX512-LABEL: func.func @five_vectors
// AVX512: scf.for %{{.*}} = %c0{{.*}} to %c8{{.*}} step %c4
// AVX512: %[[R:.*]]:20 = scf.for {{.*}} -> (vector<16xf32>,
// AVX512-COUNT-5: vector.load %{{.*}} : memref<32x80xf32>, vector<16xf32>
// AVX512-COUNT-20: vector.fma
// AVX512-NOT: vector.create_mask
// AVX512: return
#fa = affine_map<(i, j, k) -> (i, k)>
#fb = affine_map<(i, j, k) -> (k, j)>
#fc = affine_map<(i, j, k) -> (i, j)>
func.func @five_vectors(%a: memref<8x32xf32>, %b: memref<32x80xf32>, %c: memref<8x80xf32>) {
  linalg.generic {indexing_maps = [#fa, #fb, #fc], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x32xf32>, memref<32x80xf32>) outs(%c : memref<8x80xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %z, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A stride-2 depthwise convolution reading a workgroup's padded tile (a
// bufferized tensor.pad: the tile filled with zeros, then rows [%r0,
// %r0 + %n) of the input copied to row %at, column 1; an scf.if takes the
// filled tile alone when no row is copied). The split into even and odd
// columns reads the input's rows instead of the tile: input column j is
// tile column j + 1, so the input's even columns are the tile's odd ones
// from 0 and its odd columns the tile's even ones from 1; tile column 0,
// and every column of a row that no input row fills, get the zero. The
// tile, its fill and its copy are gone; each step loads one vector of a
// phase (no shuffles in the loop; masked: 4 output columns).
// CHECK-LABEL: func.func @padded_tile
// DOT-LABEL: func.func @padded_tile(
// NEON-LABEL: func.func @padded_tile(
// NEON16-LABEL: func.func @padded_tile(
// SDOT-LABEL: func.func @padded_tile(
// AVX512-LABEL: func.func @padded_tile(
// PAIRS-LABEL: func.func @padded_tile(
// INLANE-LABEL: func.func @padded_tile(
// CHECK-NOT: -> (memref<2x9x9xf32>)
// CHECK: %[[P:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x9x2x5xf32>
// CHECK: %[[SRC:.*]] = memref.subview %{{.*}}[0, %{{.*}}, 0] [2, %{{.*}}, 8] [1, 1, 1]
// CHECK: arith.cmpi ult
// CHECK: scf.if
// CHECK:   vector.load %[[SRC]]
// CHECK:   vector.shuffle {{.*}} [0, 2, 4, 6, 8, 10, 12, 14]
// CHECK:   vector.maskedstore %[[P]][%{{.*}}, %{{.*}}, %c1{{.*}}, %{{.*}}]
// CHECK:   vector.shuffle {{.*}} [1, 3, 5, 7, 9, 11, 13, 15]
// CHECK:   vector.maskedstore %[[P]][%{{.*}}, %{{.*}}, %c0{{.*}}, %{{.*}}]
// CHECK:   memref.store %{{.*}}, %[[P]][%{{.*}}, %{{.*}}, %c0{{.*}}, %c0{{.*}}]
// CHECK-NOT: memref.store
// CHECK: } else {
// CHECK:   vector.maskedstore %[[P]]
// CHECK:   vector.maskedstore %[[P]]
// CHECK: scf.for {{.*}} iter_args
// CHECK-NOT: vector.shuffle
// CHECK: vector.maskedload %[[P]]
// CHECK-NOT: vector.shuffle
// CHECK: memref.dealloc %[[P]]
// CHECK-NOT: linalg.generic
// CHECK-NOT: memref<2x9x9xf32>
// CHECK: return
#tin = affine_map<(c, h, w, kh, kw) -> (c, h * 2 + kh, w * 2 + kw)>
#tw = affine_map<(c, h, w, kh, kw) -> (c, kh, kw)>
#tout = affine_map<(c, h, w, kh, kw) -> (c, h, w)>
#flat = affine_map<(d0) -> (d0)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @padded_tile(%in: memref<2x16x8xf32>, %w: memref<2x3x3xf32>, %out: memref<2x4x4xf32>, %r0: index, %n: index, %at: index) {
  %cst = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %empty = arith.cmpi eq, %n, %c0 : index
  %tile = scf.if %empty -> (memref<2x9x9xf32>) {
    %t = memref.alloc() {alignment = 64 : i64} : memref<2x9x9xf32>
    %tf = memref.collapse_shape %t [[0, 1, 2]] : memref<2x9x9xf32> into memref<162xf32>
    linalg.generic {indexing_maps = [#flat], iterator_types = ["parallel"]} outs(%tf : memref<162xf32>) {
    ^bb0(%o: f32):
      linalg.yield %cst : f32
    }
    scf.yield %t : memref<2x9x9xf32>
  } else {
    %src = memref.subview %in[0, %r0, 0] [2, %n, 8] [1, 1, 1] : memref<2x16x8xf32> to memref<2x?x8xf32, strided<[128, 8, 1], offset: ?>>
    %t = memref.alloc() {alignment = 64 : i64} : memref<2x9x9xf32>
    %tf = memref.collapse_shape %t [[0, 1, 2]] : memref<2x9x9xf32> into memref<162xf32>
    linalg.generic {indexing_maps = [#flat], iterator_types = ["parallel"]} outs(%tf : memref<162xf32>) {
    ^bb0(%o: f32):
      linalg.yield %cst : f32
    }
    %mid = memref.subview %t[0, %at, 1] [2, %n, 8] [1, 1, 1] : memref<2x9x9xf32> to memref<2x?x8xf32, strided<[81, 9, 1], offset: ?>>
    linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%src : memref<2x?x8xf32, strided<[128, 8, 1], offset: ?>>) outs(%mid : memref<2x?x8xf32, strided<[81, 9, 1], offset: ?>>) {
    ^bb0(%x: f32, %y: f32):
      linalg.yield %x : f32
    }
    scf.yield %t : memref<2x9x9xf32>
  }
  linalg.generic {indexing_maps = [#tin, #tw, #tout], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%tile, %w : memref<2x9x9xf32>, memref<2x3x3xf32>) outs(%out : memref<2x4x4xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %z, %m : f32
    linalg.yield %s : f32
  }
  %base, %offset, %sizes:3, %strides:3 = memref.extract_strided_metadata %tile : memref<2x9x9xf32> -> memref<f32>, index, index, index, index, index, index, index
  memref.dealloc %base : memref<f32>
  return
}

// -----

// The same tile read by something else too: it stays, and the
// contraction reads it through shuffles (as without a tile).
// CHECK-LABEL: func.func @padded_tile_shared
// CHECK: scf.if %{{.*}} -> (memref<2x9x9xf32>)
// CHECK-NOT: memref<2x9x2x5xf32>
// CHECK: vector.shuffle
// CHECK: memref.load %{{.*}} : memref<2x9x9xf32>
#sin = affine_map<(c, h, w, kh, kw) -> (c, h * 2 + kh, w * 2 + kw)>
#sw = affine_map<(c, h, w, kh, kw) -> (c, kh, kw)>
#sout = affine_map<(c, h, w, kh, kw) -> (c, h, w)>
#sflat = affine_map<(d0) -> (d0)>
#sid3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @padded_tile_shared(%in: memref<2x16x8xf32>, %w: memref<2x3x3xf32>, %out: memref<2x4x4xf32>, %r0: index, %n: index, %at: index) -> f32 {
  %cst = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %empty = arith.cmpi eq, %n, %c0 : index
  %tile = scf.if %empty -> (memref<2x9x9xf32>) {
    %t = memref.alloc() {alignment = 64 : i64} : memref<2x9x9xf32>
    %tf = memref.collapse_shape %t [[0, 1, 2]] : memref<2x9x9xf32> into memref<162xf32>
    linalg.generic {indexing_maps = [#sflat], iterator_types = ["parallel"]} outs(%tf : memref<162xf32>) {
    ^bb0(%o: f32):
      linalg.yield %cst : f32
    }
    scf.yield %t : memref<2x9x9xf32>
  } else {
    %src = memref.subview %in[0, %r0, 0] [2, %n, 8] [1, 1, 1] : memref<2x16x8xf32> to memref<2x?x8xf32, strided<[128, 8, 1], offset: ?>>
    %t = memref.alloc() {alignment = 64 : i64} : memref<2x9x9xf32>
    %tf = memref.collapse_shape %t [[0, 1, 2]] : memref<2x9x9xf32> into memref<162xf32>
    linalg.generic {indexing_maps = [#sflat], iterator_types = ["parallel"]} outs(%tf : memref<162xf32>) {
    ^bb0(%o: f32):
      linalg.yield %cst : f32
    }
    %mid = memref.subview %t[0, %at, 1] [2, %n, 8] [1, 1, 1] : memref<2x9x9xf32> to memref<2x?x8xf32, strided<[81, 9, 1], offset: ?>>
    linalg.generic {indexing_maps = [#sid3, #sid3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%src : memref<2x?x8xf32, strided<[128, 8, 1], offset: ?>>) outs(%mid : memref<2x?x8xf32, strided<[81, 9, 1], offset: ?>>) {
    ^bb0(%x: f32, %y: f32):
      linalg.yield %x : f32
    }
    scf.yield %t : memref<2x9x9xf32>
  }
  linalg.generic {indexing_maps = [#sin, #sw, #sout], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%tile, %w : memref<2x9x9xf32>, memref<2x3x3xf32>) outs(%out : memref<2x4x4xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %z, %m : f32
    linalg.yield %s : f32
  }
  %v = memref.load %tile[%c0, %c0, %c0] : memref<2x9x9xf32>
  return %v : f32
}

// -----

// A pooling window over a whole image padded in one alloc (filled with
// -inf, the image copied in whole at row 1, column 2): every tile row has
// an image row or none, known per row; the left two tile columns (the
// even and odd phases' first) and the right one (the odd phase's last)
// get -inf.
// CHECK-LABEL: func.func @padded_pool
// CHECK: %[[P:.*]] = memref.alloc() {alignment = 64 : i64} : memref<3x8x2x6xf32>
// CHECK: arith.cmpi ult
// CHECK: scf.if
// CHECK:   memref.store %{{.*}}, %[[P]][%{{.*}}, %{{.*}}, %c0{{.*}}, %c0{{.*}}]
// CHECK:   memref.store %{{.*}}, %[[P]][%{{.*}}, %{{.*}}, %c1{{.*}}, %c0{{.*}}]
// CHECK:   memref.store %{{.*}}, %[[P]][%{{.*}}, %{{.*}}, %c1{{.*}}, %c5{{.*}}]
// CHECK-NOT: memref.store
// CHECK: } else {
// CHECK: arith.maximumf
// CHECK-NOT: memref<3x8x12xf32>
// CHECK: return
#pin2 = affine_map<(c, h, w, kh, kw) -> (c, h * 2 + kh, w * 2 + kw)>
#pwin2 = affine_map<(c, h, w, kh, kw) -> (kh, kw)>
#pout2 = affine_map<(c, h, w, kh, kw) -> (c, h, w)>
#pfill = affine_map<(d0) -> ()>
#pflat = affine_map<(d0) -> (d0)>
#pid3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @padded_pool(%in: memref<3x6x9xf32>, %win: memref<3x3xf32>, %out: memref<3x3x5xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %t = memref.alloc() {alignment = 64 : i64} : memref<3x8x12xf32>
  %tf = memref.collapse_shape %t [[0, 1, 2]] : memref<3x8x12xf32> into memref<288xf32>
  linalg.generic {indexing_maps = [#pfill, #pflat], iterator_types = ["parallel"]} ins(%ninf : f32) outs(%tf : memref<288xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  %mid = memref.subview %t[0, 1, 2] [3, 6, 9] [1, 1, 1] : memref<3x8x12xf32> to memref<3x6x9xf32, strided<[96, 12, 1], offset: 14>>
  linalg.generic {indexing_maps = [#pid3, #pid3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%in : memref<3x6x9xf32>) outs(%mid : memref<3x6x9xf32, strided<[96, 12, 1], offset: 14>>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [#pin2, #pwin2, #pout2], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%t, %win : memref<3x8x12xf32>, memref<3x3xf32>) outs(%out : memref<3x3x5xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %m = arith.maximumf %z, %x : f32
    linalg.yield %m : f32
  }
  memref.dealloc %t : memref<3x8x12xf32>
  return
}

// -----

// A branch that also reads its filled tile (into a buffer of the
// function's): not a padded tile; it stays, and the contraction reads it
// through shuffles.
// CHECK-LABEL: func.func @padded_tile_read_in_branch
// CHECK: scf.if %{{.*}} -> (memref<2x9x9xf32>)
// CHECK-NOT: memref<2x9x2x5xf32>
// CHECK: vector.shuffle
#rin = affine_map<(c, h, w, kh, kw) -> (c, h * 2 + kh, w * 2 + kw)>
#rw = affine_map<(c, h, w, kh, kw) -> (c, kh, kw)>
#rout = affine_map<(c, h, w, kh, kw) -> (c, h, w)>
#rflat = affine_map<(d0) -> (d0)>
#rid3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @padded_tile_read_in_branch(%in: memref<2x16x8xf32>, %w: memref<2x3x3xf32>, %out: memref<2x4x4xf32>, %seen: memref<2x9x9xf32>, %r0: index, %n: index, %at: index) {
  %cst = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %empty = arith.cmpi eq, %n, %c0 : index
  %tile = scf.if %empty -> (memref<2x9x9xf32>) {
    %t = memref.alloc() {alignment = 64 : i64} : memref<2x9x9xf32>
    %tf = memref.collapse_shape %t [[0, 1, 2]] : memref<2x9x9xf32> into memref<162xf32>
    linalg.generic {indexing_maps = [#rflat], iterator_types = ["parallel"]} outs(%tf : memref<162xf32>) {
    ^bb0(%o: f32):
      linalg.yield %cst : f32
    }
    linalg.generic {indexing_maps = [#rid3, #rid3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%t : memref<2x9x9xf32>) outs(%seen : memref<2x9x9xf32>) {
    ^bb0(%x: f32, %y: f32):
      linalg.yield %x : f32
    }
    scf.yield %t : memref<2x9x9xf32>
  } else {
    %src = memref.subview %in[0, %r0, 0] [2, %n, 8] [1, 1, 1] : memref<2x16x8xf32> to memref<2x?x8xf32, strided<[128, 8, 1], offset: ?>>
    %t = memref.alloc() {alignment = 64 : i64} : memref<2x9x9xf32>
    %tf = memref.collapse_shape %t [[0, 1, 2]] : memref<2x9x9xf32> into memref<162xf32>
    linalg.generic {indexing_maps = [#rflat], iterator_types = ["parallel"]} outs(%tf : memref<162xf32>) {
    ^bb0(%o: f32):
      linalg.yield %cst : f32
    }
    %mid = memref.subview %t[0, %at, 1] [2, %n, 8] [1, 1, 1] : memref<2x9x9xf32> to memref<2x?x8xf32, strided<[81, 9, 1], offset: ?>>
    linalg.generic {indexing_maps = [#rid3, #rid3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%src : memref<2x?x8xf32, strided<[128, 8, 1], offset: ?>>) outs(%mid : memref<2x?x8xf32, strided<[81, 9, 1], offset: ?>>) {
    ^bb0(%x: f32, %y: f32):
      linalg.yield %x : f32
    }
    scf.yield %t : memref<2x9x9xf32>
  }
  linalg.generic {indexing_maps = [#rin, #rw, #rout], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%tile, %w : memref<2x9x9xf32>, memref<2x3x3xf32>) outs(%out : memref<2x4x4xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %z, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A stride-1 convolution over a padded tile of whole input rows (rows
// [%r0, %r0 + %n) of a 12-column input copied to row %at, column 1; an
// scf.if takes the filled tile alone when no row is copied), whose
// epilogue reads the output's 2 rows and 12 columns as one dim of 24:
// with 8 lanes, rows of 12 take 2 vectors each (4) and the flat run of 24
// pixels 3. The tile's rows are laid out one after another (50 = 4 rows x
// 12 + the 2 padding columns past the last one): when the tile is 4 input
// rows with an input row above and below them, that is the input's own
// memory (a view of it from the first row's start less the left
// padding), else they are copied from the input's rows straight into a
// buffer, the padding around them filled; pixel q reads element
// q + 12 kh + kw, the column taps
// unrolled: tap 0 and tap 2 masked where a lane's column is the row's
// first or last, tap 1 not. With 16 lanes the flat run fills no fewer
// vectors (2 and 2), and with 4 rows of 12 are 3 whole vectors: the tile
// stays.
// CHECK-LABEL: func.func @flat_rows(
// CHECK: %[[F:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x2x50xf32>
// CHECK: %[[R:.*]] = memref.subview %{{.*}}[0, 0, %{{.*}}, 0] [1, 2, %{{.*}}, 12] [1, 1, 1, 1]
// CHECK: %[[S:.*]] = memref.collapse_shape %[[R]] {{\[}}[0], [1], [2, 3]]
// CHECK: %[[IN:.*]] = arith.cmpi sle
// CHECK: %[[V:.*]] = scf.if %{{.*}} -> (memref<1x2x50xf32, strided<[?, ?, 1], offset: ?>>)
// CHECK:   %[[B:.*]], %[[O:.*]], %{{.*}}:4, %[[ST:.*]]:4 = memref.extract_strided_metadata %arg0
// CHECK:   memref.reinterpret_cast %[[B]] to offset: [%{{.*}}], sizes: [1, 2, 50], strides: [%[[ST]]#0, %[[ST]]#1, 1]
// CHECK: } else {
// CHECK:   memref.cast %[[F]]
// CHECK:   vector.maskedstore %[[F]]
// CHECK:   vector.maskedload %[[S]]
// CHECK:   vector.maskedstore %[[F]]
// CHECK:   vector.maskedstore %[[F]]
// CHECK: arith.remui %{{.*}} : vector<8xi32>
// CHECK: arith.cmpi ult
// CHECK: scf.for {{.*}} iter_args
// CHECK: scf.for {{.*}} iter_args
// CHECK-NOT: scf.for
// CHECK: vector.maskedload %[[V]]
// CHECK: vector.maskedload %[[V]]
// CHECK: vector.fma
// CHECK: vector.load %[[V]]
// CHECK: vector.load %[[V]]
// CHECK: vector.fma
// CHECK: vector.maskedload %[[V]]
// CHECK: vector.maskedload %[[V]]
// CHECK: vector.fma
// CHECK: scf.yield
// CHECK: memref.load %{{.*}} : memref<3xf32>
// CHECK: vector.store %{{.*}} : memref<1x3x24xf32>, vector<8xf32>
// CHECK: memref.dealloc %[[F]]
// CHECK-NOT: linalg.generic
// CHECK-NOT: memref<1x2x4x14xf32>
// CHECK: return
// DOT-LABEL: func.func @flat_rows(
// NEON-LABEL: func.func @flat_rows(
// NEON-NOT: memref<1x2x50xf32>
// NEON: scf.if %{{.*}} -> (memref<1x2x4x14xf32>)
// NEON16-LABEL: func.func @flat_rows(
// SDOT-LABEL: func.func @flat_rows(
// AVX512-LABEL: func.func @flat_rows(
// AVX512-NOT: memref<1x2x50xf32>
// AVX512: scf.if %{{.*}} -> (memref<1x2x4x14xf32>)
// PAIRS-LABEL: func.func @flat_rows(
// INLANE-LABEL: func.func @flat_rows(
#qin = affine_map<(f, r, w, c, kh, kw) -> (0, c, r + kh, w + kw)>
#qw = affine_map<(f, r, w, c, kh, kw) -> (f, c, kh, kw)>
#qout = affine_map<(f, r, w, c, kh, kw) -> (0, f, r, w)>
#qid4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#qe = affine_map<(c, p) -> (0, c, p)>
#qb = affine_map<(c, p) -> (c)>
func.func @flat_rows(%in: memref<1x2x8x12xf32>, %w: memref<3x2x3x3xf32>, %bias: memref<3xf32>, %y: memref<1x3x24xf32>, %r0: index, %n: index, %at: index) {
  %zero = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %empty = arith.cmpi eq, %n, %c0 : index
  %tile = scf.if %empty -> (memref<1x2x4x14xf32>) {
    %t = memref.alloc() {alignment = 64 : i64} : memref<1x2x4x14xf32>
    linalg.fill ins(%zero : f32) outs(%t : memref<1x2x4x14xf32>)
    scf.yield %t : memref<1x2x4x14xf32>
  } else {
    %src = memref.subview %in[0, 0, %r0, 0] [1, 2, %n, 12] [1, 1, 1, 1] : memref<1x2x8x12xf32> to memref<1x2x?x12xf32, strided<[192, 96, 12, 1], offset: ?>>
    %t = memref.alloc() {alignment = 64 : i64} : memref<1x2x4x14xf32>
    linalg.fill ins(%zero : f32) outs(%t : memref<1x2x4x14xf32>)
    %mid = memref.subview %t[0, 0, %at, 1] [1, 2, %n, 12] [1, 1, 1, 1] : memref<1x2x4x14xf32> to memref<1x2x?x12xf32, strided<[112, 56, 14, 1], offset: ?>>
    linalg.generic {indexing_maps = [#qid4, #qid4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%src : memref<1x2x?x12xf32, strided<[192, 96, 12, 1], offset: ?>>) outs(%mid : memref<1x2x?x12xf32, strided<[112, 56, 14, 1], offset: ?>>) {
    ^bb0(%x: f32, %o: f32):
      linalg.yield %x : f32
    }
    scf.yield %t : memref<1x2x4x14xf32>
  }
  %acc = memref.alloc() {alignment = 64 : i64} : memref<1x3x2x12xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<1x3x2x12xf32>)
  linalg.generic {indexing_maps = [#qin, #qw, #qout], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%tile, %w : memref<1x2x4x14xf32>, memref<3x2x3x3xf32>) outs(%acc : memref<1x3x2x12xf32>) {
  ^bb0(%x: f32, %k: f32, %o: f32):
    %m = arith.mulf %x, %k : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  %rows = memref.collapse_shape %acc [[0], [1], [2, 3]] : memref<1x3x2x12xf32> into memref<1x3x24xf32>
  linalg.generic {indexing_maps = [#qe, #qb, #qe], iterator_types = ["parallel", "parallel"]}
      ins(%rows, %bias : memref<1x3x24xf32>, memref<3xf32>) outs(%y : memref<1x3x24xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    linalg.yield %s : f32
  }
  %base, %offset, %sizes:4, %strides:4 = memref.extract_strided_metadata %tile : memref<1x2x4x14xf32> -> memref<f32>, index, index, index, index, index, index, index, index, index
  memref.dealloc %base : memref<f32>
  memref.dealloc %acc : memref<1x3x2x12xf32>
  return
}

// -----

// The same convolution whose epilogue reads the output's rows apart (a
// vector may not run from one row into the next there): no flat run, the
// tile stays.
// CHECK-LABEL: func.func @flat_rows_apart(
// CHECK-NOT: memref<1x2x50xf32>
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<1x2x4x14xf32>
// CHECK: vector.fma
// CHECK-NOT: memref<1x2x50xf32>
// CHECK: return
// DOT-LABEL: func.func @flat_rows_apart(
// NEON-LABEL: func.func @flat_rows_apart(
// NEON16-LABEL: func.func @flat_rows_apart(
// SDOT-LABEL: func.func @flat_rows_apart(
// AVX512-LABEL: func.func @flat_rows_apart(
// PAIRS-LABEL: func.func @flat_rows_apart(
// INLANE-LABEL: func.func @flat_rows_apart(
#pin = affine_map<(f, r, w, c, kh, kw) -> (0, c, r + kh, w + kw)>
#pw = affine_map<(f, r, w, c, kh, kw) -> (f, c, kh, kw)>
#pout = affine_map<(f, r, w, c, kh, kw) -> (0, f, r, w)>
#pid4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#pb = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @flat_rows_apart(%in: memref<1x2x8x12xf32>, %w: memref<3x2x3x3xf32>, %bias: memref<3xf32>, %y: memref<1x3x2x12xf32>, %r0: index, %n: index, %at: index) {
  %zero = arith.constant 0.000000e+00 : f32
  %src = memref.subview %in[0, 0, %r0, 0] [1, 2, %n, 12] [1, 1, 1, 1] : memref<1x2x8x12xf32> to memref<1x2x?x12xf32, strided<[192, 96, 12, 1], offset: ?>>
  %t = memref.alloc() {alignment = 64 : i64} : memref<1x2x4x14xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<1x2x4x14xf32>)
  %mid = memref.subview %t[0, 0, %at, 1] [1, 2, %n, 12] [1, 1, 1, 1] : memref<1x2x4x14xf32> to memref<1x2x?x12xf32, strided<[112, 56, 14, 1], offset: ?>>
  linalg.generic {indexing_maps = [#pid4, #pid4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%src : memref<1x2x?x12xf32, strided<[192, 96, 12, 1], offset: ?>>) outs(%mid : memref<1x2x?x12xf32, strided<[112, 56, 14, 1], offset: ?>>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  %acc = memref.alloc() {alignment = 64 : i64} : memref<1x3x2x12xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<1x3x2x12xf32>)
  linalg.generic {indexing_maps = [#pin, #pw, #pout], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%t, %w : memref<1x2x4x14xf32>, memref<3x2x3x3xf32>) outs(%acc : memref<1x3x2x12xf32>) {
  ^bb0(%x: f32, %k: f32, %o: f32):
    %m = arith.mulf %x, %k : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#pid4, #pb, #pid4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%acc, %bias : memref<1x3x2x12xf32>, memref<3xf32>) outs(%y : memref<1x3x2x12xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    linalg.yield %s : f32
  }
  memref.dealloc %t : memref<1x2x4x14xf32>
  memref.dealloc %acc : memref<1x3x2x12xf32>
  return
}

// -----

// A stride-1 convolution over a zero-padded tile of 2 output rows whose
// columns fill whole vectors (no flat run): for each output row r, the
// filter rows kh whose tile row r + kh holds no input row (above %at, or
// past %at + %n) are skipped, the kh loop running over
// [max(0, %at - r), min(3, %at + %n - r)). With a tile padded with ones
// the products there are not zeros: the loop runs over all 3.
// CHECK-LABEL: func.func @padding_rows_skipped(
// CHECK: %[[END:.*]] = arith.addi %arg5, %arg4 : index
// CHECK: %[[LO:.*]] = arith.subi %arg5, %[[G:.*]] : index
// CHECK: %[[FROM:.*]] = arith.maxsi %{{.*}}, %[[LO]] : index
// CHECK: %[[HI:.*]] = arith.subi %[[END]], %[[G]] : index
// CHECK: %[[TO:.*]] = arith.minsi %{{.*}}, %[[HI]] : index
// CHECK: scf.for {{.*}} iter_args
// CHECK: scf.for %{{.*}} = %[[FROM]] to %[[TO]] step %{{.*}} iter_args
// CHECK: vector.fma
// CHECK-LABEL: func.func @padding_rows_of_ones(
// CHECK-NOT: arith.maxsi
// CHECK: vector.fma
// CHECK: return
// DOT-LABEL: func.func @padding_rows_skipped(
// NEON-LABEL: func.func @padding_rows_skipped(
// NEON16-LABEL: func.func @padding_rows_skipped(
// SDOT-LABEL: func.func @padding_rows_skipped(
// AVX512-LABEL: func.func @padding_rows_skipped(
// PAIRS-LABEL: func.func @padding_rows_skipped(
// INLANE-LABEL: func.func @padding_rows_skipped(
#win = affine_map<(f, r, w, c, kh, kw) -> (0, c, r + kh, w + kw)>
#ww = affine_map<(f, r, w, c, kh, kw) -> (f, c, kh, kw)>
#wout = affine_map<(f, r, w, c, kh, kw) -> (0, f, r, w)>
#wid4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @padding_rows_skipped(%in: memref<1x2x8x8xf32>, %w: memref<3x2x3x3xf32>, %out: memref<1x3x2x8xf32>, %r0: index, %n: index, %at: index) {
  %zero = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %empty = arith.cmpi eq, %n, %c0 : index
  %tile = scf.if %empty -> (memref<1x2x4x10xf32>) {
    %t = memref.alloc() {alignment = 64 : i64} : memref<1x2x4x10xf32>
    linalg.fill ins(%zero : f32) outs(%t : memref<1x2x4x10xf32>)
    scf.yield %t : memref<1x2x4x10xf32>
  } else {
    %src = memref.subview %in[0, 0, %r0, 0] [1, 2, %n, 8] [1, 1, 1, 1] : memref<1x2x8x8xf32> to memref<1x2x?x8xf32, strided<[128, 64, 8, 1], offset: ?>>
    %t = memref.alloc() {alignment = 64 : i64} : memref<1x2x4x10xf32>
    linalg.fill ins(%zero : f32) outs(%t : memref<1x2x4x10xf32>)
    %mid = memref.subview %t[0, 0, %at, 1] [1, 2, %n, 8] [1, 1, 1, 1] : memref<1x2x4x10xf32> to memref<1x2x?x8xf32, strided<[80, 40, 10, 1], offset: ?>>
    linalg.generic {indexing_maps = [#wid4, #wid4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%src : memref<1x2x?x8xf32, strided<[128, 64, 8, 1], offset: ?>>) outs(%mid : memref<1x2x?x8xf32, strided<[80, 40, 10, 1], offset: ?>>) {
    ^bb0(%x: f32, %o: f32):
      linalg.yield %x : f32
    }
    scf.yield %t : memref<1x2x4x10xf32>
  }
  linalg.generic {indexing_maps = [#win, #ww, #wout], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%tile, %w : memref<1x2x4x10xf32>, memref<3x2x3x3xf32>) outs(%out : memref<1x3x2x8xf32>) {
  ^bb0(%x: f32, %k: f32, %o: f32):
    %m = arith.mulf %x, %k : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}

func.func @padding_rows_of_ones(%in: memref<1x2x8x8xf32>, %w: memref<3x2x3x3xf32>, %out: memref<1x3x2x8xf32>, %r0: index, %n: index, %at: index) {
  %one = arith.constant 1.000000e+00 : f32
  %src = memref.subview %in[0, 0, %r0, 0] [1, 2, %n, 8] [1, 1, 1, 1] : memref<1x2x8x8xf32> to memref<1x2x?x8xf32, strided<[128, 64, 8, 1], offset: ?>>
  %t = memref.alloc() {alignment = 64 : i64} : memref<1x2x4x10xf32>
  linalg.fill ins(%one : f32) outs(%t : memref<1x2x4x10xf32>)
  %mid = memref.subview %t[0, 0, %at, 1] [1, 2, %n, 8] [1, 1, 1, 1] : memref<1x2x4x10xf32> to memref<1x2x?x8xf32, strided<[80, 40, 10, 1], offset: ?>>
  linalg.generic {indexing_maps = [#wid4, #wid4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%src : memref<1x2x?x8xf32, strided<[128, 64, 8, 1], offset: ?>>) outs(%mid : memref<1x2x?x8xf32, strided<[80, 40, 10, 1], offset: ?>>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [#win, #ww, #wout], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%t, %w : memref<1x2x4x10xf32>, memref<3x2x3x3xf32>) outs(%out : memref<1x3x2x8xf32>) {
  ^bb0(%x: f32, %k: f32, %o: f32):
    %m = arith.mulf %x, %k : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  memref.dealloc %t : memref<1x2x4x10xf32>
  return
}

// -----

// A channels-last convolution over its whole image padded in the kernel
// (4 x 6 pixels into rows 1..4, columns 1..6 of a 6 x 8 tile of zeros):
// the image is `b`, broadcast to channel vectors. For each output row oh
// the filter rows whose tile row oh + kh is padding are skipped: kh runs
// over [max(0, 1 - oh), min(3, 5 - oh)).
// CHECK-LABEL: func.func @channels_last_padded(
// CHECK: scf.for %[[OH:.*]] = %c0{{.*}} to %c4{{.*}} step %c1
// CHECK: %[[END:.*]] = arith.addi %c1{{.*}}, %c4{{.*}} : index
// CHECK: %[[LO:.*]] = arith.subi %c1{{.*}}, %[[G:.*]] : index
// CHECK: %[[FROM:.*]] = arith.maxsi %c0{{.*}}, %[[LO]] : index
// CHECK: %[[HI:.*]] = arith.subi %[[END]], %[[G]] : index
// CHECK: %[[TO:.*]] = arith.minsi %c3{{.*}}, %[[HI]] : index
// CHECK: scf.for {{.*}} iter_args
// CHECK: scf.for %{{.*}} = %[[FROM]] to %[[TO]] step %{{.*}} iter_args
// CHECK: memref.load %{{.*}} : memref<2x6x8xf32>
// CHECK: vector.fma
// DOT-LABEL: func.func @channels_last_padded(
// NEON-LABEL: func.func @channels_last_padded(
// NEON16-LABEL: func.func @channels_last_padded(
// SDOT-LABEL: func.func @channels_last_padded(
// AVX512-LABEL: func.func @channels_last_padded(
// PAIRS-LABEL: func.func @channels_last_padded(
// INLANE-LABEL: func.func @channels_last_padded(
#lin = affine_map<(oh, ow, f, c, kh, kw) -> (c, oh + kh, ow + kw)>
#lw = affine_map<(oh, ow, f, c, kh, kw) -> (c, kh, kw, f)>
#lout = affine_map<(oh, ow, f, c, kh, kw) -> (oh, ow, f)>
#lid3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @channels_last_padded(%in: memref<2x4x6xf32>, %w: memref<2x3x3x16xf32>, %out: memref<4x6x16xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %t = memref.alloc() {alignment = 64 : i64} : memref<2x6x8xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<2x6x8xf32>)
  %mid = memref.subview %t[0, 1, 1] [2, 4, 6] [1, 1, 1] : memref<2x6x8xf32> to memref<2x4x6xf32, strided<[48, 8, 1], offset: 9>>
  linalg.generic {indexing_maps = [#lid3, #lid3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%in : memref<2x4x6xf32>) outs(%mid : memref<2x4x6xf32, strided<[48, 8, 1], offset: 9>>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [#lin, #lw, #lout], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%t, %w : memref<2x6x8xf32>, memref<2x3x3x16xf32>) outs(%out : memref<4x6x16xf32>) {
  ^bb0(%x: f32, %k: f32, %o: f32):
    %m = arith.mulf %x, %k : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  memref.dealloc %t : memref<2x6x8xf32>
  return
}
