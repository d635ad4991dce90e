#!/usr/bin/env python3
"""Runs the ONNX backend node tests through dlc-compile and dlc-run.

Every node test (a model.onnx with inputs and expected outputs, shipped with
the onnx Python package) is compiled for each target and run; the shipped
outputs are the oracle. Results are compared with an expectations file that
lists the known failures, each with a reason: a test that fails but is not
listed is a regression, a listed test that passes is an unexpected pass, and
both make the run fail so that the expectations stay exact. Compiles go
through one `dlc-compile --batch` process per job (scripts/batch_compile.py:
the same compiles without loading MLIR and LLVM each time). A target the
file does not list is compared with its family's listed target (cuda:sm_90
with cuda:sm_87, cpu:<triple> with cpu, vulkan:+f with vulkan), and the run
says so.

  python -m scripts.node_tests --build build                    # cpu, check
  python -m scripts.node_tests --targets cpu,vulkan --update    # rewrite list
  python -m scripts.node_tests --filter 'test_conv' --verbose   # a subset
  python -m scripts.node_tests --report docs/conformance.md     # the doc page
  python -m scripts.node_tests --targets cuda:sm_90 --bundle B  # run B there
"""

import argparse
import collections
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import onnx

from scripts import bundle
from scripts.batch_compile import PerThread
from scripts.targets import split_targets

# The operators the frontend issue lists, by family (docs/conformance.md
# reports per family; the denominator is the node tests whose operators
# are all in this list).
FAMILIES = {
    "elementwise": """Add Sub Mul Div Pow Sqrt Reciprocal Neg Abs Exp Log Erf
        Tanh Sigmoid HardSigmoid HardSwish Relu LeakyRelu PRelu Elu Selu Gelu
        Softplus Clip Min Max Mean Sum Where Equal Less LessOrEqual Greater
        GreaterOrEqual Not And Or Xor Cast Floor Ceil Round Sign Mod IsNaN
        IsInf Sin Cos Tan Asin Acos Atan Sinh Cosh Asinh Acosh Atanh Celu
        Mish Softsign ThresholdedRelu Shrink BitShift CastLike BitwiseAnd
        BitwiseOr BitwiseXor BitwiseNot Swish""",
    "conv-norm": """Conv ConvTranspose MaxPool AveragePool GlobalAveragePool
        GlobalMaxPool BatchNormalization InstanceNormalization
        LayerNormalization GroupNormalization LpNormalization LpPool
        GlobalLpPool MeanVarianceNormalization RMSNormalization LRN Col2Im MaxUnpool
        DeformConv""",
    "matrix": "MatMul Gemm Einsum Attention RotaryEmbedding Det",
    "reduction": """ReduceMean ReduceSum ReduceMax ReduceMin ReduceProd
        ReduceL1 ReduceL2 ReduceSumSquare ReduceLogSum ReduceLogSumExp
        Softmax LogSoftmax Hardmax ArgMax ArgMin TopK NegativeLogLikelihoodLoss
        SoftmaxCrossEntropyLoss""",
    "shape": """Reshape Flatten Transpose Squeeze Unsqueeze Concat Split Slice
        Gather GatherElements GatherND ScatterND ScatterElements Scatter
        Expand Tile Pad Resize
        Upsample DepthToSpace SpaceToDepth Shape Size ConstantOfShape Range
        Identity Dropout Constant CumSum Trilu EyeLike OneHot CenterCropPad
        ReverseSequence HannWindow HammingWindow BlackmanWindow GridSample
        AffineGrid Compress TensorScatter RoiAlign""",
    "signal": "DFT STFT MelWeightMatrix",
    "text": "TfIdfVectorizer",
    "recurrent": "RNN GRU LSTM",
    "control": """If Loop Scan Optional OptionalHasElement
        OptionalGetElement""",
    "sequence": """SequenceConstruct SequenceEmpty SequenceInsert
        SequenceErase SequenceAt SequenceLength ConcatFromSequence
        SplitToSequence SequenceMap""",
    # com.microsoft operators ONNX Runtime's tools write (no ONNX node test
    # has them; scripts/ort_format_tests.py does).
    "ort-contrib": """BiasGelu FastGelu QuickGelu SkipLayerNormalization
        QLinearAdd QLinearMul QLinearSigmoid QLinearLeakyRelu QLinearConcat
        QLinearGlobalAveragePool QLinearAveragePool QGemm
        DynamicQuantizeLSTM MatMulNBits GatherBlockQuantized""",
    "quantization": """QuantizeLinear DequantizeLinear QLinearConv
        QLinearMatMul MatMulInteger ConvInteger DynamicQuantizeLinear""",
}
OP_FAMILY = {op: fam for fam, ops in FAMILIES.items() for op in ops.split()}

