"""Re-executes a zoo script with the dlc Python environment when the current
interpreter lacks numpy/onnx/onnxruntime, so `python3 -m scripts.zoo.check ...`
works without activating the venv that scripts/setup.sh creates ($DLC_VENV,
default ~/.cache/dlc/venv)."""

import os
import sys


def main_argv():
    """The command line that runs this process's main module again:
    `-m scripts.zoo.check ARGS` when it was started with -m."""
    spec = getattr(sys.modules["__main__"], "__spec__", None)
    if spec is not None and spec.name:
        return ["-m", spec.name] + sys.argv[1:]
    return list(sys.argv)


def ensure():
    try:
        import numpy  # noqa: F401
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
        return
    except ImportError as e:
        missing = e.name
    venv = os.environ.get("DLC_VENV", os.path.expanduser("~/.cache/dlc/venv"))
    python = os.path.join(venv, "bin", "python")
    if os.path.exists(python) and not os.environ.get("DLC_ZOO_REEXEC"):
        os.environ["DLC_ZOO_REEXEC"] = "1"
        os.execv(python, [python] + main_argv())
    sys.exit("error: this Python (%s) lacks %s; run scripts/setup.sh, which "
             "creates %s with scripts/requirements.txt" % (
                 sys.executable, missing, venv))
