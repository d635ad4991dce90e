"""Re-executes a zoo script with the dlc Python environment when the current
interpreter lacks numpy/onnx/onnxruntime, so `scripts/zoo/check.py ...` works
without activating the venv that scripts/setup.sh creates ($DLC_VENV,
default ~/.cache/dlc/venv)."""

import os
import sys


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
        os.execv(python, [python] + sys.argv)
    sys.exit("error: this Python (%s) lacks %s; run scripts/setup.sh, which "
             "creates %s with scripts/requirements.txt" % (
                 sys.executable, missing, venv))
