"""Helpers shared by the zoo scripts: locating the dlc tools, deterministic
inputs from the manifest, ONNX Runtime sessions, and parsing the output of
`dlc-compile --stats` and `dlc-run`."""

import os
import platform
import re
import subprocess
import zlib

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
DEFAULT_WORK = os.path.expanduser("~/.cache/dlc/zoo-work")


# ---------------------------------------------------------------------------
# Tools


def add_tool_args(parser):
    g = parser.add_argument_group("dlc tools")
    g.add_argument("--build", default=os.path.join(ROOT, "build"),
                   help="build directory with bin/dlc-compile and "
                        "bin/dlc-run (default: %(default)s)")
    g.add_argument("--dlc-compile", help="path of dlc-compile (overrides "
                                         "--build)")
    g.add_argument("--dlc-run", help="path of dlc-run (overrides --build)")


def find_tools(args):
    """Resolves dlc-compile and dlc-run; exits with a hint when missing."""
    def pick(explicit, tool):
        if explicit:
            candidates = [explicit]
        else:
            # A full build has bin/dlc-run; a runtime-only build has it at the
            # top of the runtime build tree.
            candidates = [os.path.join(args.build, "bin", tool),
                          os.path.join(args.build, "runtime", tool),
                          os.path.join(args.build, tool)]
        for c in candidates:
            if os.path.isfile(c) and os.access(c, os.X_OK):
                return os.path.abspath(c)
        raise SystemExit(
            "error: %s not found (looked for %s); pass --build DIR or --%s "
            "PATH" % (tool, ", ".join(candidates), tool))
    return pick(args.dlc_compile, "dlc-compile"), pick(args.dlc_run,
                                                       "dlc-run")


def target_dir_name(target):
    return re.sub(r"[^A-Za-z0-9_.+-]", "_", target)


# ---------------------------------------------------------------------------
# Inputs


def make_inputs(entry, seed=0):
    """Deterministic inputs for a manifest entry: {name: array}.

    Each input is drawn from its manifest spec with a generator seeded by
    (seed, model, input name), so inputs do not depend on the order of the
    models or on which other models are selected."""
    feeds = {}
    for spec in entry["inputs"]:
        key = "%s/%s/%d" % (entry["name"], spec["name"], seed)
        rng = np.random.default_rng(zlib.crc32(key.encode()))
        shape = spec["shape"]
        dist = spec["dist"]
        if dist == "uniform":
            a = rng.uniform(spec["low"], spec["high"], shape)
        elif dist == "randint":
            a = rng.integers(spec["low"], spec["high"], shape)
        elif dist == "value":
            a = np.full(shape, spec["value"])
        elif dist == "prefix_mask":
            # [batch, seq]: ones for a random valid length, zeros after it.
            a = np.zeros(shape)
            for b in range(shape[0]):
                a[b, :rng.integers(spec["min_ones"], shape[1] + 1)] = 1
        else:
            raise ValueError("unknown input distribution %r" % dist)
        feeds[spec["name"]] = a.astype(spec["dtype"])
    return feeds


def save_inputs(entry, directory, seed=0):
    """Writes the inputs as .npy files; returns {name: path}. An input the
    manifest marks `bind` (a constant of the deployment, such as a sample
    rate) is also written as an ONNX TensorProto next to it, for
    dlc-compile --bind-input."""
    from onnx import numpy_helper
    os.makedirs(directory, exist_ok=True)
    bound = bound_inputs(entry)
    paths = {}
    for i, (name, a) in enumerate(make_inputs(entry, seed).items()):
        path = os.path.join(directory, "input_%d.npy" % i)
        np.save(path, a)
        if name in bound:
            with open(path[:-len(".npy")] + ".pb", "wb") as f:
                f.write(numpy_helper.from_array(a, name).SerializeToString())
        paths[name] = path
    return paths


def bound_inputs(entry):
    """Inputs bound at compile time: ONNX Runtime still takes them."""
    return {s["name"] for s in entry["inputs"] if s.get("bind")}


def compile_flags(entry, inputs):
    """dlc-compile's flags for a model: its --input-shape pins and a
    --bind-input for each bound input (`inputs` from save_inputs)."""
    flags = ["--input-shape=" + pin for pin in entry["input_shape_pins"]]
    for name in sorted(bound_inputs(entry)):
        flags.append("--bind-input=%s=%s" % (
            name, inputs[name][:-len(".npy")] + ".pb"))
    return flags


def run_inputs(entry, inputs):
    """The inputs dlc-run takes: all but the bound ones."""
    bound = bound_inputs(entry)
    return {k: v for k, v in inputs.items() if k not in bound}


# ---------------------------------------------------------------------------
# ONNX Runtime


