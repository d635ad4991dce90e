#!/usr/bin/env python3
"""Compiles every zoo model for each target and compares it with ONNX Runtime.

For each model and target: dlc-compile (with the manifest's --input-shape
pins and --stats), deterministic inputs as .npy, ONNX Runtime reference
outputs (CPUExecutionProvider, graph optimizations off so every node runs as
written), then dlc-run with --expect on every output at the model's
tolerances. cuda targets and cpu:<triple> targets of another architecture
(unless --qemu runs them under QEMU's user mode) are compiled only (dlc-compile assembles PTX with ptxas when it is
installed); --bundle DIR packs them, with inputs and references, for
scripts/bundle_run.py on the machine that runs them (the GPU's, the board,
or QEMU). Prints one row per model and target and, for every failure, the
commands that reproduce it. Exits 1 when anything fails.

  python -m scripts.zoo.check --build build
  python -m scripts.zoo.check --build build --targets cpu,vulkan,cuda:sm_87
  python -m scripts.zoo.check --dlc-compile B/bin/dlc-compile \\
      --dlc-run R/dlc-run --models resnet18,bert_tiny
  python -m scripts.zoo.check --targets cuda:sm_87 --bundle B  # run B on a GPU
  python -m scripts.zoo.check --list
"""

import argparse
import collections
import concurrent.futures
import json
import os
import shlex
import shutil
import subprocess
import sys
import time

from scripts.zoo import zoo_env

zoo_env.ensure()
import numpy as np  # noqa: E402

from scripts import bundle  # noqa: E402
from scripts.targets import split_no_cubin, split_targets  # noqa: E402
from scripts.zoo import common, models  # noqa: E402


STATUS_OK = ("pass", "compiled")
COMPILE_FAILURES = ("compile-error", "compile-crash", "compile-timeout")


def quote(cmd):
    return " ".join(shlex.quote(c) for c in cmd)


def run(cmd, timeout):
    """subprocess.run that turns a timeout into a result."""
    start = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=timeout)
        return p.returncode, p.stdout, p.stderr, time.time() - start
    except subprocess.TimeoutExpired as e:
        def text(b):
            return b.decode(errors="replace") if isinstance(b, bytes) else \
                (b or "")
        return None, text(e.stdout), text(e.stderr), time.time() - start


def crashed(rc, stderr):
    return rc is not None and (rc < 0 or "Stack dump" in stderr or
                               "PLEASE submit a bug report" in stderr)


def prepare_model(entry, models_dir, work):
    """Inputs and ONNX Runtime reference outputs, once per model."""
    mdir = os.path.join(work, entry["name"])
    inputs = common.save_inputs(entry, os.path.join(mdir, "inputs"))
    sess = common.ort_session(os.path.join(models_dir, entry["file"]),
                              optimized=False)
    feeds = {k: np.load(v) for k, v in inputs.items()}
    names = [o["name"] for o in entry["outputs"]]
    refs = {}
    os.makedirs(os.path.join(mdir, "ref"), exist_ok=True)
    for i, (name, value) in enumerate(zip(names, sess.run(names, feeds))):
        path = os.path.join(mdir, "ref", "output_%d.npy" % i)
        np.save(path, value)
        refs[name] = path
    return inputs, refs


def error_budget(d, ref, tol):
    """|d| / (atol + rtol |ref|) elementwise: > 1 is out of tolerance."""
    bound = tol["atol"] + tol["rtol"] * np.abs(ref)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(bound > 0, d / bound, np.where(d > 0, np.inf, 0.0))


