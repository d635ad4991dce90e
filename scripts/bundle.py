"""Writes a bundle: compiled artifacts with their inputs and references.

A bundle is a directory that another machine runs with
`scripts/bundle_run.py` (the machine with the GPU, or an embedded board):
one folder per case holding the artifact, its input files and the reference
outputs, and `cases.json` listing each case's dlc-run arguments relative to
the bundle. node_tests.py and zoo/check.py write bundles with `--bundle`.
"""

import json
import os
import platform
import shutil
import threading


def runs_here(target):
    """Whether this machine runs `target`'s artifacts: not a CPU triple of
    another architecture (those run where they belong, from a bundle)."""
    if not target.startswith("cpu:"):
        return True
    return target[4:].split("-")[0] == platform.machine()


# QEMU's user-mode emulator and the cross toolchain's sysroot for the CPU
# triples whose runtime dlc builds (runtime/cmake/toolchains/).
QEMU_USER = {
    "aarch64-linux-gnu": ("qemu-aarch64", "/usr/aarch64-linux-gnu"),
    "armv7a-linux-gnueabihf": ("qemu-arm", "/usr/arm-linux-gnueabihf"),
    "riscv64-linux-gnu": ("qemu-riscv64", "/usr/riscv64-linux-gnu"),
}


def qemu_dlc_run(target, build):
    """The command that runs dlc-run for CPU target `target` of another
    architecture under QEMU's user mode: its cross-built dlc-run in
    `build`/runtime-<triple> (scripts/cross_runtimes.sh builds them) on
    QEMU's most capable CPU (the target's features included), or None when
    the triple has no runtime build or QEMU is missing."""
    if not target.startswith("cpu:"):
        return None
    triple = target[4:].split(":")[0]
    if triple not in QEMU_USER:
        return None
    qemu, sysroot = QEMU_USER[triple]
    dlc_run = os.path.join(build, "runtime-" + triple, "dlc-run")
    if not shutil.which(qemu) or not os.path.exists(dlc_run):
        return None
    return [qemu, "-cpu", "max", "-L", sysroot, dlc_run]


class Bundle:
    def __init__(self, directory):
        self.dir = os.path.abspath(directory)
        self.cases = []
        self.lock = threading.Lock()
        os.makedirs(self.dir, exist_ok=True)

    def add(self, suite, name, target, artifact, inputs, expects,
            extra_args=(), bench=False):
        """Copies the files of one case and records its dlc-run arguments.

        inputs: [(name or None, path)]; None passes the input by position.
        expects: [(output name, path)]. extra_args: more dlc-run arguments
        (tolerances, threads)."""
        rel = os.path.join(suite, target.replace(":", "_"), name)
        case_dir = os.path.join(self.dir, rel)
        if os.path.isdir(case_dir):
            shutil.rmtree(case_dir)
        os.makedirs(case_dir)

        def put(path, stem):
            dest = stem + os.path.splitext(path)[1]
            shutil.copyfile(path, os.path.join(case_dir, dest))
            return os.path.join(rel, dest)

        args = [put(artifact, "model")]
        for i, (iname, path) in enumerate(inputs):
            f = put(path, "input_%d" % i)
            args += ["--input", f if iname is None else "%s=%s" % (iname, f)]
        for i, (oname, path) in enumerate(expects):
            args += ["--expect", "%s=%s" % (oname, put(path, "ref_%d" % i))]
        args += list(extra_args)
        with self.lock:
            self.cases.append({"suite": suite, "name": name,
                               "target": target, "args": args,
                               "bench": bench})

    def write(self):
        """Writes cases.json, merged with the cases already there from
        another suite or target."""
        path = os.path.join(self.dir, "cases.json")
        old = []
        if os.path.exists(path):
            with open(path) as f:
                old = json.load(f)["cases"]
        keys = {(c["suite"], c["name"], c["target"]) for c in self.cases}
        cases = [c for c in old
                 if (c["suite"], c["name"], c["target"]) not in keys]
        cases += sorted(self.cases, key=lambda c: (c["suite"], c["target"],
                                                   c["name"]))
        with open(path, "w") as f:
            json.dump({"cases": cases}, f, indent=1)
        return len(self.cases)
