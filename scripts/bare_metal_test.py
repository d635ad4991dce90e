#!/usr/bin/env python3
"""A zoo model on a bare Cortex-M4 and M7, under QEMU, against ONNX Runtime.

The whole path a microcontroller user takes, with no operating system:
dlc-compile --target=cpu:thumbv7em-none-eabihf (--cpu=cortex-m4 or m7)
writes the artifact (no code in it) and the kernel object with its table
(--emit=obj); the runtime is built with arm-none-eabi-gcc and newlib
through its Cortex-M toolchain file and installed; examples/bare_metal (the
firmware) is built out of tree against that installation, with the
artifact in flash and the kernels linked in; qemu-system-arm runs it on an
MPS2 board (mps2-an386: Cortex-M4 with its single-precision FPU,
mps2-an500: Cortex-M7 with a double-precision one), passing tensors
through semihosting. Each evaluation sample's
outputs must match ONNX Runtime at the model's zoo tolerance, the firmware
must report no allocation after setup, and a firmware given no input must
fail with its message and a non-zero exit (so a broken run cannot pass), as
must firmware given another build's artifact (the Cortex-M4 one with the
Cortex-M7 kernels: the object's fingerprint differs).
Prints the code and data sizes of what the firmware links.

  python -m scripts.bare_metal_test --build build [--models kws_dscnn]
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

from scripts.zoo import zoo_env

zoo_env.ensure()
import numpy as np  # noqa: E402

from scripts.zoo import common, models  # noqa: E402

ROOT = common.ROOT
TARGET = "cpu:thumbv7em-none-eabihf"
TOOLCHAIN = os.path.join(ROOT, "runtime", "cmake", "toolchains",
                         "thumbv7em-none-eabihf.cmake")
# (CPU, QEMU board, the CPU's gcc flags).
BOARDS = [("cortex-m4", "mps2-an386", "-mcpu=cortex-m4 -mfpu=fpv4-sp-d16"),
          ("cortex-m7", "mps2-an500", "-mcpu=cortex-m7 -mfpu=fpv5-d16")]
# The firmware's pool for the runtime and the I/O buffer: what the
# largest of the default models needs (each run prints its use).
POOL_KIB = 192
TOOLS = ("arm-none-eabi-gcc", "arm-none-eabi-size", "qemu-system-arm",
         "cmake", "ninja")


def run(cmd, **kwargs):
    p = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if p.returncode != 0:
        raise SystemExit("bare_metal_test: failed (exit %d): %s\n%s%s" % (
            p.returncode, " ".join(cmd), p.stdout, p.stderr))
    return p.stdout


def build_runtime(work, cpu_flags):
    """The runtime for the CPU, installed into work/prefix."""
    build, prefix = os.path.join(work, "runtime"), os.path.join(work, "prefix")
    run(["cmake", "-G", "Ninja", "-S", os.path.join(ROOT, "runtime"), "-B",
         build, "-DCMAKE_TOOLCHAIN_FILE=" + TOOLCHAIN,
         "-DDLC_CORTEX_M_FLAGS=" + cpu_flags,
         "-DCMAKE_BUILD_TYPE=MinSizeRel", "-DDLC_RUNTIME_WERROR=ON",
         "-DCMAKE_INSTALL_PREFIX=" + prefix])
    run(["cmake", "--build", build])
    run(["cmake", "--install", build])
    return prefix


def build_firmware(work, prefix, model, cpu_flags):
    """examples/bare_metal against the installed runtime and `model`'s
    three files (work/<model>.dlcx, .o, .kernels.c)."""
    build = os.path.join(work, "firmware-" + os.path.basename(model))
    run(["cmake", "-G", "Ninja", "-S",
         os.path.join(ROOT, "examples", "bare_metal"), "-B", build,
         "-DCMAKE_TOOLCHAIN_FILE=" + TOOLCHAIN,
         "-DDLC_CORTEX_M_FLAGS=" + cpu_flags,
         "-DCMAKE_BUILD_TYPE=MinSizeRel", "-DCMAKE_PREFIX_PATH=" + prefix,
         "-DDLC_MODEL=" + model, "-DFIRMWARE_POOL_KIB=%d" % POOL_KIB])
    run(["cmake", "--build", build])
    return os.path.join(build, "firmware.elf")


def run_firmware(board, elf, io_dir, timeout=120):
    p = subprocess.run(
        ["qemu-system-arm", "-M", board, "-nographic", "-monitor", "none",
         "-serial", "none", "-kernel", elf, "-semihosting-config",
                "enable=on,target=native,arg=firmware,arg=" + io_dir],
        capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr


def sizes(elf, prefix, model):
    """Code and data (text + data + bss) of each part the firmware links,
    and the firmware's flash (text + data) and RAM (data + bss)."""
    def berkeley(paths):
        out = run(["arm-none-eabi-size", "-t"] + paths)
        return [int(v) for v in out.strip().splitlines()[-1].split()[:3]]

    def size(paths):
        return sum(berkeley(paths))
    lib = os.path.join(prefix, "lib", "libdlc_runtime.a")
    members = run(["arm-none-eabi-ar", "t", lib]).split()
    extract = tempfile.mkdtemp(dir=os.path.dirname(elf))
    run(["arm-none-eabi-ar", "x", lib], cwd=extract)
    cpu = [os.path.join(extract, m) for m in members if m.startswith("cpu_")]
    core = [os.path.join(extract, m) for m in members
            if not m.startswith("cpu_")]
    return {"runtime core": size(core), "CPU driver": size(cpu),
            "kernels": size([model + ".o"]),
            "artifact": os.path.getsize(model + ".dlcx"),
            "firmware flash (with newlib)": sum(berkeley([elf])[:2]),
            "firmware RAM (data + bss)": sum(berkeley([elf])[1:])}


