"""Benchmark (issue 26, item 6): `/api/health` while a burst of 20 lesson turns and 5 notes
imports hits a fresh `python -m server` at the same moment.

Run: `.venv/bin/python -m tests.bench.machine_room.bench_burst [runs]` (default 3 runs, each on a fresh server
and data dir). With `LH_LOOP_PROBE_OUT=/tmp/x.json` the server runs under
`tests/bench/loop_probe.py` and the last run's loop lag, stall stacks, GC pauses and the slowest
probes' split (before the app is called / in it / after, and how long the poller itself waited
for a CPU) are printed.
Figures go to docs/benchmarks.md.

The model: a scripted OpenAI-compatible stub (`tests/stub_openai.py`) in a process of its own, so
neither its CPU nor its GIL is the server's or the bench's. A lesson turn's answer waits
`FIRST_TOKEN_S`, then streams `REPLY_WORDS` words one `WORD_DELAY_S` apart (≈ 3 s a reply, as a
hosted model streams); an extractor's or auditor's answer (`tests/scripts/library.py`) comes after
`EXTRACT_S`.

The burst: 20 lessons are created (no turn yet), then at one moment each sends its first learner
message (`POST /api/chat`, the SSE stream read to `[DONE]`) and 5 multipart imports of real notes
(`../shared/fixtures/notes/`, see its NOTICE.md; 7 notes, one of them the 110 KB
system-design-primer) are posted. The burst ends when every turn has streamed `[DONE]` and every
row of the activity feed has ended.

The probe: a process of its own GETs `/api/health` every `PROBE_PERIOD_S` (10 ms) on one kept
connection, from before the burst until after it. Printed per run: the load average (1 min) before
and after, the probes inside the burst window (count, p50, p99, max, how many > 100 / 250 ms),
the burst's completion times (turns, imports, all), and whether every turn ended well; at the end
the medians over the runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from tests.bench.library.bench_vault import PROBE_ENV, _runnable_s, percentile, print_probe, split_health
from tests.procs import ROOT, ServerProcess, learner_turn, scripted_slot, start_server, write_settings
from tests.scripts.library import graph_reply
from tests.stub_openai import Reply, create_stub

TURNS = 20
IMPORTS = 5
PROBE_PERIOD_S = 0.01
FIRST_TOKEN_S = 0.6
"""Seconds the stub waits before a lesson reply's first word (a hosted model's first token)."""
WORD_DELAY_S = 0.02
REPLY_WORDS = 120
EXTRACT_S = 1.5
"""Seconds the stub thinks before an extractor's or auditor's tool call."""

CHECKOUT = Path(os.environ.get("LH_BENCH_CHECKOUT") or ROOT)
"""Whose server runs: this checkout, or another one (`LH_BENCH_CHECKOUT=/tmp/before`, e.g. from
`git archive <commit> | tar -x -C /tmp/before`) for a before/after in the same run style; the
bench, its stub model and its probe are this checkout's either way."""

FIXTURES = ROOT.parent / "shared" / "fixtures" / "notes"
IMPORT_SETS = [
    ["algorithms-graph-dijkstra.en.md", "algorithms-math-bits.en.md"],
    ["algorithms-sets-knapsack-problem.en.md", "data-structures-heap.en.md"],
    ["analysis-1-definitions.de.md"],
    ["rank-factorization.de.md"],
    ["system-design-primer.large.en.md"],
]
"""Five imports of real notes (one multipart request each)."""

TEACHING = (
    "The derivative of a function at a point is the limit of the difference quotient "
    "$\\frac{f(x+h)-f(x)}{h}$ as $h$ tends to zero. "
)


def lesson_text() -> str:
    words = (TEACHING * 20).split(" ")
    return " ".join(words[:REPLY_WORDS])


async def burst_reply(body: dict[str, Any]) -> Reply:
    """The stub's script: a graph job's submit after `EXTRACT_S`; any other request (a lesson's
    prober or teacher) a long text reply after `FIRST_TOKEN_S`."""
    tools = {t["function"]["name"] for t in body.get("tools", [])}
    if "submit" in tools:
        await asyncio.sleep(EXTRACT_S)
        return graph_reply(body)
    await asyncio.sleep(FIRST_TOKEN_S)
    return Reply(lesson_text())


def stub_main(port: int) -> None:
    """`--stub PORT`: serve the scripted model on loopback until killed."""
    import uvicorn

    uvicorn.run(
        create_stub(burst_reply, delay_s=WORD_DELAY_S), host="127.0.0.1", port=port, log_level="warning"
    )


