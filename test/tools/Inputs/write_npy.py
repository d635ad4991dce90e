"""Writes a NumPy .npy file without NumPy (lit's Python may lack it):
write_npy.py PATH DTYPE D0,D1,... [SEED], DTYPE one of f4, f8, i8; the
values are a fixed pseudo-random pattern in [-2, 2) chosen by SEED."""

import os
import struct
import sys

path, dtype, dims = sys.argv[1], sys.argv[2], sys.argv[3]
seed = int(sys.argv[4]) if len(sys.argv) > 4 else 0
shape = [int(d) for d in dims.split(",")]
count = 1
for d in shape:
    count *= d
fmt = {"f4": "f", "f8": "d", "i8": "q"}[dtype]
state = seed * 7919 + 1
values = []
for _ in range(count):
    state = (state * 1103515245 + 12345) % (1 << 31)
    v = (state % 4096) / 1024.0 - 2.0
    values.append(int(v) if dtype == "i8" else v)
shape_text = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
header = "{'descr': '<%s', 'fortran_order': False, 'shape': (%s), }" % (
    dtype, shape_text)
header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
    f.write(header.encode("latin1"))
    f.write(struct.pack("<%d%s" % (count, fmt), *values))