def ort_options(threads=None, exact_integers=True):
    """ONNX Runtime's session options for a reference run. `threads`: its
    intra-op threads (None: its default). `exact_integers`: on x86 CPUs
    without VNNI, ORT's uint8 x int8 kernels add pairs of products in 16
    bits, which saturate when weights use all 8 bits (the answer then
    depends on the host); session.x64quantprecision makes it use its
    exact uint8 x uint8 kernels there (no effect on other CPUs). Oracle runs
    want it; speed comparisons take ORT's default."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    if threads:
        so.intra_op_num_threads = threads
    so.log_severity_level = 3
    if exact_integers:
        so.add_session_config_entry("session.x64quantprecision", "1")
    return so


def ort_session(path, threads=1, optimized=True, spin=True,
                exact_integers=True):
    import onnxruntime as ort
    so = ort_options(threads, exact_integers)
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    if not optimized:
        so.graph_optimization_level = (
            ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    if not spin:
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


# ---------------------------------------------------------------------------
# Parsing tool output


def _number(text, pattern, cast=float):
    m = re.search(pattern, text)
    return cast(m.group(1)) if m else None


def parse_stats(text):
    """Fields of `dlc-compile --stats` (stderr); missing ones are None."""
    return {
        "onnx_nodes": _number(text, r"onnx nodes:\s*(\d+)", int),
        "kernels": _number(text, r"kernels:\s*(\d+)", int),
        "launches": _number(text, r"kernels:.*\((\d+) launches\)", int),
        "arena_bytes": _number(text, r"arena:\s*(\d+) bytes", int),
        "arena_lower_bound": _number(text, r"lower bound (\d+)", int),
        "arena_no_reuse": _number(text, r"no reuse (\d+)", int),
        "constants_bytes": _number(text, r"constants:\s*(\d+) bytes", int),
        "code_bytes": _number(text, r"code:\s*(\d+) bytes", int),
        "artifact_bytes": _number(text, r"artifact:\s*(\d+) bytes", int),
        "compile_s": _number(text, r"compile time:\s*([0-9.]+)\s*s"),
    }


def parse_bench(text):
    """Fields of `dlc-run --bench` (stdout); latencies in ms."""
    out = {}
    for key in ("p50", "p90", "p99", "min", "max", "mean"):
        out[key] = _number(text, r"\b%s ([0-9.]+)" % key)
    out["throughput"] = _number(text, r"throughput ([0-9.]+)")
    out["peak_rss_mib"] = _number(text, r"peak RSS ([0-9.]+) MiB")
    return out


def parse_expect(text):
    """Per-output verdicts of `dlc-run --expect`:
    {name: {ok, max_abs, max_rel, line}}."""
    res = {}
    for line in text.splitlines():
        m = re.match(r"output '(.*)': (OK|MISMATCH)", line)
        if not m:
            continue
        res[m.group(1)] = {
            "ok": m.group(2) == "OK",
            "max_abs": _number(line, r"max abs err ([^\s,]+)"),
            "max_rel": _number(line, r"max rel err ([^\s,;]+)"),
            "line": line.strip()}
    return res


NODE_ERROR = re.compile(r"node '(.*)' \((\w+), opset (\d+)\): (.*)")


def node_errors(text):
    """The per-node diagnostics of dlc-compile: [(node, op, opset, reason)]."""
    out = []
    for line in text.splitlines():
        m = NODE_ERROR.search(line)
        if m and "error" in line:
            out.append((m.group(1), m.group(2), int(m.group(3)),
                        m.group(4).strip()))
    return out


def strip_paths(message):
    """A message with its file paths replaced, so equal failures compare
    equal across models and runs."""
    return re.sub(r"'?/[^\s:']+'?", "<path>", message)


def first_error(text, fallback="(no message)"):
    """The first line that says 'error', without the location prefix."""
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    for l in lines:
        if "error" in l.lower():
            return re.sub(r"^.*?error:\s*", "", l)
    return lines[-1] if lines else fallback


# ---------------------------------------------------------------------------
# Machine


def machine_description():
    model = platform.processor() or "unknown cpu"
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        m = re.search(r"Model name:\s*(.+)", out)
        if m:
            model = m.group(1).strip()
    except OSError:
        pass
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count()
    return {"cpu": model, "cores": cores, "kernel": platform.release(),
            "python": platform.python_version()}


def human_bytes(n):
    if n is None:
        return "-"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return ("%d %s" % (n, unit)) if unit == "B" else \
                "%.1f %s" % (n, unit)
        n /= 1024.0


# ---------------------------------------------------------------------------
# Documents


def write_marked(path, begin, end, body, new_file="", heading=""):
    """Puts `body` between the lines `begin` and `end` of the markdown file
    `path`, replacing what was there. A file without the markers gets them
    appended (after `heading`); a missing file starts as `new_file`."""
    block = "%s\n%s\n%s" % (begin, body, end)
    text = open(path).read() if os.path.exists(path) else new_file
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        text = head + block + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + heading + block + "\n"
    with open(path, "w") as f:
        f.write(text)
