"""Benchmark (issue 16): a synthetic vault of 1,200 notes imported in one call into a real
`python -m server` process whose model is a scripted, instant OpenAI-compatible stub.

Run: `.venv/bin/python -m tests.bench.library.bench_vault [notes] [--every-line]`. Figures go to
docs/benchmarks.md. `--every-line` (issue 28): the small notes have 12 prose lines each and the
model makes every line a proposition (`bench_note_cost.every_line`); the server's CPU seconds
during the import and the nodes merged are printed too.
Prints: wall time (the POST until every row of the feed ended), the server's RSS when idle, its
peak during the import (sampled every 50 ms from /proc, and the kernel's VmHWM) and after the
jobs ended (at once and 5 s later), `/api/health` p50/p99/max while the import runs (polled every
50 ms), model tokens per source token (every request's messages and tool schemas plus every
answer's tool call, counted at the stub as characters / 4, the server's own estimate, over the
vault's files as read from disk), and the activity feed's size (rows, JSON bytes) during and at
the end. The vault: small maths notes with YAML front matter, wiki links and a callout; a few large
notes (≈ 40 KB); some templates (a few bytes each); two Excalidraw drawings.
"""

from __future__ import annotations

import bisect
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from server.core.tokens import estimate_tokens
from tests.bench.library import bench_note_cost as note_cost
from tests.livehttp import serve
from tests.procs import (
    ROOT,
    ServerProcess,
    scripted_slot,
    start_server,
    write_settings,
)
from tests.scripts.library import graph_reply
from tests.scripts.serving import over_http
from tests.stub_openai import Reply, create_stub

TOPICS = ["group", "ring", "field", "vector space", "metric space", "topology", "measure", "graph"]
WORDS = [
    *[
        "let",
        "be",
        "a",
        "an",
        "the",
        "every",
        "each",
        "finite",
        "compact",
        "continuous",
        "map",
        "subset",
        "element",
        "identity",
        "inverse",
    ],
    *[
        "order",
        "kernel",
        "image",
        "normal",
        "closed",
        "open",
        "bounded",
        "dense",
        "limit",
        "sequence",
        "converges",
        "uniformly",
    ],
]


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 18))).capitalize() + "."


def small_note(rng: random.Random, i: int) -> str:
    topic = rng.choice(TOPICS)
    body = [
        "---",
        f"title: Lemma {i} on {topic}s",
        f"aliases: [L{i}]",
        f"tags: [maths, {topic.replace(' ', '-')}]",
        "---",
        f"# Lemma {i}",
        "",
        f"> [!definition] {topic.capitalize()}",
        f"> {_sentence(rng)}",
        "",
        *[_sentence(rng) for _ in range(rng.randint(2, 6))],
        "",
        f"See [[Lemma {rng.randint(0, 1199)}]] and [[{topic}|the {topic}]].",
        "",
        "## Proof",
        "",
        *[_sentence(rng) for _ in range(rng.randint(1, 4))],
    ]
    return "\n".join(body) + "\n"


def large_note(rng: random.Random, i: int) -> str:
    parts = [f"# Lecture {i}: {rng.choice(TOPICS)}s\n"]
    for section in range(60):
        parts.append(f"\n## {section + 1}. {rng.choice(TOPICS).capitalize()}\n\n")
        parts.append(" ".join(_sentence(rng) for _ in range(6)) + "\n")
    return "".join(parts)


TEMPLATE = "---\ndate: {{date}}\ntags: []\n---\n# {{title}}\n"


def drawing() -> str:
    elements = [{"type": "line", "strokeWidth": 2, "points": [[i, i * 2]] * 8} for i in range(300)]
    return (
        "---\nexcalidraw-plugin: parsed\n---\n# Excalidraw Data\n```json\n"
        + json.dumps({"type": "excalidraw", "elements": elements})
        + "\n```\n"
    )


