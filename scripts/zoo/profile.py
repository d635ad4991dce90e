"""dlc's kernels against ONNX Runtime's nodes, one zoo model, one thread
count: where the time goes on each side.

Compiles the model (the manifest's pins), runs `dlc-run --profile` several
times and ONNX Runtime with `enable_profiling` as many times, alternating,
and keeps each kernel's and each node's fastest time over the runs (the
least disturbed by other processes). Each dlc kernel lists the ONNX nodes
it computes (`dlc-compile --stats`); ORT's nodes are matched to it by name
(ORT renames the nodes it rewrites after the node or after the tensor
they write, `fused /conv1/Conv`, `/fc1/MatMul/MatMulAddFusion`,
`/conv/Conv_token_4` or `/Relu_output_0_nchwc`: each counts).
ORT nodes matched to no kernel (layout reorders and the like) are listed
at the end.

  python -m scripts.zoo.profile --build build --model resnet18
  python -m scripts.zoo.profile --build build --model yolov8n --threads 2 \
      --top 15 --json p.json
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

from . import common, models


def dlc_kernels(dlc_compile, model, flags, artifact):
    """Compiles; returns [(kernel name, [ONNX node names])]."""
    proc = subprocess.run([dlc_compile, model, "--target=cpu", "-o",
                           artifact, "--stats"] + flags,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit("dlc-compile failed:\n" + proc.stderr)
    kernels = []
    for line in (proc.stderr + proc.stdout).splitlines():
        m = re.match(r"kernel (\S+): .*ONNX nodes: (.*)$", line)
        if m:
            kernels.append((m.group(1), [n.strip()
                                         for n in m.group(2).split(", ")]))
    return kernels


def dlc_profile(dlc_run, artifact, inputs, threads, runs, path):
    """{kernel name: µs} of the last of `runs` runs."""
    cmd = [dlc_run, artifact, "--threads", str(threads), "--bench",
           str(runs), "--profile", path]
    for name, p in inputs.items():
        cmd += ["--input", "%s=%s" % (name, p)]
    subprocess.run(cmd, check=True, capture_output=True)
    with open(path) as f:
        events = json.load(f)
    times = {}
    for e in events:
        if e.get("cat") == "kernel":
            times[e["name"]] = times.get(e["name"], 0.0) + e["dur"]
    return times


def ort_profile(model, feeds, threads, runs, directory):
    """{node name: (op type, fastest µs over the runs but the first)}."""
    import onnxruntime as ort
    so = common.ort_options(threads, exact_integers=False)
    so.inter_op_num_threads = 1
    so.enable_profiling = True
    so.profile_file_prefix = os.path.join(directory, "ort")
    sess = ort.InferenceSession(model, so,
                                providers=["CPUExecutionProvider"])
    for _ in range(runs):
        sess.run(None, feeds)
    path = sess.end_profiling()
    with open(path) as f:
        events = json.load(f)
    os.remove(path)
    best = {}
    per_run = {}
    for e in events:
        if e.get("cat") != "Node" or not e["name"].endswith("_kernel_time"):
            continue
        name = e["name"][:-len("_kernel_time")]
        op = e.get("args", {}).get("op_name", "?")
        per_run.setdefault(name, (op, []))[1].append(e["dur"])
    for name, (op, durs) in per_run.items():
        # The first run includes one-time work (weight packing).
        best[name] = (op, min(durs[1:] or durs))
    return best


def node_outputs(model):
    """{node name: its output names} of the main graph."""
    import onnx
    graph = onnx.load(model, load_external_data=False).graph
    return {n.name: list(n.output) for n in graph.node}


def ort_key(name):
    """The ONNX node or tensor an ORT node name stands for: ORT names a
    node it rewrites after the original (`fused /conv/Conv`) or after the
    tensor it writes (`/Relu_output_0_nchwc`)."""
    if name.startswith("fused "):
        name = name[len("fused "):]
    if name.endswith("_nchwc"):
        name = name[:-len("_nchwc")]
    # `/fc1/MatMul/MatMulAddFusion`, `/MatMul/MatmulTransposeFusion//...`
    name = re.sub(r"(/+[A-Za-z]+Fusion)+/*$", "", name)
    # A QDQ group fused into one node: `/conv/Conv_token_4`.
    return re.sub(r"_token_\d+$", "", name)


def main(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    common.add_tool_args(p)
    p.add_argument("--model", required=True, help="zoo model name")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--rounds", type=int, default=5,
                   help="alternating profile rounds (default 5)")
    p.add_argument("--runs", type=int, default=10,
                   help="runs per round (default 10)")
    p.add_argument("--top", type=int, default=0,
                   help="print only the N kernels with the most time")
    p.add_argument("--models-dir", default=models.DEFAULT_OUT)
    p.add_argument("--json", help="write the table as JSON")
    args = p.parse_args(argv)
    dlc_compile, dlc_run = common.find_tools(args)

    known = [m.name for m in models.MODELS]
    if args.model not in known:
        sys.exit("error: no zoo model %r (the zoo has %s)" %
                 (args.model, ", ".join(known)))
    manifest = models.ensure_models(args.models_dir, [args.model])
    entry = manifest["models"][args.model]
    model = os.path.join(args.models_dir, entry["file"])

    with tempfile.TemporaryDirectory() as tmp:
        inputs = common.save_inputs(entry, os.path.join(tmp, "in"))
        artifact = os.path.join(tmp, "model.dlcx")
        kernels = dlc_kernels(dlc_compile, model,
                              common.compile_flags(entry, inputs), artifact)
        feeds = common.make_inputs(entry)
        dlc_best, ort_best = {}, {}
        for _ in range(args.rounds):
            t = dlc_profile(dlc_run, artifact,
                            common.run_inputs(entry, inputs), args.threads,
                            args.runs, os.path.join(tmp, "p.json"))
            for k, v in t.items():
                dlc_best[k] = min(v, dlc_best.get(k, v))
            for k, (op, v) in ort_profile(model, feeds, args.threads,
                                          args.runs, tmp).items():
                old = ort_best.get(k, (op, v))[1]
                ort_best[k] = (op, min(v, old))

    outputs = node_outputs(model)
    rows = []
    matched = set()
    for name, nodes in kernels:
        names = set(nodes)
        for n in nodes:
            names.update(outputs.get(n, []))
        ort_nodes = [o for o in ort_best
                     if o not in matched and ort_key(o) in names]
        matched.update(ort_nodes)
        ort_us = sum(ort_best[o][1] for o in ort_nodes)
        ops = sorted({ort_best[o][0] for o in ort_nodes})
        rows.append({"kernel": name, "dlc_us": dlc_best.get(name, 0.0),
                     "ort_us": ort_us, "ort_ops": ops, "nodes": nodes})
    rest = [{"node": o, "op": ort_best[o][0], "ort_us": ort_best[o][1]}
            for o in ort_best if o not in matched]

    dlc_sum = sum(r["dlc_us"] for r in rows)
    ort_sum = sum(r["ort_us"] for r in rows) + sum(r["ort_us"] for r in rest)
    shown = sorted(rows, key=lambda r: -r["dlc_us"])[:args.top] \
        if args.top else rows
    print("%-28s %9s %9s %6s  %s" % ("kernel", "dlc us", "ORT us",
                                     "ratio", "first node / ORT ops"))
    for r in shown:
        ratio = r["dlc_us"] / r["ort_us"] if r["ort_us"] else float("nan")
        print("%-28s %9.1f %9.1f %6.2f  %s [%s]" % (
            r["kernel"], r["dlc_us"], r["ort_us"], ratio, r["nodes"][0],
            ",".join(r["ort_ops"])))
    rest_shown = sorted(rest, key=lambda r: -r["ort_us"])
    if args.top:
        rest_shown = rest_shown[:args.top]
    for r in rest_shown:
        print("%-28s %9s %9.1f %6s  %s [%s]" % ("(ORT only)", "", r["ort_us"],
                                                "", r["node"], r["op"]))
    print("sum of fastest times: dlc %.2f ms, ORT %.2f ms, ratio %.2f "
          "(%s, %d thread%s, %d rounds of %d runs)" % (
              dlc_sum / 1e3, ort_sum / 1e3, dlc_sum / ort_sum, args.model,
              args.threads, "" if args.threads == 1 else "s", args.rounds,
              args.runs))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"kernels": rows, "ort_only": rest}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
