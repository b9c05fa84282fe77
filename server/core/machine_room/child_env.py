"""The environment a child process gets (issue 10, deliver 6): only what a process needs to run.

Pure: callers pass their own environment (`os.environ`). Used for the llama.cpp child
(`services/machine_room/offline_child.py`) and for Playwright's driver and the headless Chromium
(`agent/workbench/headless.py`), so neither sees an API key, the desktop token or anything else of
ours.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

ALLOWED = frozenset(
    {
        "PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TMPDIR", "TEMP", "TMP", "TZ",
        "SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "USERPROFILE", "LOCALAPPDATA",
        "APPDATA", "PROGRAMDATA", "NUMBER_OF_PROCESSORS", "PROCESSOR_ARCHITECTURE",
        "LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH", "VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME",
    }
)  # fmt: skip
"""Variables every child may see: paths, the user, locale, temp folders, Windows' system folders."""
PREFIXES = ("LC_",)
"""Prefixes every child may see (the locale's categories)."""


def child_environment(source: Mapping[str, str], prefixes: Iterable[str] = ()) -> dict[str, str]:
    """The subset of `source` a child may see: names in `ALLOWED`, or starting with `PREFIXES` or
    one of the child's own `prefixes` (e.g. `OMP_` for llama.cpp), and never a `*_API_KEY` nor any
    variable of ours (`LH_*`: the desktop token, keys, the data dir), whatever the prefixes say."""
    allowed = (*PREFIXES, *prefixes)
    return {
        k: v
        for k, v in source.items()
        if (k in ALLOWED or k.startswith(allowed)) and not k.endswith("_API_KEY") and not k.startswith("LH_")
    }
