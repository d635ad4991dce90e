"""The dlc Python package against ONNX Runtime (python/dlc).

Run from the repository root with the build's package on the path:
    PYTHONPATH=build/python python -m pytest python/tests
(ctest's python-tests does this). The zoo model comes from
scripts/zoo/models.py's cache (generated on first use).
"""

import html.parser
import os
import shutil
import subprocess
import sys
import threading

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import dlc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def small_model(batch="N"):
    """Conv + Relu + global pool + Gemm, with a dynamic batch dimension."""
    rng = np.random.default_rng(3)
    w = rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.3
    b = rng.standard_normal(8).astype(np.float32) * 0.1
    fc = rng.standard_normal((8, 4)).astype(np.float32) * 0.5
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("GlobalAveragePool", ["r"], ["p"]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("Gemm", ["f", "fc"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "small",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       [batch, 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 4])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b"),
         numpy_helper.from_array(fc, "fc")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def ort_run(model, feeds):
    data = model if isinstance(model, bytes) else model.SerializeToString()
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in session.get_outputs()],
                    session.run(None, feeds)))


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "small.onnx"
    onnx.save(small_model(), str(path))
    return str(path)


def test_compile_path_and_run_matches_onnxruntime(model_file):
    artifact = dlc.compile(model_file, input_shapes={"x": [2, 3, 16, 16]})
    assert isinstance(artifact, dlc.Artifact) and len(artifact) > 0
    session = dlc.Session(artifact, threads=1)
    assert session.driver == "cpu"
    assert [(i.name, i.dtype, i.shape) for i in session.inputs] == [
        ("x", np.dtype(np.float32), (2, 3, 16, 16))]
    assert [(o.name, o.shape) for o in session.outputs] == [("y", (2, 4))]
    x = np.random.default_rng(0).standard_normal((2, 3, 16, 16)).astype(
        np.float32)
    got = session.run({"x": x})
    want = ort_run(onnx.load(model_file), {"x": x})
    np.testing.assert_allclose(got["y"], want["y"], rtol=1e-4, atol=1e-5)
    # Keyword inputs, a second run on the same session.
    np.testing.assert_array_equal(session.run(x=x)["y"], got["y"])


def test_compile_modelproto_and_session_from_path(tmp_path):
    artifact = dlc.compile(small_model(batch=1))
    path = tmp_path / "m.dlcx"
    artifact.save(path)
    session = dlc.Session(str(path))
    x = np.ones((1, 3, 16, 16), np.float32)
    want = ort_run(small_model(batch=1), {"x": x})
    np.testing.assert_allclose(session.run({"x": x})["y"], want["y"],
                               rtol=1e-4, atol=1e-5)
    assert dlc.Artifact.load(path).data == artifact.data


def test_vulkan_matches_onnxruntime(model_file):
    artifact = dlc.compile(model_file, target="vulkan",
                           input_shapes={"x": [1, 3, 16, 16]})
    session = dlc.Session(artifact)
    assert session.driver == "vulkan"
    x = np.random.default_rng(1).standard_normal((1, 3, 16, 16)).astype(
        np.float32)
    want = ort_run(onnx.load(model_file), {"x": x})
    np.testing.assert_allclose(session.run({"x": x})["y"], want["y"],
                               rtol=1e-4, atol=1e-5)


class _Page(html.parser.HTMLParser):
    """Tags that close in order, and what a report shows."""

    def __init__(self):
        super().__init__()
        self.stack, self.errors = [], []
        self.kernel_rows, self.node_chips, self.buffers = [], [], 0
        self.external = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag not in ("meta",):
            self.stack.append(tag)
        if tag == "tr" and a.get("class") == "kernel":
            self.kernel_rows.append(a["id"][len("kernel-"):])
        if tag == "span" and a.get("class") == "node":
            self.node_chips.append(a["title"])
        if tag == "rect" and a.get("class") == "buffer":
            self.buffers += 1
        if tag in ("link", "img", "iframe") or "src" in a or "href" in a:
            self.external.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(tag)
        else:
            self.stack.pop()