def check_model(entry, args, dlc_compile, work, prefix, board):
    cpu, board_name, cpu_flags = board
    name = entry["name"]
    what = "%s on %s (%s)" % (name, cpu, board_name)
    model = os.path.join(work, name)
    onnx_path = os.path.join(args.models_dir, entry["file"])
    flags = (["--target=" + TARGET, "--cpu=" + cpu] +
             common.compile_flags(entry, {}))
    run([dlc_compile, onnx_path, "-o", model + ".dlcx"] + flags)
    run([dlc_compile, onnx_path, "--emit=obj", "-o", model + ".o"] + flags)
    elf = build_firmware(work, prefix, model, cpu_flags)
    session = common.ort_session(onnx_path, optimized=False)
    out_names = [o["name"] for o in entry["outputs"]]
    tol = entry["tolerance"]
    failures = 0
    for seed in range(args.samples):
        io_dir = os.path.join(work, "%s-io%d" % (name, seed))
        os.makedirs(io_dir, exist_ok=True)
        feeds = common.make_inputs(entry, seed)
        for i, spec in enumerate(entry["inputs"]):
            feeds[spec["name"]].tofile(os.path.join(io_dir,
                                                    "input%d.bin" % i))
        rc, log = run_firmware(board_name, elf, io_dir)
        if rc != 0 or "no allocation after setup" not in log:
            print("%s sample %d: the firmware failed (exit %d):\n%s" % (
                what, seed, rc, log))
            failures += 1
            continue
        refs = session.run(out_names, feeds)
        for i, (o, ref) in enumerate(zip(entry["outputs"], refs)):
            got = np.fromfile(os.path.join(io_dir, "output%d.bin" % i),
                              dtype=ref.dtype).reshape(ref.shape)
            err = np.abs(got.astype(np.float64) - ref)
            bound = tol["atol"] + tol["rtol"] * np.abs(ref)
            ok = bool(np.all(err <= bound))
            failures += not ok
            print("%s sample %d output %s: max abs err %.3g (%s)" % (
                what, seed, o["name"], err.max(),
                "pass" if ok else "FAIL: beyond rtol %g atol %g" % (
                    tol["rtol"], tol["atol"])))
    print("  " + log.strip().splitlines()[0])
    # A run that cannot read its input must fail, with the message.
    rc, log = run_firmware(board_name, elf,
                           os.path.join(work, "no-such-directory"))
    if rc == 0 or "cannot read the input" not in log:
        print("%s: a firmware without its input exited %d:\n%s" % (
            what, rc, log))
        failures += 1
    else:
        print("%s: without its input the firmware exits %d: %s" % (
            what, rc, log.strip().splitlines()[-1]))
    for part, n in sizes(elf, prefix, model).items():
        print("  %-28s %9d bytes" % (part, n))
    return failures


def check_mismatch(top, name):
    """Firmware with the Cortex-M7 kernels and the Cortex-M4 artifact of
    the same model: the linked driver must refuse it on the board (the
    kernel names match; the object's fingerprint does not)."""
    m4, m7 = (os.path.join(top, b[0]) for b in BOARDS[:2])
    mixed = os.path.join(m7, "mixed")
    shutil.copy(os.path.join(m4, name + ".dlcx"), mixed + ".dlcx")
    shutil.copy(os.path.join(m7, name + ".o"), mixed + ".o")
    shutil.copy(os.path.join(m7, name + ".kernels.c"), mixed + ".kernels.c")
    elf = build_firmware(m7, os.path.join(m7, "prefix"), mixed, BOARDS[1][2])
    rc, log = run_firmware(BOARDS[1][1], elf, m7)
    if rc == 0 or "are not this artifact's" not in log:
        print("another build's artifact was not refused (exit %d):\n%s" % (
            rc, log))
        return 1
    print("another build's artifact on the board: exit %d, %s" % (
        rc, log.strip().splitlines()[-1][:100] + "..."))
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    common.add_tool_args(parser)
    parser.add_argument("--models", default="kws_dscnn,qoperator_cnn",
                        help="comma-separated zoo models (default: "
                             "%(default)s)")
    parser.add_argument("--models-dir", default=models.DEFAULT_OUT)
    parser.add_argument("--samples", type=int, default=3,
                        help="evaluation samples per model")
    parser.add_argument("--keep", help="work in this directory and keep it")
    args = parser.parse_args()
    missing = [t for t in TOOLS if not shutil.which(t)]
    if missing:
        raise SystemExit("bare_metal_test: missing %s (scripts/setup.sh "
                         "installs them)" % ", ".join(missing))
    dlc_compile, _ = common.find_tools(args)
    names = args.models.split(",")
    manifest = models.ensure_models(args.models_dir, names=names)
    top = args.keep or tempfile.mkdtemp(prefix="dlc-bare-metal-")
    failures = 0
    try:
        for board in BOARDS:
            work = os.path.join(top, board[0])
            os.makedirs(work, exist_ok=True)
            prefix = build_runtime(work, board[2])
            failures += sum(check_model(manifest["models"][n], args,
                                        dlc_compile, work, prefix, board)
                            for n in names)
        failures += check_mismatch(top, names[0])
    finally:
        if not args.keep:
            shutil.rmtree(top, ignore_errors=True)
    if failures:
        print("bare_metal_test: %d failures" % failures)
        return 1
    print("bare_metal_test: every output matched ONNX Runtime")
    return 0


if __name__ == "__main__":
    sys.exit(main())
