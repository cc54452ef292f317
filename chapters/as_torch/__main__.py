"""``python -m chapters.as_torch SCRIPT [ARGS ...]``: run SCRIPT, unmodified,
with its ``import torch`` reaching the engines (:mod:`.runner`).

``python -m chapters.as_torch --compare [--figure F.html] SCRIPT [ARGS ...]`` runs it
under real torch and on the engines and reports the first module call whose output
differs, and both loss curves (:mod:`.compare`).
"""

import argparse
import os
from pathlib import Path

parser = argparse.ArgumentParser(
    prog="python -m chapters.as_torch",
    description="Run an unmodified torch script on the course's engines.")
parser.add_argument("--compare", action="store_true",
                    help="run the script under torch and on the engines; report where they part")
parser.add_argument("--figure", help="with --compare: write the two loss curves here (HTML; "
                    "default: SCRIPT_compare.html next to the script)")
parser.add_argument("--rtol", type=float, default=1e-3, help="with --compare (default 1e-3)")
parser.add_argument("--atol", type=float, default=1e-4, help="with --compare (default 1e-4)")
parser.add_argument("script", help="the torch program to run")
parser.add_argument("args", nargs=argparse.REMAINDER, help="the program's own arguments")
options = parser.parse_args()

if options.compare:
    if "RANK" in os.environ:
        parser.error("--compare runs one process per library; under torchrun, run the "
                     "script without --compare, once with torch and once on the engines")
    from .compare import compare  # noqa: E402

    figure = options.figure or str(Path(options.script).with_name(
        Path(options.script).stem + "_compare.html"))
    result = compare(options.script, options.args, options.rtol, options.atol, figure)
    print(result.report())
    print(f"loss curves: {figure}")
    raise SystemExit(1 if result.first is not None else 0)
from .runner import run_script  # noqa: E402

run_script(options.script, options.args)
