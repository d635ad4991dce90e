"""Writes a bundle of one compiled Relu model (argv[1]) into argv[2] with
scripts/bundle.py: a case whose reference is right and one whose reference
is off by one in one element, with .npy files written by hand."""
import os
import struct
import sys

from scripts import bundle


def npy(path, values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 8), }"
    header += " " * (63 - len(header) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode() + struct.pack("<32f", *values))


artifact, out = sys.argv[1], sys.argv[2]
tmp = out + ".files"
os.makedirs(tmp, exist_ok=True)
x = [i - 16.0 for i in range(32)]
npy(os.path.join(tmp, "x.npy"), x)
npy(os.path.join(tmp, "y.npy"), [max(v, 0.0) for v in x])
npy(os.path.join(tmp, "bad.npy"), [max(v, 0.0) + (i == 20) for i, v in
                                   enumerate(x)])
b = bundle.Bundle(out)
for name, ref in (("good", "y.npy"), ("bad", "bad.npy")):
    b.add("demo", name, "cpu", artifact, [("X", os.path.join(tmp, "x.npy"))],
          [("Y", os.path.join(tmp, ref))], ["--atol", "0"], bench=True)
print("cases:", b.write())