def write_vault(root: Path, notes: int, seed: int = 16, every_line: bool = False) -> tuple[int, int]:
    """Write the vault; returns (files, source tokens of their text as read from disk).
    `every_line`: the small notes are `bench_note_cost.note`'s (12 prose lines of a large
    vocabulary, every line a proposition for `bench_note_cost.every_line`)."""
    rng = random.Random(seed)
    vocab = note_cost.vocabulary(rng) if every_line else []
    texts: list[tuple[Path, str]] = []
    large, templates, drawings = 6, 12, 2
    small = notes - large - templates - drawings
    for i in range(small):
        text = note_cost.note(rng, vocab, i) if every_line else small_note(rng, i)
        texts.append((root / f"Semester {i % 4 + 1}" / f"Week {i % 13:02d}" / f"Lemma {i}.md", text))
    for i in range(large):
        texts.append((root / "Lectures" / f"Lecture {i}.md", large_note(rng, i)))
    for i in range(templates):
        texts.append((root / "Templates" / f"Template {i}.md", TEMPLATE[: 8 + i * 6]))
    for i in range(drawings):
        texts.append((root / "Drawings" / f"Drawing {i}.excalidraw.md", drawing()))
    tokens = 0
    for path, text in texts:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        tokens += estimate_tokens(text)
    return len(texts), tokens


class Meter:
    """Counts what the model is sent and answers (tokens by the server's estimate)."""

    def __init__(self, script: Callable[[dict[str, Any]], Reply] = graph_reply) -> None:
        self.script = script
        self.requests = 0
        self.sent = 0
        self.answered = 0
        self.kinds: dict[str, list[int]] = {}
        """Request sizes (tokens sent) by kind: `extract` (one note or chunk), `pack` (several
        notes in one call, decision 0023), `audit`."""
        self.lock = threading.Lock()

    def reply(self, body: dict[str, Any]) -> Reply:
        said = self.script(body)
        sent = estimate_tokens(json.dumps(body.get("messages", []), ensure_ascii=False))
        sent += estimate_tokens(json.dumps(body.get("tools", []), ensure_ascii=False))
        answered = estimate_tokens(json.dumps(said.tool[1])) if said.tool else estimate_tokens(said.text)
        text = json.dumps(body.get("messages", []))
        kind = (
            "audit"
            if '"find"' in json.dumps(body.get("tools", []))
            else "pack"
            if "<note id=" in text
            else "extract"
        )
        with self.lock:
            self.requests += 1
            self.sent += sent
            self.answered += answered
            self.kinds.setdefault(kind, []).append(sent)
        return said

    def sizes(self) -> str:
        """Requests by kind: count, median and max tokens sent."""
        return "; ".join(
            f"{kind} {len(v):,} (median {statistics.median(v):,.0f}, max {max(v):,} tokens sent)"
            for kind, v in sorted(self.kinds.items())
        )


def rss_mb(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of a process in MB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) / 1024
    return fields["VmRSS"], fields["VmHWM"]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


PIN_ENV = "LH_BENCH_PIN"
"""With this set (Linux, 2+ CPUs), the bench, its stub model and its pollers run on CPU 0 and the
server on the others: the server's figures then measure the server, not the bench competing with
it for the same cores (a desktop app is a process of its own on a multi-core machine)."""


def _pin_apart(pid: int) -> str:
    """Pin every thread of server `pid` to CPUs 1.. (its later threads inherit it); this process
    is on CPU 0 already. Returns a line for the report."""
    cpus = set(range(1, os.cpu_count() or 1))
    for task in Path(f"/proc/{pid}/task").iterdir():
        os.sched_setaffinity(int(task.name), cpus)
    return f"pinned: bench, stub model and pollers on CPU 0; server on CPU(s) {sorted(cpus)}"


