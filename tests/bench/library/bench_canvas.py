"""Benchmark: the home page's Canvas 2D graph while panning and zooming, at 1k, 10k and 50k view
nodes.

Run: `.venv/bin/python -m tests.bench.library.bench_canvas [--sizes 1000,10000,50000] [--seconds 3]`
(not part of the test suite). Needs Debian's `chromium` and a built frontend (`npm run build`).

For each size it writes a data dir whose `graph/nodes.jsonl`, `chains.jsonl`, `sources.jsonl` and
`positions.json` hold N view nodes (half propositions in sources of 100, half reasoning chains of
1-3 premises within a source; positions laid out as clusters on a sunflower spiral), starts the
real server on it (`python -m server`), opens `/` in headless Chromium (1280×800, the e2e flags:
no GPU, so Canvas 2D rasterizes in software) and waits until the renderer holds every node. Then,
for a few seconds each: a pan with the whole graph in view (the fitted camera: after a real mouse
press on the background, one mousemove per frame along a circle, handled by d3-zoom's own
listener), a wheel zoom in and out from there (one wheel event per frame), a node dragged in
circles (one pointermove per frame: nothing cached can be reused), and pans at mid
distance (k 0.3) and reading distance (k 1, labels on), the last once more drifting 300 px/s
over new ground (labels never drawn before keep coming on screen). Frame times are requestAnimationFrame
deltas collected in the page; `draw ms` is the renderer's own median draw time (JavaScript side;
Chromium rasterizes later, which the frame times include); `mode` is how the last frame drew the
scene (direct, or through the cached vector / pixel layer, see frontend/src/components/library/graph/draw.ts).
Screenshots go to /tmp/graph-shots/bench-<size>-<view>.png.

`--delta` (issue 17) measures what the page does when the graph changes under it instead of the
pans: a refresh that changes nothing (three `visibilitychange` refreshes: the page reads `since`
its version) and a merge of 20 propositions + 30 chains (appended to the ledgers with their
positions, as a settle leaves them, then a refresh): the main thread's long tasks (> 50 ms,
`PerformanceObserver`) from the refresh until the new nodes are drawn, the renderer's own
`setData` time and whether it patched (`stats().setData`, absent in bundles before it), frames
drawn, and whether a node on screen or the camera moved. `--server-root <tree>` serves another
checkout (a `git archive` of an older commit with its frontend built): an A/B of bundles.

`--math SHARE` (issue 28, item 6) gives that share of the propositions a name with LaTeX in it
(`Kernel $F(x)=P(X ...)$ 17`: permutations, fractions, sums, roots, norms): the canvas labels
typeset them (frontend/src/components/library/graph/mathLabels.ts); `math` is how many labels
the last frame drew typeset, and the pans print how many labels were typeset meanwhile and the
main-thread time that took.

`--per-source` changes the sessions' size (issue 17's bad input): `--sizes 20000 --per-source 1`
is 10,000 sessions of one node (their chains link neighbouring sessions), `--sizes 20000
--per-source 10000` one giant session of 10,000 nodes (a disc as dense as a source of 100).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from server.core.contracts.graph import ChainLine, NodeLine, Provenance, SourceLine
from server.core.library.graph import chain_id
from server.store.ledger import append_ledger
from tests.bench.common import run_line
from tests.e2e.conftest import CHROMIUM_ARGS
from tests.procs import ServerProcess, start_server

AT = "2026-11-30T00:00:00Z"
WORDS = [
    *("limit", "derivative", "integral", "series", "vector", "matrix", "kernel", "rank", "basis"),
    *("heap", "graph", "path", "tree", "cycle", "prime", "field", "group", "ring", "norm", "metric"),
    *("measure", "entropy", "signal", "sample", "variance", "bound", "greedy", "optimal", "flow"),
    *("cut", "proof", "lemma", "theorem", "axiom", "set", "map", "function", "order", "chain"),
]
VIEWPORT = {"width": 1280, "height": 800}
SHOTS = Path("/tmp/graph-shots")
PER_SOURCE = 100
GOLDEN = math.pi * (3 - math.sqrt(5))
MATH_SHARE = 0.0
FORMULAS = [
    r"\sigma^{-1}(321)\sigma(123)=(r23)",
    r"\frac{a+b}{2} \ge \sqrt{ab}",
    r"\sum_{k=1}^{n} k = \frac{n(n+1)}{2}",
    r"\lim_{h \to 0} \frac{f(x+h)-f(x)}{h}",
    r"\int_0^1 x^2\,dx",
    r"\mathbb{R}^n",
    r"\|Ax\|_2 \le \|A\|\,\|x\|_2",
    r"F(x)=P(X \le x)",
]


def write_graph(data_dir: Path, size: int, seed: int = 7) -> tuple[int, int]:
    """N view nodes: size//2 propositions and the rest chains. Returns (propositions, chains)."""
    rng = random.Random(seed)
    root = data_dir / "graph"
    root.mkdir(parents=True, exist_ok=True)
    n_props = size // 2
    n_sources = math.ceil(n_props / PER_SOURCE)
    positions: dict[str, list[float]] = {}
    nodes, sources = [], []
    for s in range(n_sources):
        src = f"src_{s:016x}"
        sources.append(
            SourceLine(id=src, kind="notes", title=f"notes/{WORDS[s % len(WORDS)]}-{s:03d}.md", at=AT)
        )
    for i in range(n_props):
        s = i // PER_SOURCE
        nid = f"n_{i:016x}"
        name = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 4))).capitalize() + f" {i}"
        if MATH_SHARE and (i * 7919 % 1000) < MATH_SHARE * 1000:
            head, _, tail = name.rpartition(" ")
            name = f"{head} ${FORMULAS[i % len(FORMULAS)]}$ {tail}"
        nodes.append(
            NodeLine(
                id=nid,
                name=name,
                statement=f"{name} holds in general.",
                provenance=Provenance(source=f"src_{s:016x}", job="job_bench"),
                at=AT,
            )
        )
        cx, cy = _cluster_center(s)
        spread = 105 * math.sqrt(PER_SOURCE / 100)  # as dense as a source of 100 whatever its size
        r, a = spread * math.sqrt(rng.random()), rng.random() * 2 * math.pi
        positions[nid] = [round(cx + r * math.cos(a), 2), round(cy + r * math.sin(a), 2)]
    chains: dict[str, ChainLine] = {}
    while len(chains) < size - n_props:
        c = rng.randrange(n_props)
        window = max(PER_SOURCE, 8)  # sessions of one node: chains across neighbouring sessions
        base = c - c % window
        top = min(base + window, n_props)
        pool = [i for i in range(base, top) if i != c]
        if not pool:
            c = rng.randrange(n_props)
            continue
        premises = sorted({f"n_{rng.choice(pool):016x}" for _ in range(rng.randint(1, 3))})
        conclusion = f"n_{c:016x}"
        cid = chain_id(premises, conclusion)
        if cid in chains:
            continue
        chains[cid] = ChainLine(
            id=cid,
            premises=premises,
            conclusion=conclusion,
            provenance=Provenance(source=f"src_{c // PER_SOURCE:016x}", job="job_bench"),
            at=AT,
        )
        members = [positions[m] for m in [*premises, conclusion]]
        positions[cid] = [
            round(sum(p[0] for p in members) / len(members) + rng.uniform(-8, 8), 2),
            round(sum(p[1] for p in members) / len(members) + rng.uniform(-8, 8), 2),
        ]
    append_ledger(root / "sources.jsonl", sources)
    append_ledger(root / "nodes.jsonl", nodes)
    append_ledger(root / "chains.jsonl", list(chains.values()))
    # the commit point: without a run line no line of job_bench counts (the page would stay empty)
    append_ledger(root / "sessions.jsonl", [run_line("src_bench", "job_bench", n_props, len(chains))])
    (root / "positions.json").write_text(json.dumps(positions))
    return n_props, len(chains)


