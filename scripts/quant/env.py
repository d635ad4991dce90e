"""Makes a scripts/quant tool run with the dlc Python environment.

The tools need numpy, onnx, onnxruntime, OpenCV (opencv-python-headless, for
the exact resizes of the models' own preprocessing) and Pillow (to draw the
synthetic documents), all pinned in scripts/requirements.txt. Started with an
interpreter that lacks one of them, a tool re-executes itself with the venv
that scripts/setup.sh creates ($DLC_VENV, default ~/.cache/dlc/venv)."""

import importlib
import os
import sys

from scripts.zoo.zoo_env import main_argv

NEEDED = ("numpy", "onnx", "onnxruntime", "cv2", "PIL")


def ensure(modules=NEEDED):
    """Returns when `modules` import; re-executes with the venv otherwise."""
    missing = None
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError:
            missing = module
            break
    if missing is None:
        return
    venv = os.environ.get("DLC_VENV", os.path.expanduser("~/.cache/dlc/venv"))
    python = os.path.join(venv, "bin", "python")
    if (os.path.exists(python) and not os.environ.get("DLC_QUANT_REEXEC")
            and os.path.realpath(python) != os.path.realpath(sys.executable)):
        os.environ["DLC_QUANT_REEXEC"] = "1"
        os.execv(python, [python] + main_argv())
    sys.exit("error: this Python (%s) lacks the module %s; run "
             "scripts/setup.sh, which installs scripts/requirements.txt "
             "into %s" % (sys.executable, missing, venv))
