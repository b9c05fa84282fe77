"""Freeze the server (frontend included) into dist/learning-harness-server/ and measure it.

Usage (from the repo root, with the project venv):

    .venv/bin/python build/freeze.py              # freeze, smoke-test, measure cold start (5 runs)
    .venv/bin/python build/freeze.py --runs 0     # freeze and smoke-test only
    .venv/bin/python build/freeze.py --measure-only --runs 9

Prints a summary and writes it as JSON to dist/learning-harness-server.report.json:
freeze time, bundle size, cold start to health (spawn -> `LH_READY` -> `GET /api/health` 200),
and cold start to the offline model's first token (spawn -> offline model running -> the first
content chunk of a lesson's first turn, no key), median/min/max over the runs. The smoke test runs
one offline turn: a bundle whose offline model cannot answer fails the freeze.
Exits non-zero if the freeze or the smoke test fails, or when the bundle holds files of the
repository's data/ (the bundle is then deleted) or lacks a prompt the server loads (`verify_contents`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import queue
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "build" / "server.spec"
DIST = ROOT / "dist"
WORK = ROOT / "build" / "work"
NAME = "learning-harness-server"
BUNDLE = DIST / NAME
REPORT = DIST / f"{NAME}.report.json"
READY_PREFIX = "LH_READY "


def executable(bundle: Path = BUNDLE) -> Path:
    return bundle / (NAME + (".exe" if sys.platform == "win32" else ""))


def dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def freeze(static: Path) -> float:
    """Run PyInstaller on the spec with the frontend from `static`. Returns the wall time in seconds."""
    env = dict(os.environ)
    env["LH_FREEZE_STATIC"] = str(static)
    env["PYTHONHASHSEED"] = "0"  # deterministic bytecode/set ordering: reproducible bundles
    command = [
        sys.executable,
        "-m",
        "PyInstaller",
        "--noconfirm",
        "--clean",
        "--log-level",
        "WARN",
        "--distpath",
        str(DIST),
        "--workpath",
        str(WORK),
        str(SPEC),
    ]
    started = time.monotonic()
    subprocess.run(command, cwd=ROOT, env=env, check=True)
    return time.monotonic() - started


def tree_digest(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def missing_assets(static: Path) -> list[str]:
    """Files that static/index.html references (src/href="/assets/...") but that do not exist."""
    index = (static / "index.html").read_text(encoding="utf-8")
    refs = set(re.findall(r'(?:src|href)="/?(assets/[^"?#]+)', index))
    return sorted(ref for ref in refs if not (static / ref).is_file())


def snapshot_frontend() -> tuple[Path, dict[str, str]]:
    """Copy server/static to build/work/static and return (copy, digest).

    PyInstaller collects data files over ~a minute; a frontend rebuilt meanwhile (another
    `npm run build`, an editable reinstall) would leave a bundle whose index.html names assets it
    does not contain. The bundle is made from a consistent snapshot instead.
    """
    source = ROOT / "server" / "static"
    if not (source / "index.html").is_file():
        raise SystemExit(
            "server/static/index.html is missing: build the frontend first "
            "(cd frontend && npm ci && npm run build)"
        )
    target = WORK / "static"
    for _ in range(5):
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(source, target)
        if not missing_assets(target) and tree_digest(source) == tree_digest(target):
            return target, tree_digest(target)
        time.sleep(2)  # a build is writing server/static right now
    raise SystemExit(
        f"server/static is inconsistent (missing {missing_assets(target)}): rebuild the frontend"
    )


def verify_frontend(snapshot_digest: dict[str, str]) -> None:
    """The bundled frontend must be exactly the snapshot, with every asset index.html names."""
    bundled = next(BUNDLE.rglob("server/static/index.html"), None)
    if bundled is None:
        raise SystemExit("the bundle has no server/static/index.html")
    if tree_digest(bundled.parent) != snapshot_digest or missing_assets(bundled.parent):
        raise SystemExit("the bundled frontend differs from server/static: run build/freeze.py again")


REPO_DATA = ROOT / "data"
"""The repository's data dir (`python -m server`'s default, `server/config.py`): lessons, the
graph, keys' settings. Never part of a bundle."""
PROMPTS = ROOT / "server" / "agent" / "prompts"
"""The role prompts (`server.agent.prompts.load_prompt` reads `<name>.md` as package data)."""
LEAK_MIN_BYTES = 64
"""Files of the data dir shorter than this are not looked for by content: they say nothing about a
learner (`{}`, `[]`, an empty ledger line) and match packages' own files by chance."""
_LOAD_PROMPT = re.compile(r"""load_prompt\(\s*["']([A-Za-z0-9_-]+)["']\s*\)""")