def _cluster_center(s: int) -> tuple[float, float]:
    radius = 270 * math.sqrt(PER_SOURCE / 100) * math.sqrt(s + 0.5)
    return radius * math.cos(s * GOLDEN), radius * math.sin(s * GOLDEN)


PAN_IN_PAGE = """([x0, y0, seconds, drift_px]) => new Promise((resolve) => {
  // After a real mouse press on the background, one mousemove per frame (d3-zoom's own window
  // listener handles it, exactly as for a hand on the mouse) along a circle; rAF deltas recorded.
  const deltas = [];
  let first = 0;
  let last = 0;
  const step = (t) => {
    if (!first) first = t;
    if (last) deltas.push(t - last);
    last = t;
    const a = ((t - first) / 1500) * 2 * Math.PI; // one circle per 1.5 s
    const drift = (drift_px * (t - first)) / 1000; // and new ground, drift_px per second
    window.dispatchEvent(new MouseEvent('mousemove', {
      clientX: x0 + 160 * Math.sin(a) - drift, clientY: y0 + 110 * (1 - Math.cos(a)),
      buttons: 1, bubbles: true, cancelable: true, view: window,
    }));
    if (t - first < seconds * 1000) requestAnimationFrame(step);
    else resolve(deltas);
  };
  requestAnimationFrame(step);
})"""


