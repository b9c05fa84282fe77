"""Playwright's driver and the headless Chromium see only what a process needs (issue 10, deliver
6): no API key, no desktop token, nothing of ours (`LH_*`). Read from `/proc/<pid>/environ` of
every process the check started, so Linux only."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from server.agent.workbench.headless import ChromiumHeadless

SECRETS = {
    "LH_API_TOKEN": "desktop-secret",
    "LH_OPENROUTER_API_KEY": "sk-or-secret",
    "OPENAI_API_KEY": "sk-other-secret",
    "LH_DATA_DIR": "/somewhere/private",
}

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("chromium") is None,
    reason="reads /proc; needs Debian's chromium on PATH",
)


def descendants(root: int) -> dict[int, str]:
    """pid -> command name of every live descendant of `root`."""
    parents: dict[int, int] = {}
    names: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name, rest = stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2 :].split()
        parents[int(entry.name)], names[int(entry.name)] = int(rest[1]), name
    found: dict[int, str] = {}
    frontier = [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in found:
                found[pid] = names[pid]
                frontier.append(pid)
    return found


def environ_of(pid: int) -> dict[str, str] | None:
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return None  # gone meanwhile
    return dict(item.split("=", 1) for item in raw.decode(errors="replace").split("\0") if "=" in item)


async def test_the_driver_and_chromium_get_no_key_and_no_token(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    before = set(descendants(os.getpid()))
    headless = ChromiumHeadless(settle_s=0.1)
    try:
        result = await headless.run_html("<p>hello</p>", timeout_s=20)
        assert result.visible and not result.timed_out
        started = {pid: name for pid, name in descendants(os.getpid()).items() if pid not in before}
        environs: dict[int, dict[str, str]] = {}
        for pid in started:
            env = environ_of(pid)
            if env is not None:
                environs[pid] = env
        names = set(started.values())
        assert any("node" in n for n in names), names  # Playwright's driver
        assert any("chrom" in n for n in names), names  # the browser and its helpers
        for pid, env in environs.items():
            leaked = set(env) & set(SECRETS) | {k for k, v in env.items() if v in SECRETS.values()}
            assert not leaked, f"{started[pid]} ({pid}) sees {sorted(leaked)}"
        readable = [pid for pid, env in environs.items() if "PATH" in env]  # helpers overwrite theirs
        assert any("node" in started[p] for p in readable), started  # the driver was read
        assert any("chrom" in started[p] for p in readable), started  # and the browser
    finally:
        await headless.close()
    from playwright._impl import transport

    hook = transport.get_driver_env  # type: ignore[attr-defined]
    assert "confined" not in hook.__qualname__, "the hook is given back"