@contextlib.contextmanager
def stub_process() -> Iterator[str]:
    """The stub model in a process of its own; yields its base URL."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.bench.machine_room.bench_burst", "--stub", str(port)], cwd=ROOT
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/v1/models", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or child.poll() is not None:
                raise RuntimeError("the stub model did not start")
            time.sleep(0.05)
        yield url
    finally:
        child.terminate()
        child.wait(10)


def poll_main(url: str) -> None:
    """`--poll URL`: GET /api/health every `PROBE_PERIOD_S` on one kept connection with Nagle off
    (`TCP_NODELAY`, as browsers do) until a line arrives on stdin; then print
    `start_monotonic_s latency_ms` per probe, one a line."""
    stop = threading.Event()

    def wait_for_stop() -> None:
        sys.stdin.readline()
        stop.set()

    threading.Thread(target=wait_for_stop, daemon=True).start()
    took: list[tuple[float, float, float]] = []
    nodelay = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]  # as browsers set it
    with httpx.Client(
        base_url=url, timeout=60, transport=httpx.HTTPTransport(socket_options=nodelay)
    ) as client:
        client.get("/api/health").raise_for_status()
        print("ready", flush=True)
        while not stop.is_set():
            waited = _runnable_s()
            start = time.monotonic()
            client.get("/api/health").raise_for_status()
            took.append((start, (time.monotonic() - start) * 1000, (_runnable_s() - waited) * 1000))
            time.sleep(PROBE_PERIOD_S)
    print("\n".join(f"{s:.6f} {ms:.3f} {w:.3f}" for s, ms, w in took), flush=True)


async def one_turn(client: httpx.AsyncClient, chat_id: str, t0: float) -> tuple[float, bool, str]:
    """Send the lesson's first learner message and read its stream to the end. Returns (seconds
    from the burst's start to `[DONE]`, whether it ended well, a problem's text)."""
    body = learner_turn(chat_id, "What is a derivative, and how do I compute one?")
    async with client.stream("POST", "/api/chat", json=body) as response:
        if response.status_code != 200:
            return time.monotonic() - t0, False, f"{response.status_code} {(await response.aread())[:200]!r}"
        done = error = False
        problem = ""
        async for line in response.aiter_lines():
            if line == "data: [DONE]":
                done = True
            elif line.startswith("data: {") and '"type":"error"' in line:
                error, problem = True, line[:200]
    return time.monotonic() - t0, done and not error, problem


async def one_import(client: httpx.AsyncClient, names: list[str]) -> tuple[int, str]:
    files = [("files", (name, (FIXTURES / name).read_bytes(), "text/markdown")) for name in names]
    answer = await client.post("/api/graph/import", files=files)
    return answer.status_code, answer.text[:200]


async def imports_ended(client: httpx.AsyncClient, t0: float) -> tuple[float, int, dict[str, int]]:
    """Wait until every row of the activity feed has ended. Returns (seconds from the burst's
    start, rows, rows by phase)."""
    while True:
        rows = (await client.get("/api/activity")).json()["rows"]
        if rows and all(r["phase"] in ("done", "error", "aborted") for r in rows):
            phases: dict[str, int] = {}
            for r in rows:
                phases[r["phase"]] = phases.get(r["phase"], 0) + 1
            return time.monotonic() - t0, len(rows), phases
        await asyncio.sleep(0.2)


async def burst(url: str) -> dict[str, Any]:
    limits = httpx.Limits(max_connections=TURNS + IMPORTS + 4, max_keepalive_connections=TURNS + IMPORTS + 4)
    async with httpx.AsyncClient(base_url=url, timeout=300, limits=limits) as client:
        chats = []
        for _ in range(TURNS):
            created = await client.post("/api/chats", json={})
            created.raise_for_status()
            chats.append(created.json()["id"])
        await asyncio.sleep(1.0)  # the creations' index writes settle before the burst
        t0 = time.monotonic()
        turns = [asyncio.create_task(one_turn(client, chat_id, t0)) for chat_id in chats]
        posted = [asyncio.create_task(one_import(client, names)) for names in IMPORT_SETS[:IMPORTS]]
        answers = await asyncio.gather(*posted)
        ended = await asyncio.gather(*turns)
        imports_s, rows, phases = await imports_ended(client, t0)
        t1 = time.monotonic()
    return {
        "t0": t0,
        "t1": t1,
        "turns_s": max(e[0] for e in ended),
        "turns_ok": sum(e[1] for e in ended),
        "problems": [e[2] for e in ended if not e[1]][:3],
        "imports": [status for status, _ in answers],
        "import_problems": [text for status, text in answers if status != 202],
        "imports_s": imports_s,
        "rows": rows,
        "phases": phases,
    }


def run_once(index: int) -> dict[str, Any]:
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="lh-burst-") as tmp, stub_process() as stub_url:
        data = Path(tmp) / "data"
        write_settings(data, scripted_slot(stub_url))
        module = "tests.bench.loop_probe" if os.environ.get(PROBE_ENV) else "server"
        server: ServerProcess = start_server(data, module=module, cwd=CHECKOUT)
        try:
            poller = subprocess.Popen(
                [sys.executable, "-m", "tests.bench.machine_room.bench_burst", "--poll", server.url],
                cwd=ROOT,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            assert poller.stdout is not None and poller.stdout.readline().strip() == "ready"
            time.sleep(1.0)  # a second of idle probes first
            result = asyncio.run(burst(server.url))
            time.sleep(0.5)
            lines = poller.communicate("stop\n", timeout=60)[0].splitlines()
        finally:
            server.stop()
    probes = [(float(a), float(b), float(c)) for a, b, c in (line.split() for line in lines if line.strip())]
    during = [ms for start, ms, _ in probes if result["t0"] <= start <= result["t1"]]
    idle = [ms for start, ms, _ in probes if start < result["t0"]]
    result["polls"] = [p for p in probes if result["t0"] <= p[0] <= result["t1"]]
    result.update(
        run=index,
        load_before=load_before,
        load_after=os.getloadavg()[0],
        probes=len(during),
        p50=statistics.median(during),
        p99=percentile(during, 0.99),
        max=max(during),
        over_100=sum(ms > 100 for ms in during),
        over_250=sum(ms > 250 for ms in during),
        idle_p50=statistics.median(idle) if idle else float("nan"),
    )
    return result


def report(r: dict[str, Any]) -> None:
    print(
        f"run {r['run']}: load average {r['load_before']:.2f} -> {r['load_after']:.2f} "
        f"({os.cpu_count()} cores); "
        f"/api/health during the burst: {r['probes']} probes, p50 {r['p50']:.1f} ms, "
        f"p99 {r['p99']:.1f} ms, max {r['max']:.1f} ms ({r['over_100']} > 100 ms, {r['over_250']} > 250 ms; "
        f"idle before p50 {r['idle_p50']:.1f} ms)"
    )
    print(
        f"  burst: {TURNS} turns done in {r['turns_s']:.2f} s ({r['turns_ok']}/{TURNS} ended well); "
        f"{IMPORTS} imports answered {r['imports']}, every feed row ended at {r['imports_s']:.2f} s "
        f"({r['rows']} rows: {r['phases']}); whole burst {r['t1'] - r['t0']:.2f} s"
    )
    for problem in r["problems"] + r["import_problems"]:
        print(f"  problem: {problem}")


def main(runs: int) -> None:
    print(
        f"burst: {TURNS} lesson turns (first token {FIRST_TOKEN_S} s, {REPLY_WORDS} words "
        f"{WORD_DELAY_S * 1000:.0f} ms apart) + {IMPORTS} notes imports (extraction answers after "
        f"{EXTRACT_S} s); /api/health every {PROBE_PERIOD_S * 1000:.0f} ms from a process of its own"
    )
    results = []
    for index in range(1, runs + 1):
        results.append(run_once(index))
        report(results[-1])
    if runs > 1:
        med = {
            k: statistics.median(r[k] for r in results) for k in ("p50", "p99", "max", "turns_s", "imports_s")
        }
        loads = [r["load_before"] for r in results]
        print(
            f"median of {runs} runs (load average {min(loads):.1f}-{max(loads):.1f}): /api/health p50 "
            f"{med['p50']:.1f} ms, p99 {med['p99']:.1f} ms, max {med['max']:.1f} ms; turns done "
            f"{med['turns_s']:.2f} s, imports ended {med['imports_s']:.2f} s "
            f"(targets: p99 <= 50 ms, max <= 250 ms)"
        )
    if os.environ.get(PROBE_ENV):
        print(f"the last run's server, from its loop probe ({PROBE_ENV}):")
        print_probe(Path(os.environ[PROBE_ENV]))
        print_pauses(Path(os.environ[PROBE_ENV]))
        body = json.loads(Path(os.environ[PROBE_ENV]).read_text())
        split_health(results[-1]["polls"], [(a, b) for a, b in body.get("health_s", [])])


def print_pauses(path: Path) -> None:
    """The probe's GC pauses by generation and the times its own thread could not run for
    > 50 ms (the whole process frozen: the GIL held, or no CPU), with the other threads' frames."""
    body = json.loads(path.read_text())
    for gen in (0, 1, 2):
        took = [ms for g, ms in body.get("gc_ms", []) if g == gen]
        if took:
            print(f"gc generation {gen}: {len(took)} runs, max {max(took):.1f} ms, {sum(took):.0f} ms all")
    gaps = body.get("gaps", [])
    print(f"probe thread kept off the GIL or a CPU > 50 ms: {len(gaps)} times; the longest:")
    for _, ms, frames in sorted(gaps, key=lambda g: -g[1])[:5]:
        print(f"  {ms} ms; other threads: {' | '.join(frames)[:600]}")


if __name__ == "__main__" and sys.argv[1:2] == ["--stub"]:
    stub_main(int(sys.argv[2]))
elif __name__ == "__main__" and sys.argv[1:2] == ["--poll"]:
    poll_main(sys.argv[2])
elif __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