def _files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and not p.is_symlink()] if root.is_dir() else []


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def leaked_data(bundle: Path, repo_data: Path = REPO_DATA) -> list[str]:
    """Bundle files (paths relative to `bundle`) that came from the repository's data dir: a `data`
    folder at the bundle's top (beside the executable, or in `_internal/`, where a spec's `datas`
    entry with the destination "data" lands), and any bundle file with the name and the bytes of a
    file under `repo_data` of at least `LEAK_MIN_BYTES`. Sorted; [] when nothing leaked. Reads only
    files whose name and size match (the data dir can be large)."""
    leaks: set[str] = set()
    for top in (bundle / "data", bundle / "_internal" / "data"):
        leaks.update(p.relative_to(bundle).as_posix() for p in _files(top))
        if top.is_dir() and not _files(top):
            leaks.add(top.relative_to(bundle).as_posix() + "/")
    by_key: dict[tuple[str, int], list[Path]] = {}
    for path in _files(repo_data):
        size = path.stat().st_size
        if size >= LEAK_MIN_BYTES:
            by_key.setdefault((path.name, size), []).append(path)
    digests: dict[Path, str] = {}
    for path in _files(bundle):
        same = by_key.get((path.name, path.stat().st_size))
        if not same:
            continue
        mine = _digest(path)
        if any(digests.setdefault(other, _digest(other)) == mine for other in same):
            leaks.add(path.relative_to(bundle).as_posix())
    return sorted(leaks)


def prompt_names(source: Path = ROOT / "server", prompts: Path = PROMPTS) -> list[str]:
    """Every prompt the server can load: each `<name>.md` in `prompts` and each name a
    `load_prompt("<name>")` call in `source`'s Python files spells out. Sorted."""
    names = {p.stem for p in prompts.glob("*.md")}
    for module in source.rglob("*.py"):
        names.update(_LOAD_PROMPT.findall(module.read_text(encoding="utf-8")))
    return sorted(names)


def missing_prompts(bundle: Path, names: list[str], prompts: Path = PROMPTS) -> list[str]:
    """The prompts a bundle lacks, each as a plain phrase: "<name>.md (not in the bundle)", or
    "(differs from server/agent/prompts)" when the bundled copy is not byte-equal to the repository's,
    or "(no such file in server/agent/prompts)" when code loads a prompt the repository lacks.
    The bundle's prompts are the `server/agent/prompts/` folder anywhere in it (PyInstaller puts
    data in `_internal/`)."""
    found = next(
        (p for p in bundle.rglob("prompts") if p.is_dir() and p.parent.as_posix().endswith("server/agent")),
        None,
    )
    problems: list[str] = []
    for name in names:
        source = prompts / f"{name}.md"
        bundled = found / f"{name}.md" if found is not None else None
        if not source.is_file():
            problems.append(f"{name}.md (no such file in server/agent/prompts)")
        elif bundled is None or not bundled.is_file():
            problems.append(f"{name}.md (not in the bundle)")
        elif bundled.read_bytes() != source.read_bytes():
            problems.append(f"{name}.md (differs from server/agent/prompts)")
    return problems


def verify_contents(
    bundle: Path = BUNDLE,
    repo_data: Path = REPO_DATA,
    prompts: Path = PROMPTS,
    source: Path = ROOT / "server",
) -> None:
    """Hard-fail (SystemExit, naming the files) when the repository's data dir leaked into the
    bundle — the bundle is then deleted, so no copy of a learner's lessons or graph is left in
    dist/ — or when a prompt the server loads is missing from it or differs (seed §8: "the build
    hard-fails if repo `data/` would leak into the bundle or if prompt assets fall out")."""
    leaks = leaked_data(bundle, repo_data)
    if leaks:
        shutil.rmtree(bundle, ignore_errors=True)
        shown = ", ".join(leaks[:8]) + (f" and {len(leaks) - 8} more" if len(leaks) > 8 else "")
        raise SystemExit(
            f"the bundle held files of the repository's data dir ({shown}); it was deleted. "
            "Remove whatever adds data/ to the bundle (build/server.spec `datas`) and freeze again"
        )
    missing = missing_prompts(bundle, prompt_names(source, prompts), prompts)
    if missing:
        raise SystemExit(
            f"the bundle lacks prompts the server loads: {', '.join(missing)}. "
            "Check build/server.spec `datas` (server/agent/prompts/*.md) and freeze again"
        )


