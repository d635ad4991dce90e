"""dlc from Python: compile ONNX models and run the artifacts.

    import dlc
    artifact = dlc.compile("model.onnx", target="cpu",
                           input_shapes={"input": [1, 3, 224, 224]})
    session = dlc.Session(artifact, threads=1)
    outputs = session.run({"input": image})      # {name: numpy array}
    print(session.bench(100))                    # p50/p90/p99 in ms

`compile` is dlc-compile: every option of the command-line tool is a
keyword argument (`--calibration-method=entropy` is
`calibration_method="entropy"`), checked by the same code, and its errors
are raised as `CompileError` carrying the compiler's messages. `Session`
runs an artifact through dlc's C runtime on the CPU, Vulkan or CUDA
driver the artifact was compiled for.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence, Union

import numpy as np

from . import _dlc

__all__ = ["Artifact", "BenchResult", "CompileError", "Session",
           "TensorInfo", "compile"]

PathLike = Union[str, "os.PathLike[str]"]


class CompileError(RuntimeError):
    """dlc-compile refused the model or its options. `diagnostics` holds
    the compiler's messages (each names the node, op or option at fault),
    `status` its exit status."""

    def __init__(self, diagnostics: str, status: int):
        super().__init__(diagnostics.strip() or
                         "dlc-compile failed with status %d" % status)
        self.diagnostics = diagnostics
        self.status = status


class Artifact:
    """A compiled model: the bytes of a .dlcx file."""

    def __init__(self, data: bytes, target: str = ""):
        self.data = bytes(data)
        self.target = target

    @classmethod
    def load(cls, path: PathLike) -> "Artifact":
        with open(path, "rb") as f:
            return cls(f.read())

    def save(self, path: PathLike) -> None:
        with open(path, "wb") as f:
            f.write(self.data)

    def __bytes__(self) -> bytes:
        return self.data

    def __len__(self) -> int:
        return len(self.data)

    def __repr__(self) -> str:
        return "<dlc.Artifact %s%d bytes>" % (
            self.target + ", " if self.target else "", len(self.data))


# --emit values and what compile() returns for them.
_EMIT_SUFFIX = {"artifact": ".dlcx", "mlir": ".mlir", "dispatches": ".mlir",
                "ptx": ".ptx", "spirv": ".spv", "obj": ".o",
                "onnx": ".onnx", "qdq-onnx": ".onnx"}


def _flag(name: str, value: Any) -> list[str]:
    flag = "--" + name.replace("_", "-")
    if value is None or value is False:
        return []
    if value is True:
        return [flag]
    if isinstance(value, (list, tuple)):
        return [a for v in value for a in _flag(name, v)]
    return ["%s=%s" % (flag, value)]


def _write_samples(directory: str, samples: Iterable[Mapping[str, Any]]):
    """--calibration-data's layout: one folder per sample, one
    <input>.npy per graph input."""
    count = 0
    for i, sample in enumerate(samples):
        folder = os.path.join(directory, "%06d" % i)
        os.makedirs(folder)
        for name, value in sample.items():
            np.save(os.path.join(folder, name + ".npy"), np.asarray(value))
        count += 1
    if count == 0:
        raise ValueError("calibration_data: no samples")


def compile(model: Union[PathLike, Any], target: str = "cpu", *,
            input_shapes: Mapping[str, Sequence[int]] | None = None,
            bind_inputs: Mapping[str, Any] | None = None,
            calibration_data: Union[PathLike, Iterable[Mapping[str, Any]],
                                    None] = None,
            emit: str = "artifact",
            **options: Any) -> Union[Artifact, bytes]:
    """Compiles `model` (a path to an .onnx/.onnxtxt file, or an
    onnx.ModelProto holding its weights) for `target` (as dlc-compile's
    --target: "cpu", "cpu:aarch64-linux-gnu", "vulkan:+fp16",
    "cuda:sm_87", ...).

    input_shapes: {input name: dims} pins dynamic dimensions
    (--input-shape). bind_inputs: {input name: array or .pb path} makes an
    input a constant (--bind-input). calibration_data: a folder in
    --calibration-data's layout, or an iterable of {input name: array}
    samples. Every other keyword is the dlc-compile option of that name
    (quantize="int8", calibration_method="entropy", weights="int4",
    precision="fp16", keep_float=..., quant_report="r.json", cpu="znver4",
    stats=True, ...).

    Returns an Artifact for emit="artifact", else the bytes dlc-compile
    writes for that --emit. Raises CompileError with the compiler's
    messages when it refuses."""
    if emit not in _EMIT_SUFFIX:
        raise ValueError("emit=%r: one of %s" % (emit,
                                                 ", ".join(_EMIT_SUFFIX)))
    with tempfile.TemporaryDirectory(prefix="dlc-") as work:
        if isinstance(model, (str, os.PathLike)):
            path = os.fspath(model)
        elif hasattr(model, "SerializeToString"):
            path = os.path.join(work, "model.onnx")
            with open(path, "wb") as f:
                f.write(model.SerializeToString())
        else:
            raise TypeError("model: a path or an onnx.ModelProto, not %s"
                            % type(model).__name__)
        args = [path, "--target=" + target, "--emit=" + emit]
        for name, dims in (input_shapes or {}).items():
            args.append("--input-shape=%s=%s" % (
                name, ",".join(str(int(d)) for d in dims)))
        for name, value in (bind_inputs or {}).items():
            if not isinstance(value, (str, os.PathLike)):
                from onnx import numpy_helper
                file = os.path.join(work, "bound-%d.pb" % len(args))
                with open(file, "wb") as f:
                    f.write(numpy_helper.from_array(
                        np.asarray(value), name).SerializeToString())
                value = file
            args.append("--bind-input=%s=%s" % (name, os.fspath(value)))
        if calibration_data is not None:
            if not isinstance(calibration_data, (str, os.PathLike)):
                folder = os.path.join(work, "calibration")
                _write_samples(folder, calibration_data)
                calibration_data = folder
            args.append("--calibration-data=" + os.fspath(calibration_data))
        for name, value in options.items():
            if name in ("o", "output", "help", "version"):
                raise TypeError("compile() does not take %r" % name)
            args += _flag(name, value)
        out = os.path.join(work, "out" + _EMIT_SUFFIX[emit])
        status, errors = _dlc.compile_command(args + ["-o", out])
        if status != 0:
            raise CompileError(errors, status)
        with open(out, "rb") as f:
            data = f.read()
    return Artifact(data, target) if emit == "artifact" else data


def _numpy_dtypes() -> dict[int, Any]:
    """The artifact's element types as NumPy dtypes; bfloat16 and the 8-
    and 4-bit floats through ml_dtypes when it is installed."""
    table = {}
    try:
        import ml_dtypes
    except ImportError:
        ml_dtypes = None
    for number, name, bits, kind in _dlc.dtype_table():
        if bits == 4:
            continue  # packed two per byte in inputs and outputs
        try:
            table[number] = np.dtype(name)
        except TypeError:
            if ml_dtypes is not None and hasattr(ml_dtypes, name):
                table[number] = np.dtype(getattr(ml_dtypes, name))
    return table


_DTYPES = _numpy_dtypes()
_DTYPE_NAMES = {number: name for number, name, _, _ in _dlc.dtype_table()}


@dataclass(frozen=True)
class TensorInfo:
    """An input or output of a compiled model."""
    name: str
    dtype: np.dtype
    shape: tuple
    nbytes: int
    scale: float = 0.0     # quantized inputs/outputs; 0: not quantized
    zero_point: int = 0


@dataclass(frozen=True)
class BenchResult:
    """Run times of Session.bench, in milliseconds."""
    p50: float
    p90: float
    p99: float
    mean: float
    times: tuple

    def __str__(self) -> str:
        return "p50 %.3f ms  p90 %.3f ms  p99 %.3f ms  (%d runs)" % (
            self.p50, self.p90, self.p99, len(self.times))


def _info(row) -> TensorInfo:
    name, number, dims, nbytes, scale, zero_point = row
    dtype = _DTYPES.get(number)
    if dtype is None:
        raise NotImplementedError(
            "dlc.Session: tensor '%s' is %s, which the Python API does not "
            "exchange yet (dlc-run reads and writes it as .npy bits)"
            % (name, _DTYPE_NAMES.get(number, "dtype %d" % number)))
    return TensorInfo(name, dtype, tuple(dims), nbytes, scale, zero_point)


class Session:
    """An artifact loaded by dlc's runtime, ready to run.

    artifact: an Artifact, the bytes of one, or the path of a .dlcx file.
    threads: CPU worker threads including the caller (None: the runtime's
    choice, one per core; 1: everything on the calling thread). device:
    which GPU of the driver's list. profile: record per-kernel times
    (Session.timings())."""

    def __init__(self, artifact: Union[Artifact, bytes, PathLike], *,
                 threads: int | None = None, device: int = 0,
                 profile: bool = False):
        if isinstance(artifact, Artifact):
            data = artifact.data
        elif isinstance(artifact, (bytes, bytearray, memoryview)):
            data = bytes(artifact)
        else:
            with open(artifact, "rb") as f:
                data = f.read()
        if threads is not None and threads < 1:
            raise ValueError("threads must be at least 1 (or None)")
        self._native = _dlc.Session(data, threads or 0, device, profile)
        self.inputs = [_info(r) for r in self._native.inputs()]
        self.outputs = [_info(r) for r in self._native.outputs()]
        self.driver = self._native.driver()
        self.kernel_count = self._native.kernel_count()
        self.arena_size = self._native.arena_size()

    def _feeds(self, feeds: Mapping[str, Any] | None) -> list[np.ndarray]:
        feeds = dict(feeds or {})
        arrays = []
        for info in self.inputs:
            if info.name not in feeds:
                raise KeyError("dlc.Session.run: missing input '%s' (%s %s)"
                               % (info.name, info.dtype, list(info.shape)))
            value = feeds.pop(info.name)
            if isinstance(value, np.ndarray):
                if value.dtype != info.dtype:
                    raise TypeError(
                        "dlc.Session.run: input '%s' is %s, got %s"
                        % (info.name, info.dtype, value.dtype))
            else:
                value = np.asarray(value, dtype=info.dtype)
            if value.shape != info.shape:
                raise ValueError(
                    "dlc.Session.run: input '%s' has shape %s, got %s"
                    % (info.name, list(info.shape), list(value.shape)))
            arrays.append(np.ascontiguousarray(value))
        if feeds:
            raise KeyError("dlc.Session.run: the model has no input named "
                           "%s (its inputs: %s)" % (
                               ", ".join("'%s'" % n for n in feeds),
                               ", ".join(i.name for i in self.inputs)))
        return arrays

    def run(self, feeds: Mapping[str, Any] | None = None,
            **named: Any) -> dict[str, np.ndarray]:
        """Runs the model once on `feeds` ({input name: array}; or as
        keywords) and returns {output name: array}. Inputs must have the
        model's dtype and shape (lists and scalars are converted); outputs
        are new arrays the runtime writes into directly."""
        arrays = self._feeds({**(feeds or {}), **named})
        outputs = [np.empty(o.shape, o.dtype) for o in self.outputs]
        self._native.run(arrays, outputs)
        return {o.name: a for o, a in zip(self.outputs, outputs)}

    def bench(self, n: int = 100, feeds: Mapping[str, Any] | None = None, *,
              warmup: int = 10) -> BenchResult:
        """Times `n` runs after `warmup` untimed ones. Without `feeds`,
        float inputs are drawn from a standard normal distribution (seed
        0) and other inputs are zeros."""
        if n < 1:
            raise ValueError("bench: n must be at least 1")
        if feeds is None:
            rng = np.random.default_rng(0)
            feeds = {i.name: (rng.standard_normal(i.shape).astype(i.dtype)
                              if i.dtype.kind == "f"
                              else np.zeros(i.shape, i.dtype))
                     for i in self.inputs}
        times = np.array(self._native.bench(self._feeds(feeds), n, warmup),
                         dtype=np.float64) / 1e6
        p50, p90, p99 = np.percentile(times, [50, 90, 99])
        return BenchResult(float(p50), float(p90), float(p99),
                           float(times.mean()), tuple(times.tolist()))

    def timings(self) -> list[tuple[str, int, int]]:
        """The last run's launches as (kernel name, start ns, duration ns),
        with profile=True."""
        return self._native.timings()

    def __repr__(self) -> str:
        return "<dlc.Session %s, %d kernels, inputs %s>" % (
            self.driver, self.kernel_count,
            ", ".join("%s %s%s" % (i.name, i.dtype, list(i.shape))
                      for i in self.inputs))
