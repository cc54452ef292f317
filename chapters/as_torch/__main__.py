"""``python -m chapters.as_torch [--compare [--out DIR]] SCRIPT [ARGS ...]``.

Without ``--compare``: run SCRIPT, unmodified, with its ``import torch``
reaching the engines (:mod:`.runner`). With ``--compare``: run it under real
torch and under the engines in two subprocesses, and report where they first
diverge (:mod:`.compare`).
"""

import argparse

parser = argparse.ArgumentParser(
    prog="python -m chapters.as_torch",
    description="Run an unmodified torch script on the course's engines.")
parser.add_argument("--compare", action="store_true",
                    help="run under real torch and the engines; report the first divergence")
parser.add_argument("--out", default="as_torch_compare",
                    help="with --compare: folder for the records and the loss-curve figure")
parser.add_argument("script", help="the torch program to run")
parser.add_argument("args", nargs=argparse.REMAINDER, help="the program's own arguments")
options = parser.parse_args()

if options.compare:
    from .compare import main as compare_main

    raise SystemExit(compare_main(options.script, options.args, options.out))
from .runner import run_script  # noqa: E402

run_script(options.script, options.args)
