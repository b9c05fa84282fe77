"""Entry point of the frozen server (PyInstaller): the same CLI, env and ready line as `python -m server`.

Kept tiny on purpose: everything the server does lives in `server.__main__.main`; started with
`--serve-offline-model` first, the same executable is the offline model's llama.cpp server
(`server.offline_child`).
"""

from __future__ import annotations

import multiprocessing
import os
import sys


def _ensure_std_streams() -> None:
    """Give a console-less process (Windows GUI subsystem, or fds 1/2 closed) real streams.

    With `sys.stdout is None` the server skips its ready line, but uvicorn's log formatter calls
    `sys.stdout.isatty()` while configuring logging and would crash the start; a devnull writer
    keeps the behaviour of "no stdout" (nothing is read) without the crash.
    """
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115 - process-long


def run() -> int:
    multiprocessing.freeze_support()
    _ensure_std_streams()
    from server.config import OFFLINE_CHILD_FLAG

    if sys.argv[1:2] == [OFFLINE_CHILD_FLAG]:  # the offline model's child: llama.cpp's server
        from server.offline_child import main as serve_offline_model

        return serve_offline_model(sys.argv[2:])
    from server.__main__ import main

    return main()


if __name__ == "__main__":
    sys.exit(run())
