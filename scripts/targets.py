"""Target lists on the command line of the test and benchmark scripts.

A target spec may carry comma-separated features of its own
(`cpu:x86_64-linux-gnu:+avx2,+fma`, `vulkan:+fp16,+int8`), so a list of
them splits only at the commas that start another target.
"""

import re

_NEXT_TARGET = re.compile(r",(?=(?:cpu|vulkan|cuda)(?::|,|$))")


def split_targets(spec):
    """`cpu,cpu:x86_64-linux-gnu:+avx2,+fma,vulkan:+fp16,+int8` ->
    ['cpu', 'cpu:x86_64-linux-gnu:+avx2,+fma', 'vulkan:+fp16,+int8']."""
    return [t for t in _NEXT_TARGET.split(spec) if t]