def compare_outputs(entry, refs, out_dir):
    """Numbers dlc-run does not print, from the outputs it wrote: the worst
    use of the error budget over all outputs and, per output out of
    tolerance, the fraction of bad elements, the worst element and, for
    [1, classes] logits, whether the top-1 class agrees."""
    tol = entry["tolerance"]
    notes, worst_budget = [], 0.0
    for name, ref_path in refs.items():
        got_path = os.path.join(out_dir, name + ".npy")
        if not os.path.exists(got_path):
            notes.append("%s: dlc-run wrote no %s" % (name, got_path))
            continue
        ref, got = np.load(ref_path), np.load(got_path)
        if ref.shape != got.shape:
            notes.append("%s: shape %s, expected %s" % (
                name, list(got.shape), list(ref.shape)))
            continue
        d = np.abs(got.astype(np.float64) - ref)
        d[np.isnan(got) != np.isnan(ref)] = np.inf
        budget = error_budget(np.nan_to_num(d, nan=0.0), ref, tol)
        worst_budget = max(worst_budget, float(budget.max()))
        bad = int(np.count_nonzero(budget > 1))
        if not bad:
            continue
        worst = np.unravel_index(np.argmax(budget), ref.shape)
        note = ("%s: %d/%d elements out of tolerance (%.1f%%), worst at %s: "
                "got %.9g expected %.9g" % (
                    name, bad, ref.size, 100.0 * bad / ref.size,
                    list(map(int, worst)), got[worst], ref[worst]))
        if ref.ndim == 2 and ref.shape[0] == 1 and ref.shape[1] >= 10:
            note += ", top-1 class %s" % ("agrees" if np.argmax(got) ==
                                          np.argmax(ref) else "differs")
        notes.append(note)
    return notes, worst_budget


SPIRV_MAGIC = b"\x03\x02\x23\x07"


def validate_spirv(args, dlc_compile, ccmd, tdir):
    """Runs spirv-val on every kernel's module (Vulkan 1.1 rules, 1.3 for
    SPIR-V 1.6 modules: those with integer dot products); returns
    what is wrong, or None. --emit=spirv -o DIR/ writes one module per
    kernel, named after it."""
    spirv_val = shutil.which("spirv-val")
    if not spirv_val:
        return "spirv-val is not installed (scripts/setup.sh installs it)"
    kernels = os.path.join(tdir, "spirv")
    shutil.rmtree(kernels, ignore_errors=True)
    cmd = [c for c in ccmd if c != "--stats"]
    cmd[cmd.index("-o") + 1] = kernels + os.sep
    cmd.append("--emit=spirv")
    rc, out, err, _ = run(cmd, args.timeout)
    if rc != 0:
        return "--emit=spirv failed: " + common.first_error(err)
    for name in sorted(os.listdir(kernels)):
        module = os.path.join(kernels, name)
        data = open(module, "rb").read()
        if data[:4] != SPIRV_MAGIC:
            return "kernel %s is not a SPIR-V module" % name
        # Kernels with integer dot products are SPIR-V 1.6 (header word
        # 1), for Vulkan 1.3 devices; the others SPIR-V 1.3 for Vulkan 1.1.
        version = int.from_bytes(data[4:8], "little")
        env = "vulkan1.3" if version >= 0x00010600 else "vulkan1.1"
        rc, out, err, _ = run([spirv_val, "--target-env", env, module],
                              args.timeout)
        if rc != 0:
            return "spirv-val rejects kernel %s: %s" % (
                name, (err + out).strip().splitlines()[0])
    shutil.rmtree(kernels)
    return None


