"""One HTTP client per process (issue 22, speed on small files by URL): every call by URL
shares the process's runtime and client, made when first asked for, so calls from many
threads at once read what each alone reads, and a forked child (whose parent's threads and
sockets are not its own) makes its own and reads too, rather than hanging on the parent's."""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import mapwright
from conftest import urlset


def test_calls_from_many_threads_at_once_share_the_client(site):
    urls = [site.add(f"/s{i}.xml", urlset(*(f"{site.base}/{i}/{j}" for j in range(i + 1)))) for i in range(16)]
    # Two options, two clients: a call with max_bytes gets its own limit, not another's.
    with ThreadPoolExecutor(8) as pool:
        frames = list(pool.map(lambda u: mapwright.to_pandas(u), urls))
        small = list(pool.map(lambda u: mapwright.to_pandas(u, max_bytes=10**6), urls))
    assert [len(f) for f in frames] == [len(f) for f in small] == [i + 1 for i in range(16)]
    with pytest.raises(mapwright.SitemapTooLargeError):
        mapwright.to_pandas(urls[-1], max_bytes=100)
    assert len(mapwright.to_pandas(urls[-1])) == 16  # the default limit again


def wait(pid: int, seconds: float) -> int:
    """The child's exit status, or a failure when it is still running after `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail(f"the forked child still ran after {seconds} s: it hung on the parent's runtime")
        time.sleep(0.05)


def test_a_forked_child_reads_by_url(site):
    url = site.add("/s.xml", urlset(f"{site.base}/a", f"{site.base}/b"))
    assert [e.loc for e in mapwright.read(url)] == [f"{site.base}/a", f"{site.base}/b"]  # the parent's client is made
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report what it read, never return into pytest
        code = 1
        try:
            os.write(w, str(len(mapwright.to_pandas(url))).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    assert wait(pid, 30) == 0
    assert os.read(r, 100) == b"2"
    os.close(r)
    # The parent's client still works.
    assert len(mapwright.to_pandas(url)) == 2