def cpu_s(pid: int) -> float:
    """The CPU seconds (user + system, every thread) process `pid` has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main(notes: int = 1_200, every_line: bool = False) -> None:
    pinned = bool(os.environ.get(PIN_ENV)) and (os.cpu_count() or 1) >= 2
    if pinned:
        os.sched_setaffinity(0, {0})  # before any thread or child: they inherit it
    meter = Meter(over_http(note_cost.every_line) if every_line else graph_reply)
    stub = create_stub(meter.reply, delay_s=0.0)
    stub.state.requests = _Discard()  # the stub's own log of bodies is not kept (memory)
    with tempfile.TemporaryDirectory() as tmp, serve(stub) as stub_url:
        home = Path(tmp) / "home"
        vault = home / "Vault"
        files, source_tokens = write_vault(vault, notes, every_line=every_line)
        data = Path(tmp) / "data"
        write_settings(data, scripted_slot(stub_url))
        server = _start(data, {"LH_IMPORT_ROOTS": str(home)})
        pid = server.process.pid
        if pinned:
            print(_pin_apart(pid))
        try:
            with httpx.Client(base_url=server.url, timeout=120) as client:
                for _ in range(5):  # warm the routes
                    client.get("/api/health")
                    client.get("/api/activity")
                    client.get("/api/graph")
                time.sleep(1)
                cold, _ = rss_mb(pid)
                # one note imported first: the model client and the auditor's embedder are loaded
                # (they stay for the process's life), so "idle" is a server that has worked once
                warm = home / "Warm-up"
                warm.mkdir()
                (warm / "First.md").write_text("# First\n\nA group has an identity.\n")
                client.post("/api/graph/import", json={"path": str(warm)}).raise_for_status()
                while any(
                    r["phase"] not in ("done", "error") for r in client.get("/api/activity").json()["rows"]
                ):
                    time.sleep(0.2)
                time.sleep(1)
                idle, _ = rss_mb(pid)
                stop = threading.Event()
                samples: list[float] = []
                health: list[float] = []
                feed: list[tuple[int, int]] = []

                def sample_rss() -> None:
                    while not stop.is_set():
                        samples.append(rss_mb(pid)[0])
                        time.sleep(0.05)

                def poll_health() -> None:
                    with httpx.Client(base_url=server.url, timeout=30) as own:
                        while not stop.is_set():
                            start = time.perf_counter()
                            own.get("/api/health").raise_for_status()
                            health.append((time.perf_counter() - start) * 1000)
                            time.sleep(0.05)

                threads = [threading.Thread(target=sample_rss), threading.Thread(target=poll_health)]
                for t in threads:
                    t.start()
                # the same poll from a process of its own: free of this process's GIL, which the
                # stub model's answers and the samplers share with the poller above
                poller = subprocess.Popen(
                    [sys.executable, "-m", "tests.bench.library.bench_vault", "--poll", server.url],
                    cwd=ROOT,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    text=True,
                )
                assert poller.stdout is not None and poller.stdout.readline().strip() == "ready"
                start, cpu_start = time.perf_counter(), cpu_s(pid)
                answer = client.post("/api/graph/import", json={"path": str(vault)})
                posted = time.perf_counter() - start
                answer.raise_for_status()
                statuses: dict[str, int] = {}
                for f in answer.json()["files"]:
                    statuses[f["status"]] = statuses.get(f["status"], 0) + 1
                while True:
                    raw = client.get("/api/activity")
                    rows = raw.json()["rows"]
                    feed.append((len(rows), len(raw.content)))
                    if rows and all(r["phase"] in ("done", "error", "aborted") for r in rows):
                        break
                    time.sleep(0.5)
                wall, server_cpu = time.perf_counter() - start, cpu_s(pid) - cpu_start
                nodes_merged = len(client.get("/api/graph").json().get("nodes", []))
                stop.set()
                for t in threads:
                    t.join()
                lines = poller.communicate("stop\n", timeout=60)[0].splitlines()
                poller_sched = lines[0]
                timed = [(float(a), float(b), float(c)) for a, b, c in (line.split() for line in lines[1:])]
                alone = [ms for _, ms, _ in timed]
                after, hwm = rss_mb(pid)
                time.sleep(5)
                later, _ = rss_mb(pid)
                summary = next(
                    r for r in rows if r["kind"] == "import" and r["label"].startswith("Import of Vault")
                )
                end_bytes = len(raw.content)
        finally:
            server.stop()

    print(f"vault: {files:,} files, {source_tokens:,} source tokens (chars / 4); answer: {statuses}")
    print(f"import call answered in {posted:.2f} s; wall time to the last row ended: {wall:.1f} s")
    print(f"summary counts: {summary['counts']}")
    print(
        f"server CPU during the import: {server_cpu:.0f} s ({server_cpu * 1e6 / source_tokens:,.0f} ms per "
        f"1k source tokens); {nodes_merged:,} nodes in the graph at the end"
    )
    print(
        f"RSS cold {cold:.0f} MB; idle (after a 1-note import) {idle:.0f} MB; "
        f"peak {max(samples):.0f} MB sampled, {hwm:.0f} MB VmHWM"
    )
    print(f"RSS after: {after:.0f} MB at once, {later:.0f} MB 5 s later (idle + {later - idle:.0f} MB)")
    print(
        f"/api/health during ({len(health)} polls): p50 {statistics.median(health):.1f} ms, "
        f"p99 {percentile(health, 0.99):.1f} ms, max {max(health):.1f} ms (polled from the bench process)"
    )
    print(
        f"/api/health during ({len(alone)} polls from a process of its own): "
        f"p50 {statistics.median(alone):.1f} ms, p99 {percentile(alone, 0.99):.1f} ms, "
        f"max {max(alone):.1f} ms"
    )
    _, run_s, wait_s = poller_sched.split()
    print(f"the own-process poller: on a CPU {run_s} s, runnable but waiting for a CPU {wait_s} s")
    if os.environ.get(PROBE_ENV):
        body = json.loads(Path(os.environ[PROBE_ENV]).read_text())
        split_health(timed, [(a, b) for a, b in body.get("health_s", [])])
        gaps = body.get("gaps", [])
        for gen in (0, 1, 2):
            took = [ms for g, ms in body.get("gc_ms", []) if g == gen]
            if took:
                print(
                    f"gc generation {gen}: {len(took)} runs, max {max(took):.1f} ms, {sum(took):.0f} ms all"
                )
        if body.get("heap"):
            print(f"heap policy (server/services/machine_room/heap.py): {body['heap']}")
        print(
            f"probe thread kept off the GIL or a CPU > 50 ms (the server frozen?): {len(gaps)} times, "
            f"{sum(g[1] for g in gaps) / 1000:.1f} s in all; the longest, with the other threads' frames:"
        )
        for at, ms, frames in sorted(gaps, key=lambda g: -g[1])[:8]:
            print(f"  {ms} ms at {at - timed[0][0]:.1f} s:")
            for f in frames:
                print(f"      {f}")
    total = meter.sent + meter.answered
    print(
        f"model: {meter.requests:,} requests, {meter.sent:,} tokens sent + {meter.answered:,} answered; "
        f"{total / source_tokens:.2f} model tokens per source token"
    )
    print(f"model requests by kind: {meter.sizes()}")
    print(
        f"activity feed: at most {max(n for n, _ in feed)} rows / {max(b for _, b in feed) / 1000:.0f} KB "
        f"during; at the end {len(rows)} rows / {end_bytes / 1000:.0f} KB"
    )


PROBE_ENV = "LH_LOOP_PROBE_OUT"
"""With this set to a file path, the server runs under `tests/bench/loop_probe.py` (a sampling
loop-lag probe) and its figures are printed after the run."""


def _start(data: Path, env: dict[str, str]) -> ServerProcess:
    if not os.environ.get(PROBE_ENV):
        return start_server(data, env=env)
    return start_server(data, env=env, module="tests.bench.loop_probe")


def print_probe(path: Path) -> None:
    """The loop probe's lag percentiles and where the loop was while stalled."""
    body = json.loads(path.read_text())
    lags = body["lags_ms"]
    print(
        f"loop lag ({len(lags)} probes every 10 ms): p50 {statistics.median(lags):.1f} ms, "
        f"p99 {percentile(lags, 0.99):.1f} ms, max {max(lags):.0f} ms; "
        f"{sum(x > 100 for x in lags)} stalls > 100 ms, {body['stalls']} > 30 ms"
    )
    if body.get("loop_cpu_s") is not None:
        print(
            f"CPU over the server's life: event-loop thread {body['loop_cpu_s']:.1f} s, "
            f"whole process {body['process_cpu_s']:.1f} s"
        )
    sched = body.get("loop_sched")
    if sched:
        print(
            f"event-loop thread on a CPU {sched['run_s']:.1f} s, runnable but waiting for a CPU "
            f"{sched['wait_s']:.1f} s ({sched['slices']:,} timeslices); machine: {body.get('cpu_pressure')}"
        )
    print("stalled in (innermost frame: samples):")
    for name, n in list(body["leaf"].items())[:25]:
        print(f"  {n:5d}  {name}")
    print("stalled in (server stack: samples):")
    for name, n in list(body["stacks"].items())[:25]:
        print(f"  {n:5d}  {name}")
    print("the longest stalls (ms: where, samples):")
    for lag, where in body.get("worst", [])[:15]:
        print(f"  {lag:5d}  {where}")


