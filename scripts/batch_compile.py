"""Compiles through `dlc-compile --batch`: one process for many compiles.

Loading MLIR and LLVM costs a dlc-compile process about 30 ms, a third to
two thirds of compiling one ONNX node test; a harness that compiles
thousands of small models sends them to one `dlc-compile --batch` process
per worker thread instead (the same driver, the same options and messages;
its artifacts are byte-identical to separate runs').

    compiler = BatchCompiler("build/bin/dlc-compile")
    result = compiler.run(["model.onnx", "--target=cpu", "-o", "m.dlcx"],
                          timeout=120)
    result.returncode, result.stderr, result.died
    compiler.close()

A compile that kills the process (a crash, a sanitizer report, LLVM's
fatal errors) comes back with `died` set, the process's exit status (a
negative signal number for a signal) and what it wrote to stderr during
that compile; the next compile starts a new process. A compile that takes
longer than `timeout` seconds kills the process and comes back with
`returncode` None.
"""

import collections
import json
import os
import selectors
import subprocess
import tempfile
import threading
import time

Result = collections.namedtuple("Result", "returncode stderr died")


class BatchCompiler:
    """One `dlc-compile --batch` process, started on first use."""

    def __init__(self, dlc_compile):
        self.tool = dlc_compile
        self.proc = None

    def _start(self):
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([self.tool, "--batch"],
                                     stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE,
                                     stderr=self.log)
        self.pending = b""

    def _log_since(self, offset):
        self.log.seek(offset)
        return self.log.read().decode(errors="replace")

    def _stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        rc = self.proc.wait()
        self.proc = None
        return rc

    def run(self, args, timeout=None):
        """Compiles with `args` (dlc-compile's arguments, without the
        program name)."""
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        offset = os.fstat(self.log.fileno()).st_size
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            self.proc.stdin.write((json.dumps(list(args)) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            rc = self._stop()
            return Result(rc, self._log_since(offset), True)
        out = self.proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(out, selectors.EVENT_READ)
            while b"\n" not in self.pending:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    self._stop()
                    return Result(None, self._log_since(offset), True)
                if not sel.select(left):
                    continue
                chunk = os.read(out, 1 << 16)
                if not chunk:
                    rc = self._stop()
                    return Result(rc, self._log_since(offset), True)
                self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        reply = json.loads(line)
        return Result(reply["exit"], reply["errors"], False)

    def close(self):
        """Ends the process; returns None, or how it ended when that was
        not exit status 0 (a sanitizer's leak report comes at exit)."""
        if self.proc is None:
            return None
        offset = os.fstat(self.log.fileno()).st_size
        self.proc.stdin.close()
        try:
            rc = self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            rc = self._stop()
        self.proc = None
        if rc == 0:
            return None
        return "dlc-compile --batch exited with status %d at the end:\n%s" % (
            rc, self._log_since(offset)[-4000:])


class PerThread:
    """A BatchCompiler for each thread that asks (a thread pool's
    workers), all closed by close()."""

    def __init__(self, dlc_compile):
        self.tool = dlc_compile
        self.local = threading.local()
        self.all = []
        self.lock = threading.Lock()

    def run(self, args, timeout=None):
        compiler = getattr(self.local, "compiler", None)
        if compiler is None:
            compiler = self.local.compiler = BatchCompiler(self.tool)
            with self.lock:
                self.all.append(compiler)
        return compiler.run(args, timeout)

    def close(self):
        """Ends every process; returns how those that failed at exit
        ended."""
        return [p for p in (c.close() for c in self.all) if p]