# What the whole-suite figure leaves out (issue 19 asks for 95% of the
# standard-domain suite except string and training-only operators): the
# ai.onnx.ml operators, the string operators and the optimizers. Tests of
# standard operators on strings (test_equal_string) or in training mode
# (Dropout, BatchNormalization) stay in.
ML_DOMAIN_OPS = {"ArrayFeatureExtractor", "Binarizer", "LabelEncoder",
                 "TreeEnsemble"}
STRING_OPS = {"RegexFullMatch", "StringConcat", "StringNormalizer",
              "StringSplit"}
TRAINING_OPS = {"Adagrad", "Adam", "Momentum"}

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def default_data_dir():
    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test",
                        "data", "node")


# Inputs that are parameters rather than data when a test fails to compile
# without them: integers (shapes, axes, trip counts) and booleans (If and
# Loop conditions).
INTEGER_TYPES = {onnx.TensorProto.INT32, onnx.TensorProto.INT64,
                 onnx.TensorProto.UINT32, onnx.TensorProto.UINT64,
                 onnx.TensorProto.BOOL}


def graph_ops(graph):
    """The op types of a graph's nodes and of their subgraphs' nodes."""
    ops = set()
    for node in graph.node:
        ops.add(node.op_type)
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                ops |= graph_ops(attr.g)
    return ops


def load_test(path):
    """Returns (ops, input names, output names, integer input names)."""
    model = onnx.load(os.path.join(path, "model.onnx"), load_external_data=False)
    inits = {t.name for t in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in inits]
    outputs = [o.name for o in model.graph.output]
    ops = sorted(graph_ops(model.graph))
    integer = [i.name for i in inputs
               if i.type.tensor_type.elem_type in INTEGER_TYPES]
    return ops, [i.name for i in inputs], outputs, integer