class _Discard(list):  # type: ignore[type-arg]
    def append(self, _item: Any) -> None:
        return None


def poll(url: str) -> None:
    """`--poll URL`: GET /api/health every 50 ms until a line arrives on stdin; then print each
    poll's latency (ms), one a line."""
    stop = threading.Event()

    def wait_for_stop() -> None:
        sys.stdin.readline()
        stop.set()

    threading.Thread(target=wait_for_stop, daemon=True).start()
    took: list[tuple[float, float, float]] = []
    cpu = os.environ.get(POLLER_CPU_ENV)
    if cpu:
        os.sched_setaffinity(0, {int(cpu)})
    with httpx.Client(base_url=url, timeout=30) as client:
        client.get("/api/health").raise_for_status()  # connected: the import may start
        print("ready", flush=True)
        while not stop.is_set():
            waited = _runnable_s()
            start = time.monotonic()
            client.get("/api/health").raise_for_status()
            took.append((start, (time.monotonic() - start) * 1000, (_runnable_s() - waited) * 1000))
            time.sleep(0.05)
    run_ns, wait_ns = (int(x) for x in Path("/proc/self/schedstat").read_text().split()[:2])
    print(f"sched {run_ns / 1e9:.3f} {wait_ns / 1e9:.3f}")
    print("\n".join(f"{s:.6f} {x:.3f} {w:.3f}" for s, x, w in took))


