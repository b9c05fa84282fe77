"""A fork server for crash tests that restart the server dozens of times: this process imports
the server once, then forks one child per `start` command, and the child runs
`server.__main__.main` (the code `python -m server` runs: data-dir lock, its own event loop and
threads, the `LH_READY` line). A start then costs the server's own start-up, not Python's ~2-3 s
of imports (~8 s on a loaded 2-core box).

The embedding model is unavailable in the children (as on a machine without its package): the
auditor's candidates are lexical, and a restart does not embed the whole graph again.

Commands on stdin, one per line; answers on stdout:
    start <data dir>   -> "PID <pid>" (the child then prints its `LH_READY {...}` line)
    reap <pid>         -> "REAPED <pid> <wait status>" once the child has exited
A child's stdout and stderr are this process's. Run it with `OPENBLAS_NUM_THREADS=1` (numpy's
BLAS then starts no thread pool that a fork would leave without its threads).
"""

from __future__ import annotations

import os
import sys

import server.agent.library.embedder as embedder
import server.api.app
import server.services.bootstrap
import server.services.library.extraction
from server.__main__ import main

embedder.MODEL_PACKAGE = "lh_tests_no_embedding_model"  # `model_file` finds none: unavailable
_IMPORTED = (server.api.app, server.services.bootstrap, server.services.library.extraction)
"""What `main` imports lazily, imported before any fork."""


def _serve_commands() -> None:
    for line in sys.stdin:
        command, _, argument = line.strip().partition(" ")
        if command == "start":
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    code = main(["--port", "0", "--data-dir", argument])
                finally:
                    sys.stdout.flush()
                    sys.stderr.flush()
                    os._exit(code)
            print(f"PID {pid}", flush=True)
        elif command == "reap":
            pid = int(argument)
            _, status = os.waitpid(pid, 0)
            print(f"REAPED {pid} {status}", flush=True)


if __name__ == "__main__":
    _serve_commands()