def check_report(path, model, session):
    page = _Page()
    page.feed(open(path).read())
    assert not page.errors and page.stack == [], (page.errors, page.stack)
    assert not page.external, page.external
    assert len(page.kernel_rows) == session.kernel_count
    assert page.buffers > 0
    # Every node that computes something is shown in a kernel's colour.
    shown = {t.split(" in main_k")[0] for t in page.node_chips}
    computing = {n.name for n in model.graph.node
                 if n.op_type in ("Conv", "Gemm", "Clip", "Add")}
    assert computing <= shown, sorted(computing - shown)[:5]


@pytest.fixture(scope="module")
def mobilenet(tmp_path_factory):
    """The zoo's MobileNetV2 compiled for the CPU with --report: the model,
    its manifest entry, the artifact and the report's path."""
    sys.path.insert(0, ROOT)
    from scripts.zoo import models as zoo_models
    manifest = zoo_models.ensure_models(names=["mobilenetv2"])
    entry = manifest["models"]["mobilenetv2"]
    path = os.path.join(manifest["dir"], entry["file"])
    shapes = dict(pin.split("=") for pin in entry["input_shape_pins"])
    report = str(tmp_path_factory.mktemp("report") / "report.html")
    artifact = dlc.compile(path, input_shapes={
        k: [int(d) for d in v.split(",")] for k, v in shapes.items()},
        report=report)
    return path, entry, artifact, report


def test_zoo_model_matches_onnxruntime(mobilenet):
    from scripts.zoo import common as zoo_common
    path, entry, artifact, report = mobilenet
    feeds = zoo_common.make_inputs(entry, 0)
    session = dlc.Session(artifact)
    got = session.run(feeds)
    check_report(report, onnx.load(path), session)
    want = ort_run(onnx.load(path), feeds)
    tol = entry["tolerance"]
    for name, ref in want.items():
        np.testing.assert_allclose(got[name], ref, rtol=tol["rtol"],
                                   atol=tol["atol"])


def test_report_in_headless_chromium(mobilenet, tmp_path):
    """The report opens in a real browser: Chromium (scripts/setup.sh
    installs it) loads it from disk, its script runs to the end with every
    kernel row present, and the console shows no error."""
    path, entry, artifact, report = mobilenet
    browser = shutil.which("chromium")
    assert browser, "chromium is missing (scripts/setup.sh installs it)"
    kernels = dlc.Session(artifact).kernel_count
    p = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu",
         "--no-first-run", "--user-data-dir=" + str(tmp_path / "profile"),
         "--enable-logging=stderr", "--v=0", "--dump-dom",
         "file://" + os.path.abspath(report)],
        capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    assert 'data-ready="%d"' % kernels in p.stdout, p.stdout[:500]
    assert p.stdout.count('<tr class="kernel"') == kernels == 54
    console = [line for line in p.stderr.splitlines() if "CONSOLE" in line]
    assert not console, console


def test_compile_errors_carry_the_compilers_message(model_file):
    with pytest.raises(dlc.CompileError, match="pin it with --input-shape"):
        dlc.compile(model_file)
    unsupported = helper.make_model(helper.make_graph(
        [helper.make_node("ImageDecoder", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.UINT8, [16])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, None)]),
        opset_imports=[helper.make_opsetid("", 20)])
    with pytest.raises(dlc.CompileError, match="ImageDecoder") as error:
        dlc.compile(unsupported)
    assert error.value.status != 0
    with pytest.raises(dlc.CompileError, match="calibration-method"):
        dlc.compile(model_file, input_shapes={"x": [1, 3, 16, 16]},
                    calibration_method="entropy")
    with pytest.raises(dlc.CompileError, match="no-such-option"):
        dlc.compile(model_file, no_such_option=1)
    with pytest.raises(dlc.CompileError, match="unknown target|target"):
        dlc.compile(model_file, target="tpu")
    with pytest.raises(TypeError):
        dlc.compile(12)


def test_options_do_not_leak_between_compiles(model_file):
    shapes = {"x": [1, 3, 16, 16]}
    rng = np.random.default_rng(5)
    samples = [{"x": rng.standard_normal((1, 3, 16, 16)).astype(np.float32)}
               for _ in range(4)]
    plain = dlc.compile(model_file, input_shapes=shapes)
    quantized = dlc.compile(model_file, input_shapes=shapes, quantize="int8",
                            calibration_data=samples,
                            calibration_method="percentile:99.9")
    assert quantized.data != plain.data
    assert dlc.compile(model_file, input_shapes=shapes).data == plain.data