ZOOM_IN_PAGE = """([x0, y0, seconds]) => new Promise((resolve) => {
  // Wheel events on the canvas, one per frame, zooming in for 0.75 s then out again (d3-zoom's own
  // wheel listener handles them): every frame is drawn at a new zoom, so nothing can be reused.
  const canvas = document.querySelector('[data-testid="graph-canvas"]');
  const deltas = [];
  let first = 0;
  let last = 0;
  const step = (t) => {
    if (!first) first = t;
    if (last) deltas.push(t - last);
    last = t;
    const phase = Math.floor((t - first) / 750) % 2;
    canvas.dispatchEvent(new WheelEvent('wheel', {
      deltaY: phase ? 15 : -15, clientX: x0, clientY: y0, bubbles: true, cancelable: true, view: window,
    }));
    if (t - first < seconds * 1000) requestAnimationFrame(step);
    else resolve(deltas);
  };
  requestAnimationFrame(step);
})"""


DRAG_IN_PAGE = """([x0, y0, seconds]) => new Promise((resolve) => {
  // After a real mouse press on a node, one pointermove per frame on the canvas (the renderer's
  // own drag handler): every frame moves a node, so every frame draws the scene anew.
  const canvas = document.querySelector('[data-testid="graph-canvas"]');
  const deltas = [];
  let first = 0;
  let last = 0;
  const step = (t) => {
    if (!first) first = t;
    if (last) deltas.push(t - last);
    last = t;
    const a = ((t - first) / 1500) * 2 * Math.PI;
    canvas.dispatchEvent(new PointerEvent('pointermove', {
      pointerId: 1, pointerType: 'mouse', isPrimary: true, buttons: 1,
      clientX: x0 + 60 * Math.sin(a), clientY: y0 + 40 * (1 - Math.cos(a)), bubbles: true, cancelable: true,
    }));
    if (t - first < seconds * 1000) requestAnimationFrame(step);
    else resolve(deltas);
  };
  requestAnimationFrame(step);
})"""


def node_spot(page: Any) -> tuple[float, float]:
    """The screen position of a proposition near the middle of the canvas."""
    box = page.get_by_test_id("graph-canvas").bounding_box()
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    for ring in range(0, 400, 3):
        for k in range(16):
            a = k * math.pi / 8
            x, y = cx + ring * math.cos(a), cy + ring * math.sin(a)
            hit = page.evaluate("([x, y]) => window.__lhGraph.nodeAt(x, y)", [x, y])
            if hit and hit.startswith("n_"):
                pos = page.evaluate("id => window.__lhGraph.nodeScreenPosition(id)", hit)
                return pos["x"], pos["y"]
    raise RuntimeError("no node near the middle")


def drag(page: Any, seconds: float) -> dict[str, float]:
    """Drag a node around for `seconds` (the node is dropped back near where it was)."""
    x0, y0 = node_spot(page)
    page.mouse.move(x0, y0)
    page.mouse.down()
    frames_before = page.evaluate("window.__lhGraph.stats().frames")
    deltas = page.evaluate(DRAG_IN_PAGE, [x0, y0, seconds])
    page.mouse.up()
    stats = page.evaluate("window.__lhGraph.stats()")
    deltas = sorted(deltas[1:])
    return {
        "median": statistics.median(deltas),
        "p95": deltas[min(len(deltas) - 1, int(len(deltas) * 0.95))],
        "fps": 1000 * len(deltas) / sum(deltas),
        "draw": stats["drawMs"] or 0.0,
        "draws": stats["frames"] - frames_before,
        "onScreen": stats["onScreen"],
        "mode": stats["mode"],
        "labels": stats["labels"],
        "math": stats.get("mathLabels", 0),
    }


