# Two entry points for a newcomer:  `make lab`  and  `make test`.
# Both are idempotent: the first run sets everything up, later runs reuse it.

VENV        ?= .venv
PYTHON      ?= python3
PY          := $(VENV)/bin/python
# The CPU build of PyTorch is installed first, so the project's `torch>=2.3`
# is already satisfied and pip never pulls a multi-GB CUDA build. On a GPU
# machine, install the CUDA build you want into .venv first (see README).
TORCH_SPEC  ?= torch==2.13.0
STAMP       := $(VENV)/.installed

.PHONY: lab test setup system-deps bench grade-demo site clean help

help:
	@echo "make lab    - set up .venv and open JupyterLab on chapters/"
	@echo "make lab LANG=zh - the same, on the Chinese edition (中文版) in the Chinese interface"
	@echo "make test   - set up .venv and run the whole test suite"
	@echo "make bench  - print engine-vs-PyTorch ratios (bench/)"
	@echo "make grade-demo - grade every lab's bundled sample submissions, print the table"
	@echo "make site   - export the executed chapters as offline HTML to build/site/ (中文版: build/site/zh/)"
	@echo "make clean  - remove build outputs (keeps .venv)"

setup: $(STAMP) system-deps

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install --quiet "$(TORCH_SPEC)"
	$(PY) -m pip install --quiet -e ".[dev]"
	@touch $@

system-deps:
	@bash tools/system-deps.sh

# `make lab LANG=zh` opens the Chinese edition (chapters/zh/, made by tools/i18n.py) in
# JupyterLab's Chinese interface: chapters/zh/jupyterlab/overrides.json makes zh_CN the
# default interface language (a learner's own language setting still wins). The server
# is rooted at the repository so the Chinese notebooks' links to ../ and ../../labs/ open.
# LANG=zh is not a locale, so it is kept out of the commands' environment; COURSE_LANG=zh
# is exported instead, so the figures and widgets (vizkit.language) speak Chinese too.
ifeq ($(LANG),zh)
unexport LANG
export COURSE_LANG := zh
LAB_ARGS    := --ServerApp.root_dir=. --LabApp.app_settings_dir=$(CURDIR)/chapters/zh/jupyterlab \
               --LabApp.default_url=/lab/tree/chapters/zh/00_start_here.ipynb
else
LAB_ARGS    := --notebook-dir=chapters
endif

# As root (a container, a cloud box) Jupyter refuses to start without --allow-root.
lab: setup
	$(VENV)/bin/jupyter lab $(LAB_ARGS) $$([ "$$(id -u)" = 0 ] && echo --allow-root)

test: setup
	$(PY) -m pytest

bench: setup
	@for f in bench/*_bench.py; do echo "== $$f"; $(PY) $$f || exit 1; done

site: setup
	$(PY) tools/build_site.py

# Grades labs/<lab>/samples/*.ipynb in the sandbox into build/grades/<lab>/demo.sqlite3.
grade-demo: setup
	@for dir in labs/*/; do lab=$$(basename $$dir); \
	  test -f $$dir/spec.py -a -d $$dir/samples || continue; \
	  echo "== $$lab"; \
	  $(PY) -m autograder grade $$lab $$dir/samples -j 2 --force --table --no-progress \
	    --gradebook build/grades/$$lab/demo.sqlite3 || exit 1; done

clean:
	rm -rf build .pytest_cache .hypothesis
	find . -name __pycache__ -not -path "./$(VENV)/*" -prune -exec rm -rf {} +
