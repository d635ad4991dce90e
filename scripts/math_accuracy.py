#!/usr/bin/env python3
"""How accurate dlc's transcendental functions are, against float64.

dlc's kernels call no math library: Exp, Log, Tanh, Sigmoid, Erf, Sin and
Cos become polynomial or rational approximations (dlc-legalize-math), the
same code on every target. This script measures them on one target: it
builds a one-node ONNX model per function, compiles it with dlc-compile,
runs it with dlc-run on a dense sweep of float32 inputs, and compares with
the function evaluated in float64 by numpy. For scale it also reports the
error of numpy's own float32 evaluation (the C library's float functions
or numpy's SIMD versions of them) on the same inputs.

    python -m scripts.math_accuracy --build BUILD [--targets cpu,vulkan]
                             [--points N] [--check]

Errors are in float32 ULPs of the float64 reference (rounded to float32),
so 0.5 is correctly rounded (float64 functions: in float64 ULPs of numpy's
float64 evaluation); the maximum over all points and the 99.9th
percentile are printed, with the maximum absolute error. Exit status 1 when
a function's maximum error exceeds its documented bound (--check).
"""

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper


def sweep(low, high, n, log=False, dtype=np.float32):
    if log:
        return np.exp(np.linspace(np.log(low), np.log(high), n)).astype(dtype)
    return np.linspace(low, high, n, dtype=np.float64).astype(dtype)


def sigmoid64(x):
    return 1.0 / (1.0 + np.exp(-x))


def erf64(x):
    import math
    return np.vectorize(math.erf)(x)


# name: (ONNX op, float64 reference, float32 library evaluation, inputs,
#        bound on the maximum ULP error that --check enforces[, dtype])
# float64 functions are measured in float64 ULPs against numpy's float64
# (the C library's, itself within 1 ULP), so their bound allows for that.
FUNCTIONS = {
    "Exp": ("Exp", np.exp, lambda x: np.exp(x),
            lambda n: sweep(-87.0, 88.0, n), 4.0),
    "Log": ("Log", np.log, lambda x: np.log(x),
            lambda n: sweep(1e-30, 1e30, n, log=True), 4.0),
    "Tanh": ("Tanh", np.tanh, lambda x: np.tanh(x),
             lambda n: sweep(-20.0, 20.0, n), 8.0),
    "Sigmoid": ("Sigmoid", sigmoid64,
                lambda x: (1.0 / (1.0 + np.exp(-x))).astype(np.float32),
                lambda n: sweep(-20.0, 20.0, n), 8.0),
    "Erf": ("Erf", erf64, None, lambda n: sweep(-6.0, 6.0, n), 8.0),
    "Sin": ("Sin", np.sin, lambda x: np.sin(x),
            lambda n: sweep(-100.0, 100.0, n), 8.0),
    "Cos": ("Cos", np.cos, lambda x: np.cos(x),
            lambda n: sweep(-100.0, 100.0, n), 8.0),
    # Rotary position embeddings: positions up to thousands times
    # frequencies up to 1.
    "Sin (large)": ("Sin", np.sin, lambda x: np.sin(x),
                    lambda n: sweep(-4096.0, 4096.0, n), 8.0),
    # Through subnormal results and up to the largest double.
    "Exp (f64)": ("Exp", np.exp, None,
                  lambda n: sweep(-745.0, 709.7, n, dtype=np.float64), 4.0,
                  np.float64),
    "Log (f64)": ("Log", np.log, None,
                  lambda n: sweep(1e-307, 1e308, n, log=True,
                                  dtype=np.float64), 4.0, np.float64),
    # Subnormal inputs: CPU targets only, since Vulkan devices may flush
    # f64 subnormals to zero (lavapipe does; SPIR-V's DenormPreserve is an
    # optional device feature dlc does not ask for).
    "Log (f64 subnormal)": ("Log", np.log, None,
                            lambda n: sweep(5e-324, 2.2e-308, n, log=True,
                                            dtype=np.float64), 4.0,
                            np.float64, "cpu"),
}


def ulp_error(got, ref64, dtype=np.float32):
    """|got - ref| in units of the `dtype` spacing at ref."""
    ref = ref64.astype(dtype)
    spacing = np.spacing(np.abs(ref)).astype(np.float64)
    # Below the smallest normal the spacing is the subnormal one.
    spacing = np.maximum(spacing, np.float64(np.finfo(dtype).smallest_subnormal))
    return np.abs(got.astype(np.float64) - ref64) / spacing


def run_dlc(args, target, op, x, work):
    model_path = os.path.join(work, op + ".onnx")
    node = helper.make_node(op, ["x"], ["y"])
    elem = TensorProto.DOUBLE if x.dtype == np.float64 else TensorProto.FLOAT
    graph = helper.make_graph(
        [node], op,
        [helper.make_tensor_value_info("x", elem, [x.size])],
        [helper.make_tensor_value_info("y", elem, [x.size])])
    # f64 is an opt-in Vulkan device feature (lavapipe has it).
    if x.dtype == np.float64 and target.startswith("vulkan"):
        target += ("," if ":" in target else ":") + "+fp64"
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, model_path)
    artifact = os.path.join(work, op + ".dlcx")
    subprocess.run([os.path.join(args.build, "bin", "dlc-compile"), model_path,
                    "--target=" + target, "-o", artifact], check=True)
    np.save(os.path.join(work, "x.npy"), x)
    out_dir = os.path.join(work, "out")
    run = [os.path.join(args.build, "bin", "dlc-run"), artifact, "--input",
           "x=" + os.path.join(work, "x.npy"), "--output-dir", out_dir]
    subprocess.run(run, check=True, stdout=subprocess.DEVNULL)
    return np.load(os.path.join(out_dir, "y.npy"))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", required=True, help="dlc build directory")
    p.add_argument("--targets", default="cpu",
                   help="comma-separated dlc targets")
    p.add_argument("--points", type=int, default=1 << 20)
    p.add_argument("--check", action="store_true",
                   help="fail when an error exceeds the bound in the table")
    args = p.parse_args()
    failed = []
    for target in args.targets.split(","):
        print("\n%s:\n" % target)
        print("| function | inputs | dlc max ULP | dlc 99.9% ULP | dlc max abs "
              "| numpy float32 max ULP | bound |")
        print("|---|---|---|---|---|---|---|")
        with tempfile.TemporaryDirectory() as work:
            for name, entry in FUNCTIONS.items():
                op, ref, lib, inputs, bound = entry[:5]
                dtype = entry[5] if len(entry) > 5 else np.float32
                if len(entry) > 6 and not target.startswith(entry[6]):
                    continue
                x = inputs(args.points)
                ref64 = ref(x.astype(np.float64))
                got = run_dlc(args, target, op, x, work)
                err = ulp_error(got, ref64, dtype)
                lib_err = ("%.2f" % ulp_error(lib(x), ref64).max()
                           if lib else "-")
                print("| %s | %d in [%g, %g] | %.2f | %.2f | %.3g | %s | %g |"
                      % (name, x.size, x.min(), x.max(), err.max(),
                         np.percentile(err, 99.9),
                         np.abs(got.astype(np.float64) - ref64).max(),
                         lib_err, bound))
                if args.check and not err.max() <= bound:
                    failed.append("%s on %s" % (name, target))
    if failed:
        print("math_accuracy: over the bound: " + ", ".join(failed),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