def _runnable_s() -> float:
    """Seconds this thread has been runnable but not on a CPU (Linux schedstat)."""
    return int(Path("/proc/thread-self/schedstat").read_text().split()[1]) / 1e9


POLLER_CPU_ENV = "LH_POLLER_CPU"
"""With this set to a CPU number, the `--poll` process pins itself there (e.g. 1: beside the server
rather than beside the stub model on CPU 0 under `LH_BENCH_PIN`)."""


def split_health(polls: list[tuple[float, float, float]], server: list[tuple[float, float]]) -> None:
    """Print where the slowest 1 % of the own-process polls spent their time: before the server's
    app was called (client, socket, the loop reading the request), in the app (called → the
    response handed to the transport), after (the loop writing it, the socket, the client)."""
    ends = sorted(server)
    starts = [a for a, _ in ends]
    rows = []
    t0 = polls[0][0] if polls else 0.0
    for start, ms, starved in polls:
        i = bisect.bisect_left(starts, start)
        if i < len(ends) and ends[i][0] <= start + ms / 1000:
            called, ended = ends[i]
            before, inside = (called - start) * 1000, (ended - called) * 1000
            rows.append((ms, before, inside, ms - before - inside, starved, start - t0))
    if not rows:
        print("health split: no poll matched a server-side record")
        return
    rows.sort()
    slow = rows[-max(1, len(rows) // 100) :]
    for name, part in (("all", rows), ("slowest 1 %", slow)):
        before, inside, after = (statistics.median(r[k] for r in part) for k in (1, 2, 3))
        print(
            f"health split, {name} ({len(part)} polls matched): medians before the app {before:.1f} ms, "
            f"in the app {inside:.2f} ms, after {after:.1f} ms; max in it {max(r[2] for r in part):.1f} ms"
        )
    print(
        "slowest polls (total: before / in app / after, ms; of which the poller was runnable without "
        "a CPU; s into the run):"
    )
    for r in rows[-12:]:
        print(
            f"  {r[0]:6.1f}: {r[1]:6.1f} / {r[2]:5.2f} / {r[3]:6.1f}; starved {r[4]:6.1f}; at {r[5]:6.1f} s"
        )


if __name__ == "__main__" and sys.argv[1:2] == ["--poll"]:
    poll(sys.argv[2])
elif __name__ == "__main__":
    counts = [a for a in sys.argv[1:] if not a.startswith("--")]
    main(int(counts[0]) if counts else 1_200, every_line="--every-line" in sys.argv)
    if os.environ.get(PROBE_ENV):
        print_probe(Path(os.environ[PROBE_ENV]))
