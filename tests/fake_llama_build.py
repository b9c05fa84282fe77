"""A stand-in for `scripts/install_llama_cpp.py --progress` (issue 29, item 1), named by
`$LH_OFFLINE_BUILD_COMMAND` in tests so that no test compiles llama.cpp.

It speaks the real builder's protocol (`install_llama_cpp: step K/N <what>` lines and ninja's
`[n/m]` file counts), holds in the compile step until `--release` exists (a test's condition,
not a sleep), then, with `--wheel`, installs that already built wheel into this interpreter's
environment as the real builder does (`pip install --no-index --no-deps --force-reinstall`), and
exits with `--exit` (default 0) after printing `--last-line` when given.

Usage: python tests/fake_llama_build.py --release FILE [--files 40] [--wheel W] [--exit 1] [--last-line TEXT]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--release", type=Path, required=True, help="compile until this file exists")
    parser.add_argument("--files", type=int, default=40)
    parser.add_argument("--wheel", type=Path)
    parser.add_argument("--exit", type=int, default=0)
    parser.add_argument("--last-line", default="")
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args()
    print("install_llama_cpp: plan compiling llama.cpp | installing it", flush=True)
    print("install_llama_cpp: step 1/2 compiling llama.cpp", flush=True)
    print("Processing ./llama_cpp_python-0.3.36.tar.gz", flush=True)
    half = args.files // 2
    for n in range(1, half + 1):
        print(f"[{n}/{args.files}] Building C object vendor/llama.cpp/ggml/src/file{n}.c.o", flush=True)
    deadline = time.monotonic() + args.timeout
    while not args.release.exists():
        if time.monotonic() > deadline:
            print("fake build: never released", flush=True)
            return 3
        time.sleep(0.05)
    for n in range(half + 1, args.files + 1):
        print(f"[{n}/{args.files}] Building CXX object vendor/llama.cpp/src/file{n}.cpp.o", flush=True)
    if args.last_line:
        print(args.last_line, flush=True)
    if args.exit:
        return int(args.exit)
    print("install_llama_cpp: step 2/2 installing it", flush=True)
    if args.wheel:
        subprocess.run(
            [
                sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "--no-index",
                "--no-deps", "--force-reinstall", "--no-cache-dir", str(args.wheel),
            ],
            check=True,
        )  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