def check_one(args, tools, entry, target, inputs, refs):
    dlc_compile, dlc_run = tools
    res = {"model": entry["name"], "target": target,
           "onnx_nodes_manifest": entry["nodes"]}
    tdir = os.path.join(args.work, entry["name"],
                        common.target_dir_name(target))
    os.makedirs(tdir, exist_ok=True)
    artifact = os.path.join(tdir, "model.dlcx" if args.stage == "artifact"
                            else "model.%s.mlir" % args.stage)
    if os.path.exists(artifact):
        os.remove(artifact)
    ccmd = [dlc_compile, os.path.join(args.models_dir, entry["file"]),
            "--target=" + target, "-o", artifact, "--stats"]
    if args.stage != "artifact":
        ccmd[-1:] = ["--emit=mlir", "--stage=" + args.stage]
    ccmd += common.compile_flags(entry, inputs)
    if target in args.no_cubin:
        ccmd.append("--cubin=false")
    inputs = common.run_inputs(entry, inputs)
    res["compile_cmd"] = quote(ccmd)
    rc, out, err, secs = run(ccmd, args.timeout)
    with open(os.path.join(tdir, "compile.log"), "w") as f:
        f.write("$ %s\n%s%s" % (res["compile_cmd"], out, err))
    res.update(common.parse_stats(err + out))
    res["compile_wall_s"] = round(secs, 3)
    if rc is None:
        res.update(status="compile-timeout",
                   detail="dlc-compile ran over %ds" % args.timeout)
        return res
    if rc != 0 or not os.path.exists(artifact):
        errors = common.node_errors(err)
        res["node_errors"] = errors
        detail = common.first_error(err)
        if len(errors) > 1:
            ops = collections.Counter(e[1] for e in errors[1:]).most_common()
            detail += " [+%d more: %s%s]" % (len(errors) - 1, ", ".join(
                "%s x%d" % kv for kv in ops[:4]), ", ..." if ops[4:] else "")
        res.update(status="compile-crash" if crashed(rc, err)
                   else "compile-error", detail=detail)
        return res
    if args.stage != "artifact":
        os.remove(artifact)  # weights as text: tens of MB per model
        res.update(status="compiled", detail="reached stage '%s' (not run)"
                   % args.stage)
        return res
    tol = entry["tolerance"]
    tol_args = ["--rtol", repr(tol["rtol"]), "--atol", repr(tol["atol"])]
    if args.bundle:
        args.bundle.add("zoo", entry["name"], target, artifact,
                        list(inputs.items()), list(refs.items()), tol_args,
                        bench=True)
    if target.startswith("cuda"):
        res.update(status="compiled", detail="compile only (no CUDA run)" +
                   ("; in the bundle" if args.bundle else ""))
        return res
    run_prefix = [dlc_run]
    if not bundle.runs_here(target):
        # Another architecture's code: under QEMU's user mode with --qemu,
        # else on the board, or from the bundle (docs/devices.md).
        emulated = (bundle.qemu_dlc_run(target, args.build)
                    if args.qemu else None)
        if not emulated:
            res.update(status="compiled", detail="compile only (another "
                       "architecture)" + ("; in the bundle" if args.bundle
                                          else ""))
            return res
        run_prefix = emulated
    if target.startswith("vulkan"):
        problem = validate_spirv(args, dlc_compile, ccmd, tdir)
        if problem:
            res.update(status="spirv-invalid", detail=problem)
            return res

    out_dir = os.path.join(tdir, "out")
    os.makedirs(out_dir, exist_ok=True)
    rcmd = run_prefix + [artifact, "--output-dir", out_dir] + tol_args + [
        "--threads", str(args.threads)]
    for name, path in inputs.items():
        rcmd += ["--input", "%s=%s" % (name, path)]
    for name, path in refs.items():
        rcmd += ["--expect", "%s=%s" % (name, path)]
    res["run_cmd"] = quote(rcmd)
    rc, out, err, secs = run(rcmd, args.timeout)
    with open(os.path.join(tdir, "run.log"), "w") as f:
        f.write("$ %s\n%s%s" % (res["run_cmd"], out, err))
    res["run_wall_s"] = round(secs, 3)
    verdicts = common.parse_expect(out)
    res["outputs"] = verdicts
    if verdicts:
        res["max_abs"] = max(v["max_abs"] or 0 for v in verdicts.values())
        res["max_rel"] = max(v["max_rel"] or 0 for v in verdicts.values())
    if rc is None:
        res.update(status="run-timeout",
                   detail="dlc-run ran over %ds" % args.timeout)
    elif rc == 0 and len(verdicts) == len(refs) and all(
            v["ok"] for v in verdicts.values()):
        _, budget = compare_outputs(entry, refs, out_dir)
        res.update(status="pass", budget=budget,
                   detail="max abs err %.3g, max rel err %.3g; %.0f%% of "
                   "the tolerance" % (res["max_abs"], res["max_rel"],
                                      100 * budget))
    elif rc == 1:
        bad = [(n, v) for n, v in verdicts.items() if not v["ok"]]
        parts = ["%s: max abs err %.3g, max rel err %.3g" % (
            n, v["max_abs"] or float("nan"), v["max_rel"] or float("nan"))
            for n, v in bad]
        if not bad:  # a shape or dtype mismatch: dlc-run says it on stdout
            parts = [common.first_error(out + err)]
        res.update(status="mismatch", detail="; ".join(parts))
        res["notes"], res["budget"] = compare_outputs(entry, refs, out_dir)
    elif rc == 0:
        res.update(status="run-error", detail="dlc-run did not report all "
                   "outputs: %s" % (out.strip().splitlines()[-1:] or ["?"]))
    else:
        res.update(status="run-crash" if crashed(rc, err) else "run-error",
                   detail=common.first_error(err + out))
    return res


