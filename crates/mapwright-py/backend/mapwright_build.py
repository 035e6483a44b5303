"""The package's PEP 517 build backend: maturin's, compiling outside the source tree.

pip builds a local folder in place (pip >= 21.3) and maturin compiles into the cargo target
folder of the workspace, so `pip install ./crates/mapwright-py` used to leave some 700 MB in
the clone's `target/wheel`. Here a wheel (and an sdist, and the metadata) is built with
`CARGO_TARGET_DIR` in a temporary folder, removed once the wheel is copied out, unless the
caller set `CARGO_TARGET_DIR` itself (test.sh and the release workflow do, to reuse a build).
An editable install (`pip install -e`) is a developer's build and keeps maturin's own target
folder. Everything else is maturin's backend as it is (pyproject.toml's `[tool.maturin]`).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator, Mapping
from typing import Any

import maturin
from maturin import (  # noqa: F401  (the hooks used unchanged)
    build_editable,
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
)


@contextlib.contextmanager
def outside_the_tree() -> Iterator[None]:
    """`CARGO_TARGET_DIR` set to a temporary folder for the block, removed after it; nothing
    is changed when the caller chose a target folder."""
    if os.environ.get("CARGO_TARGET_DIR"):
        yield
        return
    with tempfile.TemporaryDirectory(prefix="mapwright-build-") as target:
        os.environ["CARGO_TARGET_DIR"] = target
        try:
            yield
        finally:
            del os.environ["CARGO_TARGET_DIR"]


def build_wheel(
    wheel_directory: str, config_settings: Mapping[str, Any] | None = None, metadata_directory: str | None = None
) -> str:
    """maturin's wheel, compiled in a temporary target folder (maturin copies the wheel to
    `wheel_directory` before the folder goes)."""
    with outside_the_tree():
        return str(maturin.build_wheel(wheel_directory, config_settings, metadata_directory))


def build_sdist(sdist_directory: str, config_settings: Mapping[str, Any] | None = None) -> str:
    """maturin's sdist (the workspace crates the package needs and Cargo.lock)."""
    with outside_the_tree():
        return str(maturin.build_sdist(sdist_directory, config_settings))


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: Mapping[str, Any] | None = None) -> str:
    """maturin's metadata (cargo metadata only, but kept out of the tree all the same)."""
    with outside_the_tree():
        return str(maturin.prepare_metadata_for_build_wheel(metadata_directory, config_settings))
