"""The offline model's child process when frozen: llama.cpp's OpenAI-compatible server.

A PyInstaller executable cannot run `python -m llama_cpp.server` (its `sys.executable` is the
server itself), so `server.services.machine_room.offline_model` starts the frozen executable again with
`--serve-offline-model` followed by llama.cpp's own options, and `build/entry.py` hands those
options here. Unfrozen runs use `python -m llama_cpp.server` and never come here.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str]) -> int:
    """Run llama.cpp's server with `argv` (its CLI options) until it is stopped.

    Returns 0 after a stop; llama.cpp's own CLI exits 1 (printing why) on bad options, and 2 when
    its package is not in the bundle.
    """
    try:
        from llama_cpp.server.__main__ import main as llama_main
    except ImportError as exc:
        print(f"error: llama.cpp is not in this build ({exc})", file=sys.stderr)
        return 2
    sys.argv = ["llama_cpp.server", *argv]
    llama_main()  # type: ignore[no-untyped-call]
    return 0