def test_quantized_artifact_matches_its_qdq_model_in_onnxruntime(model_file):
    shapes = {"x": [1, 3, 16, 16]}
    rng = np.random.default_rng(6)
    samples = [{"x": rng.standard_normal((1, 3, 16, 16)).astype(np.float32)}
               for _ in range(8)]
    options = dict(input_shapes=shapes, quantize="int8",
                   calibration_data=samples)
    qdq = dlc.compile(model_file, emit="onnx", **options)
    assert isinstance(qdq, bytes)
    session = dlc.Session(dlc.compile(model_file, **options))
    x = rng.standard_normal((1, 3, 16, 16)).astype(np.float32)
    got = session.run({"x": x})["y"]
    want = ort_run(qdq, {"x": x})["y"]
    # Both round intermediate tensors to 8 bits on their own: at most a
    # step or so of the output's encoding apart.
    assert np.abs(got - want).max() < 0.05 * np.abs(want).max() + 1e-6


def test_pruned_model_matches_its_onnx_in_onnxruntime(model_file):
    # --prune through the keyword: the pruned model keeps 2 of every 4
    # weights along each output's reduction, and dlc's artifact of it
    # computes what ONNX Runtime computes with it.
    shapes = {"x": [1, 3, 16, 16]}
    pruned = dlc.compile(model_file, emit="onnx", prune="2:4",
                         input_shapes=shapes)
    model = onnx.load_from_string(pruned)
    weights = {t.name: numpy_helper.to_array(t)
               for t in model.graph.initializer}
    conv = next(n for n in model.graph.node if n.op_type == "Conv")
    w = weights[conv.input[1]].reshape(8, -1)  # outputs x (3 * 3 * 3)
    groups = w[:, :24].reshape(8, 6, 4)
    assert ((groups != 0).sum(axis=2) <= 2).all()
    session = dlc.Session(dlc.compile(model_file, prune="2:4",
                                      input_shapes=shapes))
    x = np.random.default_rng(9).standard_normal(
        (1, 3, 16, 16)).astype(np.float32)
    got = session.run({"x": x})["y"]
    want = ort_run(pruned, {"x": x})["y"]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_emit_ptx_and_mlir(model_file):
    shapes = {"x": [1, 3, 16, 16]}
    ptx = dlc.compile(model_file, target="cuda:sm_87", emit="ptx",
                      input_shapes=shapes)
    assert b".target sm_87" in ptx
    mlir = dlc.compile(model_file, emit="mlir", stage="legalize",
                       input_shapes=shapes)
    assert b"linalg" in mlir


def test_run_checks_inputs(model_file):
    session = dlc.Session(dlc.compile(model_file,
                                      input_shapes={"x": [1, 3, 16, 16]}))
    with pytest.raises(KeyError, match="missing input 'x'"):
        session.run({})
    with pytest.raises(TypeError, match="input 'x' is float32, got float64"):
        session.run({"x": np.zeros((1, 3, 16, 16))})
    with pytest.raises(ValueError, match=r"shape \[1, 3, 16, 16\], got"):
        session.run({"x": np.zeros((1, 3, 16, 15), np.float32)})
    with pytest.raises(KeyError, match="no input named 'z'"):
        session.run({"x": np.zeros((1, 3, 16, 16), np.float32), "z": 1})
    # Non-contiguous arrays are copied into the layout the runtime reads.
    x = np.random.default_rng(2).standard_normal((1, 3, 16, 32)).astype(
        np.float32)[..., ::2]
    np.testing.assert_array_equal(session.run({"x": x})["y"],
                                  session.run({"x": x.copy()})["y"])
    with pytest.raises(RuntimeError, match="loading the artifact"):
        dlc.Session(b"not an artifact")


def test_bench_and_profile(model_file):
    artifact = dlc.compile(model_file, input_shapes={"x": [1, 3, 16, 16]})
    result = dlc.Session(artifact, threads=1).bench(20, warmup=2)
    assert len(result.times) == 20
    assert 0 < result.p50 <= result.p90 <= result.p99
    assert "p50" in str(result)
    session = dlc.Session(artifact, threads=1, profile=True)
    session.run({"x": np.zeros((1, 3, 16, 16), np.float32)})
    timings = session.timings()
    assert len(timings) == session.kernel_count > 0
    assert all(name and duration >= 0 for name, _, duration in timings)