def fmt_arena(r):
    if r.get("arena_bytes") is None:
        return "-"
    s = common.human_bytes(r["arena_bytes"])
    lb = r.get("arena_lower_bound")
    if lb:
        s += " (%.2fx lb)" % (r["arena_bytes"] / lb)
    return s


def print_table(results, out=sys.stdout):
    head = ["model", "target", "status", "kernels", "onnx nodes", "arena",
            "compile s", "detail"]
    rows = []
    for r in results:
        rows.append([r["model"], r["target"], r["status"],
                     "-" if r.get("kernels") is None else str(r["kernels"]),
                     str(r.get("onnx_nodes") or r["onnx_nodes_manifest"]),
                     fmt_arena(r),
                     "%.2f" % r["compile_s"] if r.get("compile_s") is not None
                     else "%.2f*" % r["compile_wall_s"],
                     r.get("detail", "")])
    widths = [max(len(h), *(len(row[i]) for row in rows))
              for i, h in enumerate(head[:-1])]
    line = "  ".join(h.ljust(w) for h, w in zip(head, widths))
    line += "  " + head[-1]
    print(line, file=out)
    print("-" * min(len(line) + 40, 160), file=out)
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)) + "  " +
              row[-1], file=out)


def print_failures(results, out=sys.stdout):
    failed = [r for r in results if r["status"] not in STATUS_OK]
    if not failed:
        return
    print("\nTo reproduce a failure (logs: <work>/<model>/<target>/"
          "{compile,run}.log):", file=out)
    for r in failed:
        print("\n%s on %s: %s" % (r["model"], r["target"], r["status"]),
              file=out)
        for note in r.get("notes", []):
            print("  %s" % note, file=out)
        print("  $ %s" % r["compile_cmd"], file=out)
        if r.get("run_cmd"):
            print("  $ %s" % r["run_cmd"], file=out)


def print_summary(results, out=sys.stdout):
    counts = collections.Counter(r["status"] for r in results)
    print("\n%d model/target pairs: %s" % (len(results), ", ".join(
        "%d %s" % (n, s) for s, n in counts.most_common())), file=out)
    # Every node dlc-compile rejected, by operator and reason: the to-do
    # list between these models and a compile.
    ops = collections.defaultdict(lambda: [0, set()])
    for r in results:
        for node, op, opset, reason in r.get("node_errors", []):
            key = (op, reason)
            ops[key][0] += 1
            ops[key][1].add(r["model"])
    if ops:
        print("Rejected nodes by operator (nodes, models):", file=out)
        for (op, reason), (n, where) in sorted(
                ops.items(), key=lambda kv: (-len(kv[1][1]), -kv[1][0])):
            print("  %-18s %-28s %4d  %s" % (op, reason[:28], n,
                                              ", ".join(sorted(where))),
                  file=out)
    # Other failures, grouped by their message with paths taken out.
    groups = collections.defaultdict(list)
    for r in results:
        if r["status"] in STATUS_OK or r.get("node_errors"):
            continue
        key = r["detail"] if r["status"] == "mismatch" else \
            common.strip_paths(r["detail"])
        groups[(r["status"], key)].append(r["model"] + "/" + r["target"])
    if groups:
        print("Failures by message:", file=out)
        for (status, key), where in sorted(groups.items(),
                                           key=lambda kv: -len(kv[1])):
            print("  %s: %s\n    %d: %s" % (status, key, len(where),
                                            ", ".join(where)), file=out)


