"""A large block freed goes back to the OS at once (issue 28, item 3): `cap_malloc_arenas` fixes
glibc's mmap threshold (`MMAP_THRESHOLD`), which otherwise rises to the size of each mapped block
freed (up to 32 MiB), after which a graph's bodies and the event loop's write buffer for them
came from the heap and stayed in RSS until the next `malloc_trim`. Each case runs in a fresh
interpreter (mallopt is process-wide)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.procs import ROOT

PROBE = """
import sys
from pathlib import Path
from server.services.library.memory import cap_malloc_arenas
if sys.argv[1] == "capped":
    assert cap_malloc_arenas()
def rss():
    line = next(l for l in Path("/proc/self/status").read_text().splitlines() if l.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024
first = b"x" * (30 << 20)
del first  # by glibc's default, the threshold now rises past 30 MiB
base = rss()
body = b"y" * (20 << 20)
grown = rss() - base
del body
print(grown, rss() - base)
"""


def _run(mode: str) -> tuple[float, float]:
    env = {"PATH": "/usr/bin:/bin"}  # no MALLOC_* from the caller's environment
    out = subprocess.run(
        [sys.executable, "-c", PROBE, mode], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    grown, left = (float(x) for x in out.stdout.split())
    return grown, left


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_a_freed_body_leaves_rss_at_once() -> None:
    grown, left = _run("capped")
    assert grown > 15  # the body was there
    assert left < 5, f"{left:.0f} MB of a freed 20 MB body still in RSS"
