"""The wheel and the sdist test.sh built (as the release workflow builds them for PyPI, in the dev
profile): what PyPI and pip check, checked here first; the wheel installed into a fresh venv
without Rust on PATH runs the package's examples; the build backend compiles outside the tree.

test.sh sets MAPWRIGHT_WHEELS (the folder of the wheel and the sdist it built) and
MAPWRIGHT_WHEELHOUSE (the pinned requirements, downloaded once): run these tests through it,
or set both by hand after `maturin build --zig --compatibility manylinux_2_17 --out DIR` and
`maturin sdist --out DIR`.
"""

from __future__ import annotations

import email.parser
import importlib.util
import io
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile

import pytest
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile
from elftools.elf.gnuversions import GNUVerNeedSection
from packaging.tags import Tag
from packaging.utils import parse_sdist_filename, parse_wheel_filename

from conftest import REPO

PACKAGE = REPO / "crates/mapwright-py"
# The libraries a manylinux wheel may need from the system (PEP 599's list for x86_64).
MANYLINUX_LIBS = {
    "libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1", "libgcc_s.so.1",
    "ld-linux-x86-64.so.2", "libutil.so.1", "libnsl.so.1", "libcrypt.so.1", "libstdc++.so.6",
    "libX11.so.6", "libXext.so.6", "libXrender.so.1", "libICE.so.6", "libSM.so.6",
    "libGL.so.1", "libgobject-2.0.so.0", "libgthread-2.0.so.0", "libglib-2.0.so.0",
}


def built(kind: str) -> pathlib.Path:
    """The one wheel (`kind` "whl") or sdist ("tar.gz") of $MAPWRIGHT_WHEELS."""
    folder = os.environ.get("MAPWRIGHT_WHEELS")
    assert folder, "MAPWRIGHT_WHEELS is not set: test.sh builds the wheel and the sdist and sets it"
    found = sorted(pathlib.Path(folder).glob(f"mapwright_sitemaps-*.{kind}"))
    assert len(found) == 1, f"one mapwright_sitemaps-*.{kind} expected in {folder}, found {found}"
    return found[0]


def wheel_so(wheel: zipfile.ZipFile) -> bytes:
    [so] = [n for n in wheel.namelist() if n.endswith(".so")]
    assert so == "mapwright/_mapwright.abi3.so", so
    return wheel.read(so)


def test_the_wheel_is_abi3_manylinux_2_17_with_the_package_and_nothing_else():
    path = built("whl")
    name, version, _, tags = parse_wheel_filename(path.name)
    assert name == "mapwright-sitemaps"
    # One wheel for every CPython from 3.9 (abi3), for glibc 2.17 and later (manylinux2014 is its
    # older name, which pip before 20.3 reads).
    assert tags == frozenset({Tag("cp39", "abi3", "manylinux_2_17_x86_64"), Tag("cp39", "abi3", "manylinux2014_x86_64")})
    with zipfile.ZipFile(path) as wheel:
        info = f"mapwright_sitemaps-{version}.dist-info"
        names = set(wheel.namelist())
        # maturin adds the Rust dependencies' SBOM (CycloneDX) to the dist-info.
        assert names == {
            "mapwright/__init__.py", "mapwright/_mapwright.pyi", "mapwright/py.typed", "mapwright/_mapwright.abi3.so",
            f"{info}/METADATA", f"{info}/WHEEL", f"{info}/RECORD", f"{info}/sboms/mapwright-py.cyclonedx.json",
        }, names
        meta = email.parser.Parser().parsestr(wheel.read(f"{info}/METADATA").decode())
        wheel_file = email.parser.Parser().parsestr(wheel.read(f"{info}/WHEEL").decode())
    assert meta["Name"] == "mapwright-sitemaps" and meta["Requires-Python"] == ">=3.9"
    assert set(meta.get_all("Provides-Extra")) == {"pandas", "polars", "arrow"}
    # The package README is the project page's description.
    assert meta.get_payload().strip().startswith("# mapwright for Python")
    assert wheel_file["Root-Is-Purelib"] == "false"
    assert set(wheel_file.get_all("Tag")) == {"cp39-abi3-manylinux_2_17_x86_64", "cp39-abi3-manylinux2014_x86_64"}