def empty_spot(page: Any) -> tuple[float, float]:
    """A point on the canvas with no node under it (so a drag pans the camera)."""
    box = page.get_by_test_id("graph-canvas").bounding_box()
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    for ring in range(0, 400, 7):
        for k in range(12):
            a = k * math.pi / 6
            x, y = cx + ring * math.cos(a), cy + ring * math.sin(a)
            if page.evaluate("([x, y]) => window.__lhGraph.nodeAt(x, y)", [x, y]) is None:
                return x, y
    return cx, cy


def pan(page: Any, seconds: float, zooming: bool = False, drift: float = 0) -> dict[str, float]:
    """Drag the background in circles (or wheel-zoom in and out) for `seconds`, the circle
    drifting left by `drift` px per second (new labels keep coming on screen); frame-time figures
    from the page."""
    x0, y0 = empty_spot(page)
    page.mouse.move(x0, y0)
    frames_before = page.evaluate("window.__lhGraph.stats().frames")
    typeset_before = page.evaluate("window.__lhGraph.stats().typeset") or {"labels": 0, "ms": 0}
    zoom_before = page.evaluate("window.__lhGraph.stats().zoom")
    if zooming:
        deltas = page.evaluate(ZOOM_IN_PAGE, [x0, y0, seconds])
    else:
        page.mouse.down()
        deltas = page.evaluate(PAN_IN_PAGE, [x0, y0, seconds, drift])
        page.mouse.up()
    stats = page.evaluate("window.__lhGraph.stats()")
    assert zooming or stats["zoom"] == zoom_before  # a pan, not a zoom
    deltas = sorted(deltas[1:])  # the first delta may include the probe's own start
    p95 = deltas[min(len(deltas) - 1, int(len(deltas) * 0.95))]
    return {
        "median": statistics.median(deltas),
        "p95": p95,
        "fps": 1000 * len(deltas) / sum(deltas),
        "draw": stats["drawMs"] or 0.0,
        "draws": stats["frames"] - frames_before,
        "onScreen": stats["onScreen"],
        "mode": stats["mode"],
        "labels": stats["labels"],
        "math": stats.get("mathLabels", 0),
        "typeset": (stats.get("typeset") or {"labels": 0})["labels"] - typeset_before["labels"],
        "typeset_ms": (stats.get("typeset") or {"ms": 0})["ms"] - typeset_before["ms"],
    }


LONG_TASKS = """() => {
  window.__lhLong = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__lhLong.push(e.duration);
  }).observe({ type: 'longtask' });
}"""


def append_merge(data_dir: Path, k: int, props: int = 20, chains: int = 30) -> int:
    """A merge as the ledgers record it: `props` new propositions in a new source, `chains` chains
    among them and the graph's first propositions, with positions (what the settle writes).
    Returns the number of new view nodes."""
    rng = random.Random(1000 + k)
    root = data_dir / "graph"
    src, job = f"src_delta{k:011x}", f"job_delta_{k}"
    positions = json.loads((root / "positions.json").read_text())
    nodes = []
    for i in range(props):
        nid = f"n_d{k:03x}{i:012x}"
        nodes.append(
            NodeLine(
                id=nid,
                name=f"Merged {k}.{i}",
                statement=f"Merged {k}.{i} holds.",
                provenance=Provenance(source=src, job=job),
                at=AT,
            )
        )
        positions[nid] = [round(rng.uniform(-200, 200), 2), round(rng.uniform(-200, 200), 2)]
    lines = []
    while len(lines) < chains:
        premises = sorted({nodes[rng.randrange(props)].id, f"n_{rng.randrange(50):016x}"})
        conclusion = nodes[rng.randrange(props)].id
        if conclusion in premises:
            continue
        cid = chain_id(premises, conclusion)
        if any(c.id == cid for c in lines):
            continue
        lines.append(
            ChainLine(
                id=cid,
                premises=premises,
                conclusion=conclusion,
                provenance=Provenance(source=src, job=job),
                at=AT,
            )
        )
        positions[cid] = [round(rng.uniform(-200, 200), 2), round(rng.uniform(-200, 200), 2)]
    append_ledger(
        root / "sources.jsonl", [SourceLine(id=src, kind="notes", title=f"notes/merged-{k}.md", at=AT)]
    )
    append_ledger(root / "nodes.jsonl", nodes)
    append_ledger(root / "chains.jsonl", lines)
    append_ledger(root / "sessions.jsonl", [run_line(src, job, props, len(lines))])
    (root / "positions.json").write_text(json.dumps(positions))
    return props + len(lines)


