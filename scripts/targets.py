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


def split_no_cubin(spec, targets, parser):
    """--no-cubin's list (cuda targets compiled with --cubin=false: PTX
    checked by ptxas -O0, not assembled), each one of `targets`; anything
    else is a usage error of `parser`."""
    no_cubin = split_targets(spec)
    stray = [t for t in no_cubin if not t.startswith("cuda:") or
             t not in targets]
    if stray:
        parser.error("--no-cubin: not cuda targets of --targets: %s"
                     % ", ".join(stray))
    return no_cubin
