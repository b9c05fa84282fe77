"""Benchmark (issue 28, items 1 and 9): the CPU cost of reading a note as a note and cutting it into
parts, per MB, on the shared fixtures and on inputs shaped to make a careless reader quadratic.

Run: `.venv/bin/python -m tests.bench.library.bench_note_text [repeats]`. In-process, pure code
(`prepare_note` then `chunk_note` at the default 8,192-token budget and at the 500-token floor).
Prints, per input: its size, the best of `repeats` runs in ms, and µs per KB; each shaped input at
size n and 4n, with the ratio of the two times (≈ 4 when linear, ≈ 16 when quadratic). The shaped
inputs: lines that open a JSON array and never close (`[` lines: the JSON scan's cap), link-led
lines (`[[A]] is ...`), pretty-printed JSON under a title (refused), `$$` formulas over two lines,
`\\[` openers with one `\\]` at the end, and one unclosed code fence.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable

from server.core.library.coverage import DEFAULT_CHUNK_TOKENS, TOKEN_FLOOR
from server.core.library.note_text import prepare_note
from server.core.library.notes import NoteRefused, chunk_note, decode_note
from tests.shared import NOTES


def _read(name: str, text: str) -> str:
    """What the import does to one file's text: prepare, then chunk at both budgets."""
    try:
        prose = prepare_note(name, text).prose
    except NoteRefused:
        return "refused"
    chunk_note(prose, DEFAULT_CHUNK_TOKENS)
    chunk_note(prose, TOKEN_FLOOR)
    return "read"


def _best(run: Callable[[], str], repeats: int) -> tuple[float, str]:
    best, outcome = float("inf"), ""
    for _ in range(repeats):
        start = time.perf_counter()
        outcome = run()
        best = min(best, time.perf_counter() - start)
    return best, outcome


SHAPES: dict[str, Callable[[int], str]] = {
    "unclosed [ lines": lambda n: "[\n" * n + "prose\n",
    "link-led lines": lambda n: "# Groups\n" + "[[Group]] is a set with an operation.\n" * n,
    "JSON under a title": lambda n: (
        "# Sketch\n" + json.dumps([{"x": i, "y": [i, i]} for i in range(n // 4)], indent=2)
    ),
    "$$ formulas": lambda n: "Text.\n" + "$$\na^2 + b^2 = c^2\n$$\n" * (n // 3),
    "\\[ openers": lambda n: "\\[ x\n" * n + "\\]\n",
    "unclosed fence": lambda n: "Intro.\n```python\n" + "x = 1\n" * n,
}


def run(repeats: int = 3) -> None:
    print(f"{'input':<40} {'KB':>8} {'ms':>9} {'µs/KB':>8}  outcome")
    for path in [*sorted(NOTES.glob("*.md"))]:
        text = decode_note(path.name, path.read_bytes())
        seconds, outcome = _best(lambda t=text, n=path.name: _read(n, t), repeats)  # type: ignore[misc]
        kb = len(text.encode()) / 1024
        print(f"{path.name[:40]:<40} {kb:>8.1f} {seconds * 1e3:>9.2f} {seconds * 1e6 / kb:>8.1f}  {outcome}")
    for shape, make in SHAPES.items():
        times = []
        for n in (20_000, 80_000):
            text = make(n)
            seconds, outcome = _best(lambda t=text: _read("shape.md", t), repeats)  # type: ignore[misc]
            times.append(seconds)
            kb = len(text.encode()) / 1024
            label = f"{shape} (n={n:,})"
            print(f"{label:<40} {kb:>8.1f} {seconds * 1e3:>9.2f} {seconds * 1e6 / kb:>8.1f}  {outcome}")
        print(f"{'':<40} 4× the lines: {times[1] / times[0]:.1f}× the time")


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
