#!/usr/bin/env python3
"""Static cost of dlc's innermost CPU loops, by llvm-mca, for CPUs this
machine is not.

There is no ARM machine here; what the aarch64 code generator makes of a
model's convolutions can still be estimated: the script compiles a model
with dlc-compile --emit=obj for a target, disassembles the kernels with
llvm-objdump, finds every innermost loop (a backward branch with no other
backward branch inside), keeps those with the most multiply-adds, and runs
llvm-mca on each loop body for the given cores. It prints, per loop, the
multiply-adds one iteration does (vector FMA instructions times lanes), the
cycles per iteration llvm-mca predicts, and the multiply-adds per cycle
that gives; the core's peak is 2 FMA pipes times the lanes.

    python -m scripts.mca_hot_loops --build BUILD MODEL.onnx
        [--target cpu:aarch64-linux-gnu] [--mcpu cortex-a76,cortex-a55]
        [--top 3] [-- DLC_COMPILE_ARGS...]

An estimate, not a measurement: llvm-mca assumes every load hits the L1
cache and knows nothing of the loop's trip count.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

LLVM = "/usr/lib/llvm-22/bin"

# Multiply-add instructions, and how many multiply-adds each does, by the
# vector register in its operands.
FMA = re.compile(r"^(fmla|fmls|sdot|udot|usdot|vfmadd\w*|vfnmadd\w*|vpdpbusd\w*)$")
LANES = [(re.compile(r"\.4s\b|\.4h\b"), 4), (re.compile(r"\.8h\b"), 8),
         (re.compile(r"\.2d\b"), 2), (re.compile(r"\bzmm"), 16),
         (re.compile(r"\bymm"), 8), (re.compile(r"\bxmm"), 4)]
BRANCH = re.compile(r"^(b\.\w+|cbn?z|tbn?z|b|j\w+)$")
LINE = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$")
FUNC = re.compile(r"^([0-9a-f]+) <([^>]+)>:$")


def lanes(mnemonic, operands):
    if mnemonic in ("sdot", "udot", "usdot"):
        return 16  # 4 lanes x 4 byte products
    if mnemonic.startswith("vpdpbusd"):
        for pattern, n in LANES:
            if pattern.search(operands):
                return 4 * n
    for pattern, n in LANES:
        if pattern.search(operands):
            return n
    return 1


def functions(disassembly):
    """{name: [(address, mnemonic, operands)]}."""
    out, current = {}, None
    for line in disassembly.splitlines():
        m = FUNC.match(line)
        if m:
            current = out.setdefault(m.group(2), [])
            continue
        m = LINE.match(line)
        if m and current is not None:
            current.append((int(m.group(1), 16), m.group(2), m.group(3)))
    return out


def innermost_loops(insns):
    """Loop bodies [(address, mnemonic, operands)] of backward branches that
    contain no other backward branch."""
    backward = []
    for i, (addr, mnem, ops) in enumerate(insns):
        if not BRANCH.match(mnem):
            continue
        target = re.search(r"\b0x([0-9a-f]+)|^([0-9a-f]+)\b", ops)
        if not target:
            continue
        dest = int(target.group(1) or target.group(2), 16)
        if dest < addr:
            backward.append((dest, addr, i))
    loops = []
    for dest, addr, i in backward:
        if any(dest <= d2 and a2 < addr for d2, a2, _ in backward
               if (d2, a2) != (dest, addr)):
            continue
        body = [x for x in insns[:i] if x[0] >= dest]
        loops.append(body)
    return loops


def mca(body, triple, mcpu):
    text = "\n".join("%s %s" % (m, o.split("<")[0].strip()) for _, m, o in body
                     if not BRANCH.match(m))
    r = subprocess.run([os.path.join(LLVM, "llvm-mca"), "-mtriple=" + triple,
                        "-mcpu=" + mcpu, "-iterations=200"],
                       input=text, capture_output=True, text=True)
    if r.returncode != 0:
        return None
    cycles = re.search(r"Total Cycles:\s+(\d+)", r.stdout)
    return int(cycles.group(1)) / 200.0 if cycles else None


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", required=True)
    p.add_argument("model")
    p.add_argument("--target", default="cpu:aarch64-linux-gnu")
    p.add_argument("--mcpu", default="cortex-a76,cortex-a55")
    p.add_argument("--top", type=int, default=3)
    args = p.parse_args(argv)
    triple = args.target.split(":")[1] if ":" in args.target else "x86_64-linux-gnu"
    with tempfile.TemporaryDirectory() as work:
        obj = os.path.join(work, "kernels.o")
        subprocess.run([os.path.join(args.build, "bin", "dlc-compile"),
                        args.model, "--target=" + args.target, "--emit=obj",
                        "-o", obj] + extra, check=True)
        dis = subprocess.run([os.path.join(LLVM, "llvm-objdump"), "-d",
                              "--no-show-raw-insn", obj],
                             capture_output=True, text=True, check=True).stdout
    loops = []
    for name, insns in functions(dis).items():
        for body in innermost_loops(insns):
            macs = sum(lanes(m, o) for _, m, o in body if FMA.match(m))
            if macs:
                loops.append((macs, name, body))
    loops.sort(key=lambda x: -x[0])
    cpus = args.mcpu.split(",")
    print("| kernel | loop instructions | multiply-adds per iteration | " +
          " | ".join("%s cycles (MACs/cycle)" % c for c in cpus) + " |")
    print("|---|---|---|" + "---|" * len(cpus))
    for macs, name, body in loops[:args.top]:
        cells = []
        for cpu in cpus:
            c = mca(body, triple, cpu)
            cells.append("%.1f (%.1f)" % (c, macs / c) if c else "-")
        print("| %s | %d | %d | %s |" % (name, len(body), macs,
                                         " | ".join(cells)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
