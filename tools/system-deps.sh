#!/usr/bin/env bash
# System packages the course needs beyond Python: Graphviz's `dot` (graph
# drawings). Installed with apt when running as root and missing; otherwise
# this prints how to get it. Never fails the setup: the notebooks still run
# without `dot` and show the DOT text with the same hint.
set -u
if command -v dot >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing Graphviz (dot) with apt-get ..."
    apt-get update -qq && apt-get install -y -qq graphviz >/dev/null && exit 0
    echo "apt-get could not install graphviz." >&2
fi
cat >&2 <<'MSG'
Graphviz's `dot` binary is missing, so graph drawings will show as DOT text.
Install it with one of:
    sudo apt-get install graphviz        (Debian/Ubuntu)
    brew install graphviz                (macOS)
    conda install -c conda-forge graphviz  (or use environment.yml)
MSG
exit 0
