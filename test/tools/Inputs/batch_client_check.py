"""Checks scripts/batch_compile.py against a stand-in for `dlc-compile
--batch` that answers, crashes or hangs as its input line asks, and against
the real tool (argv[1])."""

import os
import stat
import sys
import tempfile

from scripts.batch_compile import BatchCompiler, PerThread

STAND_IN = """#!/bin/sh
while read -r line; do
  case "$line" in
    *crash*) echo "Stack dump: stand-in" >&2; kill -SEGV $$ ;;
    *hang*) sleep 60 ;;
    *) echo '{"errors": "", "exit": 0}' ;;
  esac
done
"""

work = tempfile.mkdtemp()
tool = os.path.join(work, "dlc-compile")
with open(tool, "w") as f:
    f.write(STAND_IN)
os.chmod(tool, stat.S_IRWXU)

c = BatchCompiler(tool)
print("ok", c.run(["a"]))
first = c.proc.pid
r = c.run(["crash"])
print("crash", r.returncode, r.died, r.stderr.strip())
r = c.run(["b"])
print("after crash", r, "new process" if c.proc.pid != first else "same")
r = c.run(["hang"], timeout=1)
print("hang", r.returncode, r.died)
print("after hang", c.run(["c"]))
print("close", c.close())

real = PerThread(sys.argv[1])
r = real.run([sys.argv[2], "-o", os.path.join(work, "a.dlcx")])
print("real", r)
r = real.run([sys.argv[2], "--target=tpu"])
print("real error", r.returncode, r.died, r.stderr.strip())
print("close", real.close())

# A process that fails at exit (a leak report) says so when closed.
with open(tool, "w") as f:
    f.write("#!/bin/sh\nread -r line\necho '{\"errors\": \"\", \"exit\": 0}'\n"
            "read -r line\necho 'LeakSanitizer: stand-in' >&2\nexit 23\n")
c = BatchCompiler(tool)
c.run(["a"])
print("leaky", c.close().replace("\n", " | "))
