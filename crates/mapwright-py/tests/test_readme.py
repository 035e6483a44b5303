"""Every ```python block of the package README and of the project README's Python section runs
top to bottom, against a loopback server standing for https://example.com and files made in a
temporary folder; and mypy --strict accepts them (mypy is pinned in requirements.txt)."""

from __future__ import annotations

import gzip
import pathlib
import re
import socket
import subprocess
import sys

import pytest

from conftest import REPO, index, urlset


def python_blocks(path: pathlib.Path, section: str | None = None) -> list[str]:
    """The ```python blocks of a Markdown file (of one `## section` only, if given)."""
    text = path.read_text(encoding="utf-8")
    if section is not None:
        start = text.index(f"\n## {section}\n")
        end = text.find("\n## ", start + 1)
        text = text[start : end if end >= 0 else len(text)]
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


BLOCKS = [
    ("package README", REPO / "crates/mapwright-py/README.md", None),
    ("project README", REPO / "README.md", "Python"),
]


def serve_example_com(site) -> None:
    """What the snippets fetch from https://example.com, on the loopback server."""
    b = site.base
    site.add("/robots.txt", f"User-agent: *\nSitemap: {b}/sitemap_index.xml\n".encode(), content_type="text/plain")
    site.add("/sitemap_index.xml", index(f"{b}/s1.xml", f"{b}/s2.xml.gz"))
    site.add("/s1.xml", urlset(f"{b}/a", f"{b}/b", extra="<lastmod>2024-05-01</lastmod>"))
    site.add("/s2.xml.gz", urlset(f"{b}/c"), gz=True)


def local_files(folder: pathlib.Path, base: str) -> None:
    """The files the snippets read by path."""
    body = urlset(f"{base}/blog/a", f"{base}/blog/b", f"{base}/elsewhere", extra="<priority>0.5</priority>")
    (folder / "sitemap.xml").write_bytes(body)
    (folder / "sitemap.xml.gz").write_bytes(gzip.compress(body))


@pytest.mark.parametrize("name,path,section", BLOCKS, ids=[b[0] for b in BLOCKS])
def test_readme_python_blocks_run(site, tmp_path, monkeypatch, capsys, name, path, section):
    blocks = python_blocks(path, section)
    assert blocks, f"no python block in {path}"
    serve_example_com(site)
    local_files(tmp_path, site.base)
    monkeypatch.chdir(tmp_path)
    # The README's broken site: a loopback port nobody listens on (refused at once).
    dead = socket.socket()
    dead.bind(("127.0.0.1", 0))
    broken = f"http://127.0.0.1:{dead.getsockname()[1]}"
    dead.close()
    for n, code in enumerate(blocks, 1):
        code = code.replace("https://example.com", site.base).replace("https://broken.example.net", broken)
        ns: dict[str, object] = {"__name__": f"readme_block_{n}"}
        try:
            exec(compile(code, f"{path.name} block {n}", "exec"), ns)
        except Exception as e:  # pragma: no cover - the failure is the message
            pytest.fail(f"{name}, block {n} raised {type(e).__name__}: {e}\n{code}")
        # What the blocks make is what they say.
        if "df" in ns:
            assert len(ns["df"]) == 3, f"{name} block {n}: {ns['df']}"  # type: ignore[arg-type]
        if "urls" in ns:
            assert sorted(u for u, _ in ns["urls"]) == [f"{site.base}/{x}" for x in "abc"]  # type: ignore[attr-defined]
        if "kept" in ns:
            assert [e.loc for e in ns["kept"]] == [f"{site.base}/blog/a", f"{site.base}/blog/b"]  # type: ignore[attr-defined]
        if "report" in ns:
            assert ns["report"].ok, ns["report"].findings  # type: ignore[attr-defined]
        if "failed" in ns and "table" in ns:
            # The Dask recipe: the good site's rows kept, the broken one reported.
            assert ns["table"].num_rows == 3, ns["table"]  # type: ignore[attr-defined]
            assert set(ns["failed"].column("site").to_pylist()) == {f"{broken}/"}  # type: ignore[attr-defined]
    # The prints ran (the entries' URLs are printed by the first block of each file).
    assert site.base in capsys.readouterr().out


@pytest.mark.parametrize("name,path,section", BLOCKS, ids=[b[0] for b in BLOCKS])
def test_readme_python_blocks_pass_mypy_strict(tmp_path, name, path, section):
    files = []
    for n, code in enumerate(python_blocks(path, section), 1):
        f = tmp_path / f"block_{n}.py"
        f.write_text(code, encoding="utf-8")
        files.append(str(f))
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", str(tmp_path / ".mypy"), *files],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_mypy_refuses_a_source_of_the_wrong_type(tmp_path):
    f = tmp_path / "wrong.py"
    f.write_text(
        "import io\nimport pathlib\nimport mapwright\n"
        "mapwright.read(123)\n"
        "mapwright.read(b'x'); mapwright.read('s.xml'); mapwright.read(pathlib.Path('s.xml'))\n"
        "mapwright.read(io.BytesIO(b'x')); mapwright.read(open('s.xml', 'rb'))\n"
        "mapwright.to_pandas(1.5)\n",
        encoding="utf-8",
    )
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", str(tmp_path / ".mypy"), str(f)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    errors = [line for line in out.stdout.splitlines() if ": error:" in line]
    # Exactly the two wrong calls, on lines 4 and 7: the right ones pass.
    assert [int(line.split(":")[1]) for line in errors] == [4, 7], out.stdout
    assert all("arg-type" in line for line in errors), out.stdout


def test_the_package_itself_passes_mypy_strict(tmp_path):
    # Every function typed, return types included (the stubs of the native module too).
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", str(tmp_path / ".mypy"), "mapwright"],
        capture_output=True,
        text=True,
        cwd=REPO / "crates/mapwright-py/python",
    )
    assert out.returncode == 0, out.stdout + out.stderr