def refresh_and_wait(page: Any, nodes: int, timeout_s: float = 120) -> dict[str, Any]:
    """Refresh the page's graph (a `visibilitychange`, as when the tab comes back) and wait until
    the renderer holds `nodes` nodes and the graph read has answered; then 1 s more."""
    before = page.evaluate("window.__lhGraph.stats()")
    page.evaluate("() => { window.__lhLong = []; }")
    t0 = time.monotonic()
    with page.expect_response(lambda r: "/api/graph?format=compact" in r.url, timeout=timeout_s * 1000):
        page.evaluate("() => document.dispatchEvent(new Event('visibilitychange'))")
    page.wait_for_function("n => window.__lhGraph.stats().nodes === n", arg=nodes, timeout=timeout_s * 1000)
    shown_s = time.monotonic() - t0
    page.wait_for_timeout(1000)
    after = page.evaluate("window.__lhGraph.stats()")
    long = page.evaluate("window.__lhLong")
    return {"before": before, "after": after, "long": long, "shown": shown_s}


def measure_delta(page: Any, data_dir: Path, size: int) -> list[tuple[str, dict[str, Any]]]:
    page.evaluate(LONG_TASKS)
    spot = node_spot(page)
    probe = page.evaluate("([x, y]) => window.__lhGraph.nodeAt(x, y)", list(spot))
    where = lambda: page.evaluate("id => window.__lhGraph.nodeScreenPosition(id)", probe)  # noqa: E731
    rows = []
    total = size
    for k in range(3):
        at = where()
        r = refresh_and_wait(page, total)
        r["moved"] = at != where() or r["before"]["zoom"] != r["after"]["zoom"]
        rows.append((f"refresh, no change ({k + 1})", r))
    for k in range(3):
        at = where()
        total += append_merge(data_dir, k)
        r = refresh_and_wait(page, total)
        r["moved"] = at != where() or r["before"]["zoom"] != r["after"]["zoom"]
        rows.append((f"merge of 20 props + 30 chains ({k + 1})", r))
    return rows


def start_in(root: Path, data_dir: Path) -> ServerProcess:
    """`start_server`, but the server (and its built bundle) of another checkout: its own package
    first on the path (`server_env` puts this checkout's there, which would serve this bundle)."""
    return start_server(data_dir, timeout=60, cwd=root, env={"PYTHONPATH": str(root)})


def measure(
    size: int, seconds: float, browser: Any, delta: bool = False, root: Path | None = None
) -> list[tuple[str, dict[str, Any]]]:
    with tempfile.TemporaryDirectory(prefix="lh-bench-canvas-") as tmp:
        data_dir = Path(tmp) / "data"
        write_graph(data_dir, size)
        server = start_in(root, data_dir) if root else start_server(data_dir, timeout=60)
        try:
            context = browser.new_context(viewport=VIEWPORT)
            page = context.new_page()
            t0 = time.monotonic()
            page.goto(server.url + "/")
            page.wait_for_function(
                "n => !!window.__lhGraph && window.__lhGraph.stats().nodes === n"
                " && window.__lhGraph.stats().settled",
                arg=size,
                timeout=180_000,
            )
            load_s = time.monotonic() - t0
            if delta:
                found = measure_delta(page, data_dir, size)
                context.close()
                return found
            rows = []
            zoom = page.evaluate("window.__lhGraph.stats().zoom")
            page.screenshot(path=str(SHOTS / f"bench-{size}-whole.png"))
            fitted = pan(page, seconds)
            fitted["load"] = load_s
            rows.append((f"pan, whole graph (k={zoom:.3f})", fitted))
            page.evaluate("window.__lhGraph.fit()")
            zoomed = pan(page, seconds, zooming=True)
            zoomed["load"] = load_s
            rows.append((f"zoom in/out from k={zoom:.3f}", zoomed))
            page.evaluate("window.__lhGraph.fit()")
            page.wait_for_timeout(300)
            dragged = drag(page, seconds)
            dragged["load"] = load_s
            rows.append((f"drag a node (k={zoom:.3f})", dragged))
            page.evaluate("window.__lhGraph.fit()")
            # zoom in at the middle of the graph: mid distance (k 0.3: dense, labels off), then
            # reading distance (k 1: labels on)
            mid = page.evaluate(
                """() => {
                  const c = document.querySelector('[data-testid="graph-canvas"]').getBoundingClientRect();
                  return [c.left + c.width / 2, c.top + c.height / 2];
                }"""
            )
            page.mouse.move(*mid)
            for target, name in ((0.3, "mid"), (1.0, "reading")):
                if page.evaluate("window.__lhGraph.stats().zoom") >= target:
                    continue
                for _ in range(60):
                    if page.evaluate("window.__lhGraph.stats().zoom") >= target:
                        break
                    page.mouse.wheel(0, -60)
                    page.wait_for_timeout(30)
                page.wait_for_timeout(200)
                page.screenshot(path=str(SHOTS / f"bench-{size}-{name}.png"))
                k = page.evaluate("window.__lhGraph.stats().zoom")
                row = pan(page, seconds)
                row["load"] = load_s
                rows.append((f"pan, {name} (k={k:.2f})", row))
                if name == "reading":
                    # new ground all the time: labels never seen before keep coming on screen
                    row = pan(page, seconds, drift=300)
                    row["load"] = load_s
                    rows.append((f"pan, {name}, new ground (k={k:.2f})", row))
                page.mouse.move(*mid)
            context.close()
            return rows
        finally:
            server.stop()