def test_compiles_from_threads(model_file):
    results, errors = [], []

    def work():
        try:
            results.append(dlc.compile(
                model_file, input_shapes={"x": [1, 3, 16, 16]}).data)
        except Exception as e:  # reported below
            errors.append(e)
    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 3 and len(set(results)) == 1


def test_compile_matches_the_command_line_tool(model_file, tmp_path):
    tool = os.path.join(os.environ.get("DLC_BUILD_DIR", "build"), "bin",
                        "dlc-compile")
    if not os.path.exists(tool):
        pytest.skip("dlc-compile not found (set DLC_BUILD_DIR)")
    out = tmp_path / "tool.dlcx"
    subprocess.run([tool, model_file, "--input-shape=x=1,3,16,16",
                    "--target=vulkan", "-o", str(out)], check=True)
    artifact = dlc.compile(model_file, target="vulkan",
                           input_shapes={"x": [1, 3, 16, 16]})
    assert out.read_bytes() == artifact.data


def test_readme_example(tmp_path, monkeypatch, capsys):
    """The README's Python example, as written, on the zoo's MobileNetV2."""
    sys.path.insert(0, ROOT)
    from scripts.zoo import models as zoo_models
    manifest = zoo_models.ensure_models(names=["mobilenetv2"])
    entry = manifest["models"]["mobilenetv2"]
    os.symlink(os.path.join(manifest["dir"], entry["file"]),
               tmp_path / "mobilenetv2.onnx")
    readme = open(os.path.join(ROOT, "README.md")).read()
    start = readme.index("```python\n") + len("```python\n")
    example = readme[start:readme.index("```", start)]
    assert example.count("\n") <= 12
    monkeypatch.chdir(tmp_path)
    exec(compile(example, "README.md", "exec"), {})
    printed = capsys.readouterr().out
    difference = float(printed.split("largest difference from ONNX "
                                     "Runtime:")[1].split()[0])
    assert difference <= 1e-4
    assert "p50" in printed


def test_installed_package_runs_outside_the_build(tmp_path, model_file):
    """What `pip install .` puts in a wheel is the `python` install
    component (pyproject.toml): installed on its own, with the build tree's
    run path replaced by the installed one, the package must still load its
    libraries, compile and run."""
    build = os.environ.get("DLC_BUILD_DIR")
    if not build or not os.path.exists(os.path.join(build,
                                                    "cmake_install.cmake")):
        pytest.skip("no build tree (set DLC_BUILD_DIR)")
    prefix = tmp_path / "site"
    subprocess.run(["cmake", "--install", build, "--component", "python",
                    "--prefix", str(prefix)], check=True,
                   capture_output=True)
    installed = sorted(p.name for p in (prefix / "dlc").iterdir())
    assert "__init__.py" in installed and "_dlc.pyi" in installed
    assert "py.typed" in installed
    assert any(p.startswith("_dlc.") and p.endswith(".so") for p in installed)
    script = ("import dlc, numpy as np\n"
              "assert dlc.__file__.startswith(%r), dlc.__file__\n"
              "a = dlc.compile(%r, input_shapes={'x': [1, 3, 16, 16]})\n"
              "y = dlc.Session(a).run(x=np.ones((1, 3, 16, 16), np.float32))\n"
              "print(y['y'].shape)\n" % (str(prefix), model_file))
    env = dict(os.environ, PYTHONPATH=str(prefix))
    p = subprocess.run([sys.executable, "-c", script], env=env, cwd=tmp_path,
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "(1, 4)"


def test_one_session_shared_by_threads(model_file):
    """Runs release the GIL; threads sharing a session take turns, so each
    gets the outputs of its own inputs."""
    session = dlc.Session(dlc.compile(model_file,
                                      input_shapes={"x": [64, 3, 16, 16]}),
                          threads=1)
    rng = np.random.default_rng(9)
    xs = [rng.standard_normal((64, 3, 16, 16)).astype(np.float32)
          for _ in range(4)]
    want = [session.run({"x": x})["y"] for x in xs]
    got, errors = {}, []

    def work(i):
        try:
            for _ in range(25):
                y = session.run({"x": xs[i]})["y"]
                if not np.array_equal(y, want[i]):
                    errors.append(i)
            got[i] = True
        except Exception as e:  # reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(got) == 4
