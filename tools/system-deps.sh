#!/usr/bin/env bash
# System packages the course needs beyond Python: Graphviz's `dot` (graph
# drawings) and a C compiler (chapter 1's fused kernels, built through cffi).
# Installed with apt when running as root and missing; otherwise this prints how
# to get them. Never fails the setup: without `dot` the notebooks show the DOT
# text with the same hint, and without a compiler the fused kernels run as numpy.
set -u
packages=()
command -v dot >/dev/null 2>&1 || packages+=(graphviz)
command -v "${CC:-cc}" >/dev/null 2>&1 || packages+=(gcc libc6-dev)
[ ${#packages[@]} = 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing ${packages[*]} with apt-get ..."
    apt-get update -qq && apt-get install -y -qq "${packages[@]}" >/dev/null && exit 0
    echo "apt-get could not install ${packages[*]}." >&2
fi
cat >&2 <<MSG
Missing system packages: ${packages[*]}.
Without Graphviz's \`dot\`, graph drawings show as DOT text; without a C compiler,
chapter 1's fused kernels run as numpy code. Install them with one of:
    sudo apt-get install ${packages[*]}                        (Debian/Ubuntu)
    brew install graphviz; xcode-select --install    (macOS)
    conda env create -f environment.yml              (brings both)
MSG
exit 0
