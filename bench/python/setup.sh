#!/usr/bin/env bash
# The bench's own venv (bench/python/.venv, git-ignored): the peers at the versions pinned in
# requirements-peers.txt (ultimate-sitemap-parser, advertools with pandas, lxml: a copy of the
# team's shared/bench lock, so a clone is all it needs) and this repository's
# package, built in release mode by pip as a user would (`pip install ./crates/mapwright-py`:
# pyproject.toml's `wheel` profile, stripped, compiled in a temporary folder the build removes,
# so every setup compiles anew: about 7 minutes on 2 cores).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
[ -x "$HERE/.venv/bin/python" ] || python3 -m venv "$HERE/.venv"
"$HERE/.venv/bin/python" -m pip install -q --disable-pip-version-check -r "$HERE/requirements-peers.txt"
"$HERE/.venv/bin/python" -m pip install -q --disable-pip-version-check "$REPO/crates/mapwright-py"
