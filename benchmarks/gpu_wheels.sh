#!/usr/bin/env bash
# Before benchmarks/gpu.sh on a GPU machine that has torch but cannot reach a package index: fetch here, into
# git-ignored folders that travel with the working tree, what that machine's Python lacks.
#   .whl/      ours: gymnasium 1.x with Box2D (LunarLander), tyro and their pure-Python needs
#   .whl_ref/  the reference AMAGO 3.3's: gymnasium 0.29.1, gym 0.26.2 (built here: it has no wheel), gin-config,
#              termcolor, einops (its wandb import is stood in for by compare_reference.py, which never logs)
#   .ref/      the reference's source (amago/), from REF_SRC (default /root/amago-src, at commit 2d85600)
# gpu.sh installs .whl into /tmp/site (ours) and .whl_ref into /tmp/site_ref (the reference) and points each side's
# PYTHONPATH at its own. PYVER (default 3.12) is the GPU machine's Python; the wheels are manylinux x86-64.
# Usage: bash benchmarks/gpu_wheels.sh   (about 5 MB in all; run it from any folder)
set -euo pipefail
cd "$(dirname "$0")/.."
PYVER=${PYVER:-3.12}
REF_SRC=${REF_SRC:-/root/amago-src}
platforms=()
for p in manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_24_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux1_x86_64; do
  platforms+=(--platform "$p")
done
get() {  # folder, then name==version ...
  local dir=$1
  shift
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version "$PYVER" --implementation cp \
    "${platforms[@]}" -d "$dir" "$@"
}
rm -rf .whl .whl_ref .ref
mkdir -p .whl .whl_ref .ref
get .whl gymnasium==1.3.0 box2d==2.3.10 farama-notifications==0.0.6 tyro==1.0.17 docstring-parser==0.18.0 \
  typeguard==4.6.1
get .whl_ref gymnasium==0.29.1 box2d==2.3.10 farama-notifications==0.0.6 gin-config==0.5.0 termcolor==3.3.0
python3 -m pip wheel -q --no-deps -w .whl_ref gym==0.26.2  # pure Python, sdist only on PyPI
if [[ ! -d $REF_SRC/amago ]]; then
  echo "REF_SRC=$REF_SRC has no amago/ package: clone https://github.com/UT-Austin-RPL/amago at 2d85600 there" >&2
  exit 2
fi
cp -r "$REF_SRC/amago" .ref/amago
find .ref -name __pycache__ -prune -exec rm -rf {} +
du -sh .whl .whl_ref .ref
