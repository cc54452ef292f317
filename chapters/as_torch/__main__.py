"""``python -m chapters.as_torch SCRIPT [ARGS ...]``: run SCRIPT, unmodified,
with its ``import torch`` reaching the engines (:mod:`.runner`).

``--compare`` (run under both and report the first divergent op) is not
built yet: the flag is refused with what to do meanwhile.
"""

import argparse

parser = argparse.ArgumentParser(
    prog="python -m chapters.as_torch",
    description="Run an unmodified torch script on the course's engines.")
parser.add_argument("--compare", action="store_true",
                    help="not built yet (refused): compare a run under torch with the engines")
parser.add_argument("script", help="the torch program to run")
parser.add_argument("args", nargs=argparse.REMAINDER, help="the program's own arguments")
options = parser.parse_args()

if options.compare:
    parser.error("--compare is not implemented yet; meanwhile run the script twice, "
                 f"`python {options.script}` (real torch) and `python -m chapters.as_torch "
                 f"{options.script}` (the engines), and compare what each prints")
from .runner import run_script  # noqa: E402

run_script(options.script, options.args)