def list_models(entries):
    for e in entries:
        name = e["name"]
        ins = ", ".join("%s %s %s" % (i["name"], i["dtype"], i["shape"])
                        for i in e["inputs"])
        print("%s  (opset %d, %d nodes, %.2fM params, rtol %g atol %g)" % (
            name, e["opset"], e["nodes"], e["params"] / 1e6,
            e["tolerance"]["rtol"], e["tolerance"]["atol"]))
        print("    %s" % e["description"])
        print("    inputs: %s" % ins)
        if e["input_shape_pins"]:
            print("    pins:   %s" % " ".join("--input-shape=" + p for p in
                                              e["input_shape_pins"]))
        print("    ops:    %s" % ", ".join("%s %d" % kv for kv in
                                           e["ops"].items()))


def main():
    p = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    common.add_tool_args(p)
    p.add_argument("--targets", default="cpu",
                   help="comma-separated: cpu, cpu:<triple>, vulkan, "
                        "cuda:sm_XX (default %(default)s)")
    p.add_argument("--no-cubin", default="", metavar="TARGETS",
                   help="comma-separated cuda targets compiled with "
                        "--cubin=false: PTX only, checked by ptxas -O0 "
                        "(a sixth of -O3's time) instead of assembled")
    p.add_argument("--models", help="comma-separated subset (default: all)")
    p.add_argument("--list", action="store_true",
                   help="list the models with inputs, pins and ops")
    p.add_argument("--models-dir", default=models.DEFAULT_OUT,
                   help="model cache (default %(default)s)")
    p.add_argument("--work", default=common.DEFAULT_WORK,
                   help="inputs, references, artifacts and logs "
                        "(default %(default)s)")
    p.add_argument("--stage", default="artifact",
                   choices=["artifact", "import", "legalize", "optimize",
                            "dispatch", "codegen"],
                   help="stop after this compiler stage (--emit=mlir) and "
                        "do not run; for builds without codegen")
    p.add_argument("--threads", type=int, default=1,
                   help="dlc-run --threads (default %(default)s)")
    p.add_argument("--jobs", type=int, default=1,
                   help="model/target pairs checked in parallel")
    p.add_argument("--timeout", type=int, default=900,
                   help="seconds per dlc-compile or dlc-run")
    p.add_argument("--qemu", action="store_true",
                   help="run cpu:<triple> targets of another architecture "
                   "under QEMU's user mode with the cross-built dlc-run in "
                   "BUILD/runtime-<triple> (scripts/cross_runtimes.sh); "
                   "without it they are compiled only")
    p.add_argument("--json", help="write the results as JSON to this file")
    p.add_argument("--bundle", metavar="DIR",
                   help="also copy each compiled model with its inputs and "
                   "ORT references into DIR, to be run on another machine "
                   "by scripts/bundle_run.py (a GPU, a board)")
    args = p.parse_args()

    names = args.models.split(",") if args.models else None
    manifest = models.ensure_models(args.models_dir, names,
                                    log=lambda s: print(s, file=sys.stderr))
    entries = models.selected(manifest, names)
    if args.list:
        list_models(entries)
        return 0
    tools = common.find_tools(args)
    if args.bundle:
        args.bundle = bundle.Bundle(args.bundle)
    targets = split_targets(args.targets)
    args.no_cubin = split_no_cubin(args.no_cubin, targets, p)

    tasks = []
    for e in entries:
        inputs, refs = prepare_model(e, args.models_dir, args.work)
        tasks += [(e, t, inputs, refs) for t in targets]
    start = time.time()
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        futures = [pool.submit(check_one, args, tools, *t) for t in tasks]
        results = []
        for f, t in zip(futures, tasks):
            r = f.result()
            print("%-22s %-12s %s" % (r["model"], r["target"], r["status"]),
                  file=sys.stderr, flush=True)
            results.append(r)

    print("dlc-compile: %s\ndlc-run:     %s\nwork:        %s\n" % (
        tools[0], tools[1], args.work))
    print_table(results)
    if args.bundle:
        print("\nbundle: %d cases written to %s" % (args.bundle.write(),
                                                    args.bundle.dir))
    print_failures(results)
    print_summary(results)
    note = "; compile s marked * is wall time (no --stats output)" if any(
        r.get("compile_s") is None for r in results) else ""
    print("(%.0f s%s)" % (time.time() - start, note))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"tools": tools, "targets": targets,
                       "results": results}, f, indent=1)
    return 0 if all(r["status"] in STATUS_OK for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