def server_env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("LH_API_TOKEN", None)
    env.update(
        {
            "LH_DATA_DIR": str(data_dir),
            "LH_LOG_LEVEL": "warning",
            "LH_KEYRING": "off",
            "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        }
    )
    return env


def _pump(stream: IO[str] | None, lines: queue.Queue[str]) -> None:
    assert stream is not None
    for line in stream:
        lines.put(line)
    lines.put("")


def first_offline_token(port: int, started: float, timeout: float = 180.0) -> tuple[float, float]:
    """With no key, time the offline model from the spawn at `started` (a `time.monotonic()`):
    returns (seconds until `/api/settings` says it runs, seconds until the first content chunk
    of a lesson's first turn). Raises RuntimeError when the model fails or answers no content."""
    deadline = time.monotonic() + timeout
    while True:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/settings", timeout=10) as response:
            offline = json.loads(response.read())["offline"]
        if offline.get("running"):
            break
        if offline.get("error"):
            raise RuntimeError(f"offline model: {offline['error']}")
        if time.monotonic() > deadline:
            raise RuntimeError("the offline model did not start in time")
        time.sleep(0.05)
    model_ready = time.monotonic() - started

    def post(path: str, body: dict[str, object]) -> urllib.request.Request:
        data = json.dumps(body).encode()
        headers = {"content-type": "application/json"}
        return urllib.request.Request(f"http://127.0.0.1:{port}{path}", data, headers)

    with urllib.request.urlopen(post("/api/chats", {"demo": True}), timeout=10) as response:  # noqa: S310 - loopback http
        chat = json.loads(response.read())["id"]
    message = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Teach me fractions."}]}
    request = post("/api/chat", {"id": chat, "messages": [message]})
    with urllib.request.urlopen(request, timeout=timeout) as turn:  # noqa: S310 - loopback http
        for raw in turn:
            line = raw.decode("utf-8").strip()
            if not line.startswith("data: {"):
                continue
            chunk = json.loads(line[len("data: ") :])
            if chunk["type"] in ("text-delta", "tool-input-start", "tool-input-delta"):
                first = time.monotonic() - started
                turn.read()  # let the turn finish before the server is stopped
                return model_ready, first
            if chunk["type"] == "error":
                raise RuntimeError(f"the offline turn failed: {chunk.get('errorText')}")
    raise RuntimeError("the offline turn streamed no content")


def cold_start(
    command: list[str], timeout: float = 30.0, offline_token: bool = False
) -> tuple[float, float, tuple[float, float] | None]:
    """One run on a fresh data dir. Returns (seconds to LH_READY, seconds to health 200, and with
    `offline_token` the seconds to the offline model running and to a lesson turn's first chunk)."""
    with tempfile.TemporaryDirectory(prefix="lh-freeze-") as tmp:
        data = Path(tmp) / "data"
        stderr_path = Path(tmp) / "stderr.log"
        stderr = stderr_path.open("w", encoding="utf-8")  # a file, not a pipe nobody drains
        started = time.monotonic()
        process = subprocess.Popen(
            [*command, "--port", "0"],
            env=server_env(data),
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
        try:
            # A reader thread, not selectors: Windows cannot select() on pipes.
            lines: queue.Queue[str] = queue.Queue()
            threading.Thread(target=_pump, args=(process.stdout, lines), daemon=True).start()
            deadline = started + timeout
            port = None
            while port is None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise RuntimeError("no LH_READY line in time")
                try:
                    line = lines.get(timeout=remaining)
                except queue.Empty:
                    continue
                if line.startswith(READY_PREFIX):
                    port = json.loads(line[len(READY_PREFIX) :])["port"]
                elif line == "":  # EOF: the server exited
                    process.wait(5)
                    stderr.flush()
                    tail = stderr_path.read_text(encoding="utf-8", errors="replace")[-2000:]
                    raise RuntimeError(f"server exited {process.returncode}: {tail}")
            ready = time.monotonic() - started
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=10) as response:
                status = response.status
                body = json.loads(response.read())
            healthy = time.monotonic() - started
            if status != 200 or body.get("status") != "ok":
                raise RuntimeError(f"health answered {status} {body}")
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as response:
                if b"<" not in response.read(200):
                    raise RuntimeError("/ did not serve the frontend's index.html")
            offline = first_offline_token(port, started) if offline_token else None
            return ready, healthy, offline
        finally:
            if process.poll() is None:
                process.terminate()  # SIGTERM on POSIX (graceful); TerminateProcess on Windows
                try:
                    code = process.wait(20)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
                    raise RuntimeError("server ignored SIGTERM for 20 s") from None
                if sys.platform != "win32" and code != 0:
                    raise RuntimeError(f"server exited {code} after SIGTERM")
            if process.stdout:
                process.stdout.close()
            stderr.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="cold-start runs to measure (0: smoke test only)")
    parser.add_argument(
        "--offline-runs",
        type=int,
        default=1,
        help="runs measuring cold start to the offline model's first token (besides the smoke test)",
    )
    parser.add_argument(
        "--measure-only", action="store_true", help="measure the existing bundle, do not freeze"
    )
    parser.add_argument(
        "--compare-python", action="store_true", help="also measure `python -m server` the same way"
    )
    args = parser.parse_args(argv)

    report: dict[str, object] = {
        "platform": f"{platform.system()} {platform.machine()}",
        "python": platform.python_version(),
    }
    try:
        import PyInstaller

        report["pyinstaller"] = PyInstaller.__version__
    except ImportError:
        raise SystemExit("PyInstaller is not installed: .venv/bin/pip install -e '.[desktop]'") from None

    if not args.measure_only:
        if BUNDLE.exists():
            shutil.rmtree(BUNDLE)
        started = time.monotonic()
        static, static_digest = snapshot_frontend()
        freeze(static)
        verify_frontend(static_digest)
        seconds = time.monotonic() - started
        report["freeze_seconds"] = round(seconds, 1)
        print(f"froze {BUNDLE.relative_to(ROOT)} in {seconds:.1f} s")
    exe = executable()
    if not exe.is_file():
        raise SystemExit(f"{exe} does not exist: run without --measure-only first")
    verify_contents(BUNDLE)  # no data/ in it, every prompt in it (also for --measure-only)
    size = dir_size(BUNDLE)
    report["bundle_bytes"] = size
    report["bundle_mib"] = round(size / 2**20, 1)
    report["bundle_files"] = sum(1 for p in BUNDLE.rglob("*") if p.is_file())

    # Smoke test, the offline model's first turn included (also warms the OS file cache, as on a
    # user's second launch).
    ready, healthy, offline = cold_start([str(exe)], offline_token=True)
    assert offline is not None
    report["first_run_s"] = {
        "ready": round(ready, 3),
        "health": round(healthy, 3),
        "offline_model_running": round(offline[0], 3),
        "first_offline_token": round(offline[1], 3),
    }
    runs = [cold_start([str(exe)]) for _ in range(max(args.runs, 0))]
    offline_runs = [cold_start([str(exe)], offline_token=True)[2] for _ in range(max(args.offline_runs, 0))]
    if offline_runs:
        running = [o[0] for o in offline_runs if o]
        first = [o[1] for o in offline_runs if o]
        report["cold_start_to_offline_model_running_s"] = {
            "runs": len(running),
            "median": round(statistics.median(running), 3),
            "min": round(min(running), 3),
            "max": round(max(running), 3),
        }
        report["cold_start_to_first_offline_token_s"] = {
            "runs": len(first),
            "median": round(statistics.median(first), 3),
            "min": round(min(first), 3),
            "max": round(max(first), 3),
        }
    if runs:
        health = [h for _, h, _ in runs]
        ready_times = [r for r, _, _ in runs]
        report["cold_start_to_health_s"] = {
            "runs": len(runs),
            "median": round(statistics.median(health), 3),
            "min": round(min(health), 3),
            "max": round(max(health), 3),
        }
        report["cold_start_to_ready_s"] = {"median": round(statistics.median(ready_times), 3)}
    if args.compare_python and args.runs > 0:
        # The same measurement for `python -m server` from this interpreter, for comparison.
        python = [cold_start([sys.executable, "-m", "server"])[1] for _ in range(args.runs)]
        report["python_m_server_to_health_s"] = {
            "runs": len(python),
            "median": round(statistics.median(python), 3),
            "min": round(min(python), 3),
            "max": round(max(python), 3),
        }
    DIST.mkdir(exist_ok=True)
    REPORT.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