def test_the_extension_is_stripped_and_needs_glibc_2_17_at_most():
    with zipfile.ZipFile(built("whl")) as wheel:
        so = wheel_so(wheel)
    elf = ELFFile(io.BytesIO(so))
    sections = [s.name for s in elf.iter_sections()]
    # Stripped: no symbol table, no debug info (the dynamic symbols Python needs stay).
    assert ".symtab" not in sections and not [s for s in sections if s.startswith(".debug")], sections
    assert "PyInit__mapwright" in {s.name for s in elf.get_section_by_name(".dynsym").iter_symbols()}
    needed = {t.needed for s in elf.iter_sections() if isinstance(s, DynamicSection) for t in s.iter_tags() if t.entry.d_tag == "DT_NEEDED"}
    # abi3 on Linux: no libpython, only what every manylinux system has.
    assert needed and needed <= MANYLINUX_LIBS, needed
    versions = set()
    for s in elf.iter_sections():
        if isinstance(s, GNUVerNeedSection):
            for _, aux in s.iter_versions():
                versions.update(a.name for a in aux)
    glibc = [tuple(int(x) for x in v.removeprefix("GLIBC_").split(".")) for v in versions if v.startswith("GLIBC_")]
    assert glibc and max(glibc) <= (2, 17), sorted(versions)
    # The release build was 11.2 MB stripped; a dev build is larger, but not unbounded.
    assert len(so) < 40_000_000, len(so)


def test_auditwheel_agrees():
    out = subprocess.run([sys.executable, "-m", "auditwheel", "show", str(built("whl"))], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    text = " ".join(out.stdout.split())
    # auditwheel's own reading of the symbols and libraries, independent of maturin's tag.
    assert 'is consistent with the following platform tag: "manylinux_2_17_x86_64"' in text, out.stdout
    assert "external versioned symbols" in text, out.stdout


def test_the_sdist_builds_offline_from_its_own_files():
    sdist = built("tar.gz")
    name, version = parse_sdist_filename(sdist.name)
    assert name == "mapwright-sitemaps" and str(version) == parse_wheel_filename(built("whl").name)[1].public
    root = f"mapwright_sitemaps-{version}"
    with tarfile.open(sdist) as tar:
        names = set(tar.getnames())
        for needed in ("pyproject.toml", "Cargo.toml", "Cargo.lock", "PKG-INFO", "backend/mapwright_build.py",
                       "python/mapwright/__init__.py", "python/mapwright/_mapwright.pyi", "python/mapwright/py.typed",
                       "crates/mapwright-py/Cargo.toml", "crates/mapwright-core/Cargo.toml",
                       "crates/mapwright-fetch/Cargo.toml", "crates/mapwright-hack/Cargo.toml"):
            assert f"{root}/{needed}" in names, needed
        # Only what the extension builds from: no server, store, CLI or crawler.
        assert not [n for n in names if re.match(rf"{root}/crates/mapwright(-server|-store|-crawl)?/", n)]
        unpacked = pathlib.Path(os.environ.get("TMPDIR", "/tmp")) / f"mapwright-sdist-{os.getpid()}"
        try:
            tar.extractall(unpacked, filter="data")
            src = unpacked / root
            committed = lock_packages((REPO / "Cargo.lock").read_text())
            # cargo resolves the sdist's workspace offline (every crate is in the lock, none fetched
            # anew) and only drops from the lock the crates the package does not build.
            out = subprocess.run(["cargo", "metadata", "--offline", "--format-version", "1"], cwd=src, capture_output=True, text=True)
            assert out.returncode == 0, out.stderr
            pruned = lock_packages((src / "Cargo.lock").read_text())
            assert pruned and pruned <= committed, sorted(pruned - committed)
            # The backend that pyproject.toml names (backend-path) is in the sdist and imports.
            out = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, 'backend'); import mapwright_build; print(mapwright_build.build_wheel.__module__)"],
                                 cwd=src, capture_output=True, text=True)
            assert out.stdout.strip() == "mapwright_build", out.stderr
        finally:
            shutil.rmtree(unpacked, ignore_errors=True)


def lock_packages(lock: str) -> set[tuple[str, str]]:
    return set(re.findall(r'\[\[package\]\]\nname = "([^"]+)"\nversion = "([^"]+)"', lock))


