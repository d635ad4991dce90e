# -*- Python -*-
# lit configuration for dlc's compiler tests.

import os

import lit.formats
from lit.llvm import llvm_config

config.name = "dlc"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".onnxtxt", ".test"]
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "Inputs", "CMakeLists.txt"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.dlc_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%python", config.python_executable))

llvm_config.with_system_environment(["HOME", "TMPDIR", "CUDA_HOME", "CUDA_ROOT"])
llvm_config.use_default_substitutions()

# dlc's tools first, then LLVM's FileCheck, not, count.
llvm_config.with_environment("PATH", config.dlc_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
tools = ["dlc-opt", "dlc-compile", "dlc-run"]
llvm_config.add_tool_substitutions(tools, [config.dlc_tools_dir])

if config.ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", config.ptxas))
if config.spirv_val:
    config.available_features.add("spirv-val")