def main() -> None:
    global PER_SOURCE, MATH_SHARE
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--per-source", type=int, default=PER_SOURCE, help="propositions per source")
    parser.add_argument("--delta", action="store_true", help="refreshes and merges instead of pans")
    parser.add_argument("--server-root", type=Path, default=None, help="serve another checkout")
    parser.add_argument("--math", type=float, default=0.0, help="share of names with LaTeX")
    args = parser.parse_args()
    PER_SOURCE = args.per_source
    MATH_SHARE = args.math
    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        raise SystemExit("Debian's chromium is required: apt-get install -y chromium")
    results = []
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, headless=True)
        try:
            for size in (int(s) for s in args.sizes.split(",")):
                if args.delta:
                    for view, r in measure(size, args.seconds, browser, True, args.server_root):
                        set_data = r["after"].get("setData") or {}
                        before_calls = (r["before"].get("setData") or {}).get("calls", 0)
                        print(
                            f"  {size} {view}: shown after {r['shown']:.2f} s; long tasks {len(r['long'])}"
                            f" (sum {sum(r['long']):.0f} ms, max {max(r['long'], default=0):.0f} ms);"
                            f" frames {r['after']['frames'] - r['before']['frames']};"
                            f" setData calls {set_data.get('calls', 0) - before_calls},"
                            f" last {set_data.get('ms', '-')} ms"
                            f" patched {set_data.get('patched', '-')}; node or camera moved: {r['moved']}",
                            flush=True,
                        )
                    continue
                for view, r in measure(size, args.seconds, browser, root=args.server_root):
                    results.append((size, view, r))
                    typeset = (
                        f", typeset {r['typeset']} labels in {r['typeset_ms']:.0f} ms"
                        if r.get("typeset")
                        else ""
                    )
                    print(
                        f"  {size} {view}: median {r['median']:.1f} ms, p95 {r['p95']:.1f} ms, "
                        f"{r['fps']:.1f} fps, draw {r['draw']:.1f} ms{typeset}",
                        flush=True,
                    )
        finally:
            browser.close()
    print()
    print(
        f"{'view nodes':>10}  {'what':<28} {'load s':>6} {'frame ms median':>15} {'p95':>7} "
        f"{'fps':>6} {'draw ms':>8} {'draws':>6} {'on screen':>9} {'labels':>6} {'math':>5}  mode"
    )
    for size, view, r in results:
        print(
            f"{size:>10}  {view:<28} {r['load']:>6.1f} {r['median']:>15.1f} {r['p95']:>7.1f} "
            f"{r['fps']:>6.1f} {r['draw']:>8.1f} {int(r['draws']):>6} {int(r['onScreen']):>9} "
            f"{int(r['labels']):>6} {int(r['math']):>5}  {r['mode']}"
        )


if __name__ == "__main__":
    main()