def without_rust() -> dict[str, str]:
    """The environment less every folder of PATH that holds cargo or rustc, and cargo's variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CARGO", "RUSTUP", "RUSTC", "RUST_", "VIRTUAL_ENV", "MAPWRIGHT_", "PYTHON"))}
    env["PATH"] = os.pathsep.join(
        d for d in os.environ.get("PATH", "").split(os.pathsep)
        if d and not any(os.path.exists(os.path.join(d, tool)) for tool in ("cargo", "rustc", "rustup"))
    )
    return env


def test_the_wheel_runs_the_examples_in_a_fresh_venv_without_rust(tmp_path):
    house = os.environ.get("MAPWRIGHT_WHEELHOUSE")
    assert house and os.path.isdir(house), "MAPWRIGHT_WHEELHOUSE is not set: test.sh downloads the requirements there"
    wheel = built("whl")
    env = without_rust()
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=env)
    python = str(venv / "bin/python")
    # Only wheels, only from the wheelhouse: a build from source (which would need Rust) is
    # impossible, and the extras resolve from the wheel's own metadata. The wheel by its path
    # (the distribution is "mapwright-sitemaps": "mapwright" on PyPI is another project).
    subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-index", "--only-binary", ":all:",
                    "--find-links", house, f"{wheel}[pandas,polars,arrow]", "pytest", "distributed"],
                   check=True, env=env)
    where = subprocess.run(
        [python, "-c", "import shutil, mapwright; assert shutil.which('cargo') is None and shutil.which('rustc') is None; print(mapwright._mapwright.__file__)"],
        capture_output=True, text=True, env=env, cwd=tmp_path,
    )
    assert where.returncode == 0, where.stderr
    assert pathlib.Path(where.stdout.strip()).is_relative_to(venv), where.stdout
    # The examples: every python block of the READMEs and the docstrings' doctests, run by their
    # own tests (mypy's are left to the suite: the fresh venv has no mypy).
    tests = PACKAGE / "tests"
    out = subprocess.run(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests / "test_readme.py"), str(tests / "test_docs.py"), "-k", "not mypy"],
        capture_output=True, text=True, env=env, cwd=tmp_path,
    )
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert re.search(r"\b[3-9] passed|\b\d{2,} passed", out.stdout), out.stdout[-2000:]


def load_backend():
    spec = importlib.util.spec_from_file_location("mapwright_build", PACKAGE / "backend/mapwright_build.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("hook", ["build_wheel", "build_sdist", "prepare_metadata_for_build_wheel"])
def test_the_build_backend_compiles_outside_the_clone(monkeypatch, tmp_path, hook):
    # `pip install ./crates/mapwright-py` builds in place: maturin is handed a temporary target
    # folder, which is gone once the hook returns. (A whole build takes minutes: maturin's hook is
    # stood in for here by one that fills its target folder; test.sh builds for real.)
    import maturin

    backend = load_backend()
    seen: list[str] = []

    def maturin_hook(directory: str, *args: object) -> str:
        target = pathlib.Path(os.environ["CARGO_TARGET_DIR"])
        seen.append(str(target))
        (target / "release").mkdir(parents=True)
        (target / "release" / "lib_mapwright.so").write_bytes(b"\0" * 1024)
        (pathlib.Path(directory) / "out").write_text("built")
        return "out"

    monkeypatch.setattr(maturin, hook, maturin_hook)
    monkeypatch.delenv("CARGO_TARGET_DIR", raising=False)
    assert getattr(backend, hook)(str(tmp_path)) == "out"
    assert (tmp_path / "out").read_text() == "built"
    [target] = seen
    assert not pathlib.Path(target).resolve().is_relative_to(REPO.resolve()), target
    assert not os.path.exists(target), "the temporary target folder was left behind"
    assert "CARGO_TARGET_DIR" not in os.environ
    # A target folder the caller chose (test.sh, CI: a warm build) is used as it is.
    monkeypatch.setenv("CARGO_TARGET_DIR", str(tmp_path / "chosen"))
    (tmp_path / "out").unlink()
    getattr(backend, hook)(str(tmp_path))
    assert seen[1] == str(tmp_path / "chosen") and (tmp_path / "chosen" / "release" / "lib_mapwright.so").exists()


def test_pyproject_names_the_backend_and_strips():
    import tomllib

    project = tomllib.loads((PACKAGE / "pyproject.toml").read_text())
    assert project["build-system"]["build-backend"] == "mapwright_build"
    assert project["build-system"]["backend-path"] == ["backend"]
    assert project["tool"]["maturin"]["strip"] is True