def sequence_io(path, workdir, name):
    """A test's sequence and optional inputs and outputs in dlc's form: a
    sequence is one tensor per element (inputs NAME[0], NAME[1], ... pinned
    with --input-shape, outputs NAME[0], ...); an optional is its value, or
    for an empty input NAME=none and no input. Returns (compile flags,
    {input index: [.pb files]}, {output index: [(name, .pb file)]}), the
    files written to `workdir`."""
    model = onnx.load(os.path.join(path, "model.onnx"), load_external_data=False)
    inits = {t.name for t in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in inits]
    data = os.path.join(path, "test_data_set_0")
    flags, ins, outs = [], {}, {}

    def elements(pb, stem, seq=None):
        if seq is None:
            seq = onnx.SequenceProto()
            with open(pb, "rb") as f:
                seq.ParseFromString(f.read())
        files = []
        for k, t in enumerate(seq.tensor_values):
            out = os.path.join(workdir, "%s_%s_%d.pb" % (name, stem, k))
            with open(out, "wb") as f:
                f.write(t.SerializeToString())
            files.append((list(t.dims), out))
        return files

    def optional_value(pb):
        opt = onnx.OptionalProto()
        with open(pb, "rb") as f:
            opt.ParseFromString(f.read())
        return opt

    def tensor_file(t, stem):
        out = os.path.join(workdir, "%s_%s.pb" % (name, stem))
        with open(out, "wb") as f:
            f.write(t.SerializeToString())
        return out

    for i, v in enumerate(inputs):
        if v.type.HasField("optional_type"):
            opt = optional_value(os.path.join(data, "input_%d.pb" % i))
            if opt.HasField("tensor_value"):
                t = opt.tensor_value
                flags.append("--input-shape=%s=%s" % (
                    v.name, ",".join(str(d) for d in t.dims)))
                ins[i] = [tensor_file(t, "in%d" % i)]
            elif opt.HasField("sequence_value"):
                files = elements(None, "in%d" % i, opt.sequence_value)
                flags += ["--input-shape=%s[%d]=%s" % (v.name, k, ",".join(
                    str(d) for d in dims)) for k, (dims, _) in
                    enumerate(files)]
                if not files:
                    flags.append("--input-shape=%s[]=" % v.name)
                ins[i] = [f for _, f in files]
            else:
                flags.append("--input-shape=%s=none" % v.name)
                ins[i] = []
            continue
        # Tensor inputs of tests with sequences may leave dims symbolic
        # (SequenceMap's): pin them to the test data's.
        if (v.type.HasField("tensor_type") and any(
                not d.HasField("dim_value")
                for d in v.type.tensor_type.shape.dim) and any(
                u.type.HasField("sequence_type") for u in inputs)):
            t = onnx.TensorProto()
            with open(os.path.join(data, "input_%d.pb" % i), "rb") as f:
                t.ParseFromString(f.read())
            flags.append("--input-shape=%s=%s" % (
                v.name, ",".join(str(d) for d in t.dims)))
        if v.type.HasField("sequence_type"):
            files = elements(os.path.join(data, "input_%d.pb" % i), "in%d" % i)
            flags += ["--input-shape=%s[%d]=%s" % (v.name, k, ",".join(
                str(d) for d in dims)) for k, (dims, _) in enumerate(files)]
            if not files:
                flags.append("--input-shape=%s[]=" % v.name)
            ins[i] = [f for _, f in files]
    for i, v in enumerate(model.graph.output):
        pb = os.path.join(data, "output_%d.pb" % i)
        if v.type.HasField("optional_type") and os.path.exists(pb):
            opt = optional_value(pb)
            if opt.HasField("tensor_value"):
                outs[i] = [(v.name, tensor_file(opt.tensor_value,
                                                "out%d" % i))]
            elif opt.HasField("sequence_value"):
                outs[i] = [("%s[%d]" % (v.name, k), f) for k, (_, f) in
                           enumerate(elements(None, "out%d" % i,
                                              opt.sequence_value))]
            else:
                outs[i] = []
            continue
        if v.type.HasField("sequence_type") and os.path.exists(pb):
            outs[i] = [("%s[%d]" % (v.name, k), f) for k, (_, f) in
                       enumerate(elements(pb, "out%d" % i))]
    return flags, ins, outs


def element_types(path):
    """The element types of every tensor in a test's model (graph inputs,
    outputs, initializers, the types shape inference gives intermediate
    values, Cast targets and constants, subgraphs included), as names."""
    model = onnx.load(os.path.join(path, "model.onnx"), load_external_data=False)
    try:
        model = onnx.shape_inference.infer_shapes(model)
    except Exception:  # the types written in the model still count
        pass
    found = set()

    def walk(graph):
        for v in list(graph.input) + list(graph.output) + list(graph.value_info):
            if v.type.HasField("tensor_type"):
                found.add(v.type.tensor_type.elem_type)
        found.update(t.data_type for t in graph.initializer)
        for node in graph.node:
            for attr in node.attribute:
                if attr.name == "to" and attr.type == onnx.AttributeProto.INT:
                    found.add(attr.i)
                elif attr.type == onnx.AttributeProto.TENSOR:
                    found.add(attr.t.data_type)
                elif attr.type == onnx.AttributeProto.GRAPH:
                    walk(attr.g)

    walk(model.graph)
    return {onnx.TensorProto.DataType.Name(t).lower() for t in found if t}


def test_family(ops):
    fams = {OP_FAMILY.get(op) for op in ops}
    if None in fams:
        return None
    # A model mixing families counts for the family of its last listed op
    # in FAMILIES order that is not elementwise (expanded functions).
    for fam in reversed(list(FAMILIES)):
        if fam in fams:
            return fam
    return None


def compile_model(args, cmd):
    """dlc-compile `cmd` in this thread's `dlc-compile --batch` process
    (scripts/batch_compile.py): returncode, stderr, died."""
    r = args.compiler.run(cmd[1:], args.timeout)
    if r.returncode is None:
        raise subprocess.TimeoutExpired(cmd, args.timeout)
    return r


def run_one(args, name, target, workdir):
    path = os.path.join(args.data_dir, name)
    data = os.path.join(path, "test_data_set_0")
    ops, inputs, outputs, integer = load_test(path)
    artifact = os.path.join(workdir, target.replace(":", "_"), name + ".dlcx")
    os.makedirs(os.path.dirname(artifact), exist_ok=True)
    start = time.time()
    seq_flags, seq_inputs, seq_outputs = sequence_io(
        path, os.path.dirname(artifact), name)
    compile_cmd = [args.dlc_compile, os.path.join(path, "model.onnx"),
                   "--target=" + target, "-o", artifact] + seq_flags
    bound_note = ""
    try:
        p = compile_model(args, compile_cmd)
        # Shape parameters given as graph inputs (Reshape's shape, Slice's
        # starts, ...) must be known when compiling: bind the integer
        # inputs to the test's values, as a user would with --bind-input.
        # First the integer inputs, then everything but the data input,
        # then every input (Range's float bounds are all parameters).
        bound = []
        for candidates in (integer, inputs[1:], inputs):
            if p.returncode == 0 or not ("compile-time" in p.stderr or
                                         "at run time" in p.stderr):
                break
            bound = list(candidates)
            binds = ["--bind-input=%s=%s" % (n, os.path.join(
                data, "input_%d.pb" % inputs.index(n))) for n in bound]
            p = compile_model(args, compile_cmd + binds)
        # f16 and f64 on Vulkan are opt-in device features (+fp16, +fp64)
        # that lavapipe has: tests of such operators run with the features
        # the errors name, added to the target's own, and say so.
        added = []
        while p.returncode != 0:
            m = re.search(r"needs the target feature (\+\w+)", p.stderr)
            if not m or m.group(1) in added:
                break
            added.append(m.group(1))
            compile_cmd[2] = "--target=%s%s%s" % (
                target, "," if ":" in target else ":", ",".join(added))
            binds = ["--bind-input=%s=%s" % (n, os.path.join(
                data, "input_%d.pb" % inputs.index(n))) for n in bound]
            p = compile_model(args, compile_cmd + binds)
            bound_note = "with %s " % ",".join(added)
    except subprocess.TimeoutExpired:
        return "compile-timeout", "compile took over %ds" % args.timeout
    if p.returncode != 0:
        first = next((l for l in p.stderr.splitlines() if "error" in l),
                     p.stderr.strip().splitlines()[-1:] or ["?"])
        if isinstance(first, list):
            first = first[0]
        if p.died or p.returncode < 0 or "Stack dump" in p.stderr:
            return "compile-crash", first.split("error: ", 1)[-1]
        return "compile-error", first.split("error: ", 1)[-1]
    # A sequence input or output is one tensor per element.
    run_inputs = []
    for i, n in enumerate(inputs):
        if n in bound:
            continue
        run_inputs += [(None, f) for f in seq_inputs.get(
            i, [os.path.join(data, "input_%d.pb" % i)])]
    run_expects = []
    for i, out in enumerate(outputs):
        if i in seq_outputs:
            run_expects += seq_outputs[i]
        elif os.path.exists(os.path.join(data, "output_%d.pb" % i)):
            run_expects.append((out, os.path.join(data, "output_%d.pb" % i)))
    tolerances = ["--rtol", str(args.rtol), "--atol", str(args.atol)]
    if args.bundle:
        args.bundle.add("node", name, target, artifact, run_inputs,
                        run_expects, tolerances)
    if target.startswith("cuda"):
        return "pass", "compiled (PTX assembled by ptxas in dlc-compile)"
    if not bundle.runs_here(target):
        return "pass", "compiled for another machine (run it with --bundle)"
    run_cmd = [args.dlc_run, artifact] + tolerances + ["--threads", "1"]
    for _, f in run_inputs:
        run_cmd += ["--input", f]
    for out, f in run_expects:
        run_cmd += ["--expect", "%s=%s" % (out, f)]
    try:
        p = subprocess.run(run_cmd, capture_output=True, text=True,
                           timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return "run-timeout", "run took over %ds" % args.timeout
    if p.returncode == 0:
        return "pass", bound_note + (
            "bound " + ",".join(bound) + " " if bound else "") + \
            "%.2fs" % (time.time() - start)
    msg = (p.stderr.strip() or p.stdout.strip()).splitlines()
    msg = msg[-1] if msg else "exit %d" % p.returncode
    if p.returncode == 1:
        return "mismatch", msg
    return "run-crash" if p.returncode < 0 else "run-error", msg


def read_expectations(path):
    exp = {}
    if not os.path.exists(path):
        return exp
    for line in open(path):
        line = line.split("#", 1)
        reason = line[1].strip() if len(line) > 1 else ""
        fields = line[0].split()
        if not fields:
            continue
        target, name, status = fields
        exp[(target, name)] = (status, reason)
    return exp


def family_expectations(expected, targets):
    """Expectations for every target: its own, or for a target the file
    does not list, those of the listed target of its family (cuda:sm_90
    takes cuda:sm_87's; cpu:<triple> takes cpu's; vulkan:+f takes
    vulkan's), under the target's name. Returns them and the borrowed
    (target, from) pairs."""
    listed = {t for t, _ in expected}
    borrowed = []
    out = dict(expected)
    for t in targets:
        if t in listed:
            continue
        family = t.split(":", 1)[0]
        donors = sorted(d for d in listed
                        if d == family or d.startswith(family + ":"))
        if not donors:
            continue
        donor = family if family in donors else donors[0]
        borrowed.append((t, donor))
        for (target, name), v in expected.items():
            if target == donor:
                out[(t, name)] = v
    return out, borrowed


def write_expectations(path, results, old):
    lines = ["# Known node-test failures: TARGET TEST STATUS  # reason",
             "# Regenerate with python -m scripts.node_tests --update; keep "
             "reasons",
             "# accurate (they are reviewed)."]
    for (target, name), (status, msg) in sorted(results.items()):
        if status == "pass":
            continue
        prev = old.get((target, name))
        reason = prev[1] if prev and prev[0] == status and prev[1] else msg
        lines.append("%s %s %s  # %s" % (target, name, status,
                                         reason.replace("\n", " ")[:240]))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def reason_class(status, msg):
    """A failure message without its specifics: what a reader can count."""
    msg = re.sub(r"node '[^']*'", "node", msg)
    msg = re.sub(r"kernel '[^']*'", "kernel", msg)
    msg = re.sub(r"'[^']*'", "'...'", msg) if status != "compile-error" \
        else msg
    msg = re.sub(r"MISMATCH: .*", "MISMATCH", msg)
    msg = re.sub(r"opset \d+", "opset N", msg)
    msg = re.sub(r"0x[0-9a-f]+", "", msg)
    return "%s: %s" % (status, msg[:150])


def write_report(path, results, tests, excluded, targets, command):
    fam_counts = collections.defaultdict(lambda: collections.Counter())
    for (target, name), (status, _) in results.items():
        fam = tests[name]["family"]
        fam_counts[(fam, target)]["total"] += 1
        if status == "pass":
            fam_counts[(fam, target)]["pass"] += 1
    lines = ["# Conformance: ONNX backend node tests",
             "",
             "Generated by `%s` on %s." % (command, time.strftime("%Y-%m-%d")),
             "",
             "The oracle is the expected outputs shipped with the onnx "
             "package (onnx %s, node tests for opsets up to %d). A test is in "
             "scope when every operator in its model is in the frontend "
             "issue's list; `_expanded` variants (the same test written with "
             "primitive operators) count as separate tests. Known failures, "
             "each with its reason, are in `test/conformance/"
             "node-tests.expected`. On `cuda:*` targets a pass means that "
             "the model compiled and its PTX assembled with ptxas for that "
             "architecture; no GPU runs them here, so those columns do not "
             "check results (nor do `cpu:<triple>` columns of another "
             "architecture than this machine's). Runs on an actual GPU (compiled here, run "
             "there from a bundle) are recorded in docs/devices.md."
             % (onnx.__version__, onnx.defs.onnx_opset_version()),
             "",
             "| family | " + " | ".join(targets) + " |",
             "|---|" + "---|" * len(targets)]
    for fam in list(FAMILIES) + ["total"]:
        cells = []
        for t in targets:
            if fam == "total":
                c = collections.Counter()
                for f in FAMILIES:
                    c.update(fam_counts[(f, t)])
            else:
                c = fam_counts[(fam, t)]
            cells.append(c)
        # Families with no test in this suite (ort-contrib outside
        # scripts/ort_format_tests.py's) get no row.
        if fam != "total" and all(c["total"] == 0 for c in cells):
            continue
        for i, c in enumerate(cells):
            pct = 100.0 * c["pass"] / c["total"] if c["total"] else 0
            cells[i] = "%d / %d (%.1f%%)" % (c["pass"], c["total"], pct)
        lines.append("| %s | %s |" % (fam, " | ".join(cells)))
    lines.append("")
    bound = sum(1 for s, m in results.values()
                if s == "pass" and m.startswith("bound "))
    lines.append("%d of the passes bind integer inputs at compile time "
                 "(`dlc-compile --bind-input`): their models take shape "
                 "parameters (Reshape's shape, Slice's starts, ...) as graph "
                 "inputs, which an ahead-of-time compiler with static shapes "
                 "must know." % bound)
    lines.append("")
    def with_feature(feature):
        return sum(1 for (t, _), (s, m) in results.items()
                   if s == "pass" and m.startswith("with ") and
                   feature in m.split(" ")[1].split(","))
    fp16, fp64, int64 = (with_feature("+fp16"), with_feature("+fp64"),
                         with_feature("+int64"))
    if fp16 or fp64 or int64:
        lines.append("")
        lines.append("Vulkan passes compiled with opt-in device features "
                     "(lavapipe has them all; desktop GPUs have f64 and "
                     "64-bit integers, mobile GPUs mostly lack them): %d "
                     "tests of f16 operators with `+fp16` (f16 arithmetic "
                     "and 16-bit storage), %d of f64 ones with `+fp64`, %d "
                     "dividing 64-bit integers with `+int64` (without it "
                     "64-bit integers are pairs of 32-bit ones, which have "
                     "no division). Without the feature dlc rejects such "
                     "kernels with an error naming it." % (fp16, fp64, int64))
    lines.append("")
    by_status = collections.Counter(s for s, _ in results.values())
    lines.append("Statuses over all targets: " + ", ".join(
        "%s %d" % kv for kv in sorted(by_status.items())) + ".")
    for t in targets:
        classes = collections.Counter()
        examples = {}
        for (tt, name), (status, msg) in sorted(results.items()):
            if tt != t or status == "pass":
                continue
            c = reason_class(status, msg)
            classes[c] += 1
            examples.setdefault(c, name)
        lines += ["", "## Failures on %s, by reason" % t, "",
                  "| tests | reason | e.g. |", "|---|---|---|"]
        for c, n in classes.most_common():
            lines.append("| %d | %s | %s |" % (
                n, c.replace("|", "\\|"), examples[c]))
    # The whole suite: tests out of scope count as not passing.
    every = len(tests) + len(excluded)
    left_out = lambda ops: bool(set(ops) & (ML_DOMAIN_OPS | STRING_OPS |
                                             TRAINING_OPS))
    standard = every - sum(1 for o in excluded.values() if left_out(o)) - \
        sum(1 for t in tests.values() if left_out(t["ops"]))
    ml = lambda ops: bool(set(ops) & ML_DOMAIN_OPS)
    domain = every - sum(1 for o in excluded.values() if ml(o)) - \
        sum(1 for t in tests.values() if ml(t["ops"]))
    lines += ["", "## The whole suite", "",
              "Out-of-scope tests count as failures here. The second row "
              "leaves out the ai.onnx.ml operators (%s), the third also the "
              "string operators (%s) and the training-only ones (%s); "
              "standard operators on strings or in training mode stay in "
              "both." % (
                  ", ".join(sorted(ML_DOMAIN_OPS)),
                  ", ".join(sorted(STRING_OPS)),
                  ", ".join(sorted(TRAINING_OPS))), "",
              "| tests | " + " | ".join(targets) + " |",
              "|---|" + "---|" * len(targets)]
    for label, total, counted in (
            ("every node test", every, lambda name: True),
            ("standard domain", domain,
             lambda name: not ml(tests[name]["ops"])),
            ("standard domain, no string or training-only operators",
             standard, lambda name: not left_out(tests[name]["ops"]))):
        cells = []
        for t in targets:
            n = sum(1 for (tt, name), (st, _) in results.items()
                    if tt == t and st == "pass" and counted(name))
            cells.append("%d / %d (%.1f%%)" % (n, total, 100.0 * n / total))
        lines.append("| %s | %s |" % (label, " | ".join(cells)))
    ops = collections.Counter()
    for name, node_ops in excluded.items():
        for op in set(node_ops):
            if op not in OP_FAMILY:
                ops[op] += 1
    lines += ["", "## Out of scope", "",
              "%d node tests use an operator outside the frontend issue's "
              "list and are not run. The operators (tests using each):" %
              len(excluded), "",
              ", ".join("%s (%d)" % kv for kv in sorted(ops.items())) + "."]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"),
                    help="build directory holding bin/dlc-compile, dlc-run")
    ap.add_argument("--data-dir", default=default_data_dir())
    ap.add_argument("--targets", default="cpu")
    ap.add_argument("--filter", default="", help="regex on test names")
    ap.add_argument("--element-types", default="",
                    help="run only the tests with a tensor of one of these "
                    "element types (ONNX names, lower case, comma-separated: "
                    "'int8,uint8'), for a target feature that changes only "
                    "how those types are stored or computed")
    ap.add_argument("--also", default="",
                    help="with --element-types: also run the tests whose "
                    "name matches this regex (lowerings that keep such a "
                    "type between kernels although the model has none)")
    ap.add_argument("--expectations",
                    default=os.path.join(ROOT, "test", "conformance",
                                         "node-tests.expected"))
    ap.add_argument("--update", action="store_true",
                    help="rewrite the expectations from this run")
    ap.add_argument("--report", help="write the conformance page here")
    ap.add_argument("--json", help="write every result here")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-5)
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--bundle", metavar="DIR",
                    help="also copy every compiled test (artifact, inputs, "
                    "expected outputs) into DIR, to be run elsewhere by "
                    "scripts/bundle_run.py (a GPU or a board)")
    args = ap.parse_args()
    if args.bundle:
        args.bundle = bundle.Bundle(args.bundle)
    args.dlc_compile = os.path.join(args.build, "bin", "dlc-compile")
    args.dlc_run = os.path.join(args.build, "bin", "dlc-run")
    for tool in (args.dlc_compile, args.dlc_run):
        if not os.access(tool, os.X_OK):
            sys.exit("node_tests.py: %s is missing; build dlc first" % tool)
    targets = split_targets(args.targets)

    tests = {}
    excluded = {}
    pattern = re.compile(args.filter) if args.filter else None
    only_types = set(filter(None, args.element_types.split(",")))
    also = re.compile(args.also) if args.also else None
    unknown = only_types - {n.lower() for n in onnx.TensorProto.DataType.keys()}
    if unknown:
        sys.exit("node_tests.py: --element-types: not ONNX element types: %s"
                 % ", ".join(sorted(unknown)))
    for name in sorted(os.listdir(args.data_dir)):
        if pattern and not pattern.search(name):
            continue
        path = os.path.join(args.data_dir, name)
        if not os.path.exists(os.path.join(path, "model.onnx")):
            continue
        ops = load_test(path)[0]
        fam = test_family(ops)
        if fam is None:
            excluded[name] = ops
            continue
        if (only_types and not only_types & element_types(path) and
                not (also and also.search(name))):
            continue
        tests[name] = {"family": fam, "ops": ops}

    results = {}
    workdir = tempfile.mkdtemp(prefix="dlc-node-tests-")
    args.compiler = PerThread(args.dlc_compile)
    try:
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            futures = {pool.submit(run_one, args, n, t, workdir): (t, n)
                       for t in targets for n in tests}
            for fut in concurrent.futures.as_completed(futures):
                key = futures[fut]
                try:
                    results[key] = fut.result()
                except Exception as e:  # a harness bug must not hide
                    results[key] = ("harness-error", repr(e))
                if args.verbose:
                    print("%-8s %-60s %s  %s" % (key[0], key[1],
                                                 results[key][0],
                                                 results[key][1]))
    finally:
        # A process that fails only at exit (a sanitizer's leak report)
        # fails the run: separate processes would have failed their tests.
        exit_failures = args.compiler.close()
        shutil.rmtree(workdir, ignore_errors=True)
    for failure in exit_failures:
        print("node_tests.py: " + failure, file=sys.stderr)

    if args.bundle:
        print("bundle: %d cases written to %s" % (args.bundle.write(),
                                                  args.bundle.dir))
    expected = read_expectations(args.expectations)
    if not args.update:
        expected, borrowed = family_expectations(expected, targets)
        for t, donor in borrowed:
            print("note: %s has no expectations of its own; comparing with "
                  "%s's" % (t, donor))
    regressions, xpass, changed = [], [], []
    for key, (status, msg) in sorted(results.items()):
        exp = expected.get(key)
        if status == "pass" and exp:
            xpass.append(key)
        elif status != "pass" and not exp:
            regressions.append((key, status, msg))
        elif status != "pass" and exp[0] != status:
            changed.append((key, exp[0], status, msg))

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"%s %s" % k: v for k, v in results.items()}, f,
                      indent=1, sort_keys=True)
    if args.update:
        keep = {k: v for k, v in expected.items() if k not in results}
        merged = dict(results)
        for k, v in keep.items():
            merged[k] = (v[0], v[1])
        write_expectations(args.expectations, merged, expected)
    if args.report:
        write_report(args.report, results, tests, excluded, targets,
                     "python -m scripts.node_tests --targets %s --report %s" %
                     (args.targets, os.path.relpath(args.report, ROOT)))

    for t in targets:
        n = sum(1 for (tt, _) in results if tt == t)
        ok = sum(1 for (tt, _), (s, _) in results.items()
                 if tt == t and s == "pass")
        print("%s: %d / %d node tests pass (%.1f%%)" %
              (t, ok, n, 100.0 * ok / n if n else 0))
    if args.update:
        print("expectations written to %s" % args.expectations)
        return 0
    for key, status, msg in regressions:
        print("REGRESSION %s %s: %s: %s" % (key[0], key[1], status, msg))
    for key, old, new, msg in changed:
        print("CHANGED %s %s: expected %s, got %s: %s" %
              (key[0], key[1], old, new, msg))
    for key in xpass:
        print("UNEXPECTED PASS %s %s (remove it from %s)" %
              (key[0], key[1], os.path.relpath(args.expectations, ROOT)))
    return 1 if regressions or xpass or changed or exit_failures else 0


if __name__ == "__main__":
    sys.exit(main())
