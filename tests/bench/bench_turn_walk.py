"""Benchmark (issue 27): how one lesson turn walks the server, and how often each streamed chunk
is JSON-encoded and decoded on its way to the browser. Counts, not times: the figures do not
depend on the machine's load. Figures go to docs/benchmarks.md.

Run: `.venv/bin/python -m tests.bench.bench_turn_walk` (prints the figures; writes nothing but
a temporary data dir, removed at the end).

The turn: one ordinary streamed lesson turn, a learner's message in a lesson already in its teach
phase (probed, plan authored), `POST /api/chat` to the whole app in-process (httpx over ASGI, as
tests/bench/bench_long_lesson.py does). The model is a scripted pydantic-ai FunctionModel that
streams 3 text deltas, calls the teacher's `plan_teach` tool once, and after the tool's return
streams 3 more text deltas. One warm-up turn runs first (not counted); then three turns are traced
and the counts most of them share are reported (with what the odd one counted differently: the
chat store folds its append-only log into a fresh snapshot every few saves).

What is counted, from the request until its response body has ended (all threads: the hook is
installed for every thread the app starts, `threading.setprofile`, and for the event loop's
thread during the turn, `sys.setprofile`; calls only, no line tracing):

- modules visited: distinct `server.*` modules (by the function's module `__name__`) one of whose
  functions ran in the turn.
- re-entries: fresh calls into a `server.*` module from a frame of a different module (any module:
  another server module, a library calling back, the event loop starting a task). The resumption of
  a generator or coroutine already running (every `async for` step, every `await` that suspended)
  is not a re-entry; a generator's or coroutine's first run is. Reported as a total, the top 5
  modules, and the resumptions into server modules from another module on a line of their own.
- encodes: calls of `json.dumps`/`json.dump`, `orjson.dumps`, pydantic-core `to_json` (module
  function, and `SchemaSerializer.to_json`: `model_dump_json`, `TypeAdapter.dump_json`, pydantic-ai's
  `chunk.encode`). decodes: `json.loads`/`json.load`, `orjson.loads`, pydantic-core `from_json` and
  `SchemaValidator.validate_json` (`model_validate_json`, `TypeAdapter.validate_json`). Each counted
  once where it happens (the wrappers are not counted again). All such calls in the turn are
  counted and divided by the number of JSON data chunks of the response's SSE stream (the
  `data: [DONE]` terminator is not one); each call is also attributed to the nearest `server.*`
  module on its stack, which shows which of them lie on the streaming path and which are the
  record's saves.

Portable across the layout of issue 27: it builds the app through `server.api.app.create_app`,
`server.config.DataPaths` and the services builder (`server.services.bootstrap.build_services`,
else `server.services.container.build_services`), and uses no test helper but `FakeSecrets`
(`tests.fakes`, optional).
"""

from __future__ import annotations

import asyncio
import dis
import importlib
import json
import sys
import tempfile
import threading
import types
from collections import Counter
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson
import pydantic_core
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from server.api.app import create_app
from server.config import DataPaths

URL = "http://127.0.0.1:8765"
JSON_TYPE = {"content-type": "application/json"}
"""The request's body is encoded before the trace starts (the client's encode is not counted)."""
TRACED = 3
"""Turns traced after the warm-up; the counts most of them share are reported."""
COMPATIBLE_SLOT = {"provider": "openai-compatible", "model": "scripted", "baseUrl": "http://127.0.0.1:9/v1"}
FIRST_TEXT = ["Good question. ", "A derivative measures ", "how fast a function changes. "]
AFTER_TOOL = ["Take x squared: ", "its slope at x is 2x, ", "by the power rule."]
ASKED = "What is a derivative, really?"
AT_LENGTH = "Tell me at length."
"""A learner's message with this asks the scripted teacher for `EXTRA` more deltas in each text part."""
EXTRA = 10
PLAN = {
    "title": "Derivatives",
    "mermaid": "graph TD\n limits[Limits] --> deriv[Derivative]\n deriv --> power[Power rule]",
}
PLAN_TREE = {
    "title": "Derivatives",
    "nodes": [
        {"id": "limits", "label": "Limits"},
        {"id": "deriv", "label": "Derivative"},
        {"id": "power", "label": "Power rule"},
    ],
    "edges": [["limits", "deriv"], ["deriv", "power"]],
}
"""`plan_init`'s result for PLAN (the plan the teacher authored)."""
ASSESSMENT = {
    "topic": "derivatives",
    "goal": "understand derivatives",
    "floor": "arithmetic",
    "ceiling": "limits",
    "level": "beginner",
}


def _first_of(candidates: list[tuple[str, str]]) -> Any:
    """The first importable `module:attribute` of `candidates` (the layout may move modules)."""
    problems = []
    for module, name in candidates:
        try:
            return getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError) as exc:
            problems.append(f"{module}.{name}: {exc}")
    raise ImportError("none of these could be imported: " + "; ".join(problems))


build_services = _first_of(
    [("server.services.bootstrap", "build_services"), ("server.services.container", "build_services")]
)


def _secrets() -> Any:
    try:
        return _first_of([("tests.fakes", "FakeSecrets")])()
    except ImportError:
        return None  # the app's own default key store (a file in the data dir without a keychain)


# -- the scripted model ----------------------------------------------------------------------------


def _tool_returned(messages: list[ModelMessage], tool: str) -> bool:
    last = messages[-1]
    return isinstance(last, ModelRequest) and any(
        isinstance(p, ToolReturnPart) and p.tool_name == tool for p in last.parts
    )


def _asked_at_length(messages: list[ModelMessage]) -> bool:
    """Whether the learner's latest message asks for the long reply (`AT_LENGTH`)."""
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            prompts = [p for p in message.parts if isinstance(p, UserPromptPart)]
            if prompts:
                return any(AT_LENGTH in str(p.content) for p in prompts)
    return False


async def _stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    """The teacher: 3 text deltas and a `plan_teach` call; after its return, 3 text deltas (each
    part `EXTRA` deltas longer when the learner asked `AT_LENGTH`). Any other agent (a side
    channel: naming, summary) gets a one-line answer."""
    if "plan_teach" not in {t.name for t in info.function_tools}:
        yield "Derivatives"
        return
    extra = [f"more {n}. " for n in range(EXTRA)] if _asked_at_length(messages) else []
    if _tool_returned(messages, "plan_teach"):
        for delta in [*AFTER_TOOL, *extra]:
            yield delta
        return
    for delta in [*FIRST_TEXT, *extra]:
        yield delta
    call_id = f"call_teach_{len(messages)}"
    yield {1: DeltaToolCall(name="plan_teach", json_args='{"node": "deriv"}', tool_call_id=call_id)}


async def _whole(_: list[ModelMessage], __: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart("We met the derivative as a rate of change.")])


def _teaching_record() -> list[dict[str, Any]]:
    """A lesson in its teach phase (the UI message shape the browser sends and the record keeps)."""
    return [
        {"id": "u0", "role": "user", "parts": [{"type": "text", "text": "Teach me derivatives"}]},
        {
            "id": "a0",
            "role": "assistant",
            "parts": [
                {
                    "type": "tool-probe_done",
                    "toolCallId": "call_probe_done",
                    "state": "output-available",
                    "input": ASSESSMENT,
                    "output": "Final result processed.",
                },
                {
                    "type": "tool-plan_init",
                    "toolCallId": "call_plan",
                    "state": "output-available",
                    "input": PLAN,
                    "output": {"ok": True, "plan": PLAN_TREE},
                },
                {"type": "text", "text": "Let us begin.", "state": "done"},
            ],
        },
    ]


# -- the tracer ------------------------------------------------------------------------------------

_GENERATOR_LIKE = 0x20 | 0x80 | 0x200  # CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR
_RESUME = dis.opmap.get("RESUME")
_ENCODE_CODES = {json.dumps.__code__: "json.dumps", json.dump.__code__: "json.dump"}
_DECODE_CODES = {json.loads.__code__: "json.loads", json.load.__code__: "json.load"}
_C_FUNCTIONS = {
    id(orjson.dumps): ("encode", "orjson.dumps"),
    id(orjson.loads): ("decode", "orjson.loads"),
    id(pydantic_core.to_json): ("encode", "pydantic_core.to_json"),
    id(pydantic_core.from_json): ("decode", "pydantic_core.from_json"),
}
_C_METHODS = {
    (pydantic_core.SchemaSerializer, "to_json"): ("encode", "SchemaSerializer.to_json"),
    (pydantic_core.SchemaValidator, "validate_json"): ("decode", "SchemaValidator.validate_json"),
}


def _fresh(frame: types.FrameType) -> bool:
    """Whether a 'call' event starts the frame (not a generator's or coroutine's resumption)."""
    code = frame.f_code
    if not code.co_flags & _GENERATOR_LIKE or _RESUME is None:
        return True
    at = frame.f_lasti
    raw = code.co_code
    if 0 <= at < len(raw) - 1 and raw[at] == _RESUME:
        return raw[at + 1] & 3 == 0  # RESUME's oparg: 0 at the start, 1-3 after a yield / await
    return at <= 0


def _module(frame: types.FrameType | None) -> str:
    return "" if frame is None else frame.f_globals.get("__name__", "")


def _server_module(frame: types.FrameType | None) -> str:
    """The nearest `server.*` module on the stack from `frame` outwards ("(outside server)")."""
    while frame is not None:
        name = str(frame.f_globals.get("__name__", ""))
        if name.startswith("server."):
            return name
        frame = frame.f_back
    return "(outside server)"


@dataclass
class Counts:
    visited: set[str] = field(default_factory=set)
    reentries: Counter[str] = field(default_factory=Counter)
    resumes: Counter[str] = field(default_factory=Counter)
    encodes: Counter[tuple[str, str]] = field(default_factory=Counter)
    decodes: Counter[tuple[str, str]] = field(default_factory=Counter)

    def merge(self, other: Counts) -> None:
        self.visited |= other.visited
        self.reentries += other.reentries
        self.resumes += other.resumes
        self.encodes += other.encodes
        self.decodes += other.decodes


class Tracer:
    """Call events of every thread while `on` (one `Counts` per thread, merged by `stop`)."""

    def __init__(self) -> None:
        self.on = False
        self._per_thread: dict[int, Counts] = {}

    def hook(self, frame: types.FrameType, event: str, arg: Any) -> None:
        if not self.on:
            return
        counts = self._per_thread.get(threading.get_ident())
        if counts is None:
            counts = self._per_thread.setdefault(threading.get_ident(), Counts())
        if event == "call":
            code = frame.f_code
            name = frame.f_globals.get("__name__", "")
            if name.startswith("server."):
                counts.visited.add(name)
                if _module(frame.f_back) != name:
                    if _fresh(frame):
                        counts.reentries[name] += 1
                    else:
                        counts.resumes[name] += 1
            elif code in _ENCODE_CODES:
                counts.encodes[(_ENCODE_CODES[code], _server_module(frame.f_back))] += 1
            elif code in _DECODE_CODES:
                counts.decodes[(_DECODE_CODES[code], _server_module(frame.f_back))] += 1
        elif event == "c_call":
            known = _C_FUNCTIONS.get(id(arg))
            if known is None:
                owner = getattr(arg, "__self__", None)
                if owner is None:
                    return
                known = _C_METHODS.get((type(owner), getattr(arg, "__name__", "")))
                if known is None:
                    return
            kind, label = known
            if kind == "encode":
                counts.encodes[(label, _server_module(frame))] += 1
            else:
                counts.decodes[(label, _server_module(frame))] += 1

    def start(self) -> None:
        self._per_thread = {}
        self.on = True
        sys.setprofile(self.hook)

    def visited(self) -> set[str]:
        """The server modules visited so far."""
        return set().union(*(c.visited for c in list(self._per_thread.values())))

    def stop(self) -> Counts:
        sys.setprofile(None)
        self.on = False
        total = Counts()
        for counts in list(self._per_thread.values()):
            total.merge(counts)
        return total


# -- the turn --------------------------------------------------------------------------------------


def _said(text: str, mid: str, chat_id: str) -> bytes:
    message = {"id": mid, "role": "user", "parts": [{"type": "text", "text": text}]}
    return json.dumps({"id": chat_id, "trigger": "submit-message", "messages": [message]}).encode()


def _data_chunks(stream: str) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in stream.splitlines() if line.startswith("data: {")]


async def _settle(services: Any) -> None:
    """Between turns: the turn's background work ends (the running summary, side channels)."""
    context = getattr(services, "context", None)
    refreshing = getattr(context, "refreshing", None)
    if isinstance(refreshing, dict):
        await asyncio.gather(*refreshing.values(), return_exceptions=True)
    await asyncio.sleep(0.3)


async def _lesson_in_teach_phase(client: httpx.AsyncClient, paths: DataPaths) -> str:
    """A new lesson whose record holds `_teaching_record()` (written into its file, as
    tests/bench/bench_long_lesson.py does). Returns its id."""
    created = await client.post("/api/chats", json={})
    assert created.status_code in (200, 201), created.text
    chat_id = str(created.json()["id"])
    path = paths.chats / f"{chat_id}.json"
    record = json.loads(path.read_text())
    record["messages"] = _teaching_record()
    record["title"] = "Derivatives"
    path.write_text(json.dumps(record))
    return chat_id


async def _tasks_end(before: set[asyncio.Task[Any]], wait_s: float = 10.0) -> None:
    """The tasks the turn started (those not in `before`: its settled side channels, which may
    run work in threads) end, or `wait_s` seconds pass (a long-lived task the turn started)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait_s
    pending: set[asyncio.Task[Any]] = set()
    while (left := deadline - loop.time()) > 0:
        pending = {t for t in asyncio.all_tasks() if t not in before and not t.done()}
        pending -= {asyncio.current_task()}
        if not pending:
            return
        await asyncio.wait(pending, timeout=left)
    print(f"note: tasks started by the turn still ran after {wait_s:.0f} s: {sorted(map(repr, pending))}")


@dataclass
class Turn:
    counts: Counts
    chunks: list[dict[str, Any]]
    by_response: set[str]
    """The server modules visited by the time the response's body had ended."""


async def _turns(data: Path, tracer: Tracer, asked: list[str]) -> list[Turn]:
    """One traced turn per text of `asked`, each the second turn of a new lesson in its teach
    phase (the first warms it up, untraced), all in one app on the data dir `data`."""
    data.mkdir(parents=True, exist_ok=True)
    settings = {"models": {"strong": COMPATIBLE_SLOT}, "graph": {"extractionChunkTokens": 100_000_000}}
    (data / "settings.json").write_text(json.dumps(settings))
    services = build_services(
        DataPaths(data),
        offline=False,
        secrets=_secrets(),
        model_factory=lambda resolved, key, url: FunctionModel(function=_whole, stream_function=_stream),
    )
    out = []
    try:
        app = create_app(services)
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url=URL, timeout=120
        ) as client:
            for text in asked:
                chat_id = await _lesson_in_teach_phase(client, DataPaths(data))
                for n in range(2):  # the lesson's first turn (warm-up, not traced), then the traced one
                    body = _said(ASKED if n == 0 else text, f"new{n}", chat_id)
                    before = asyncio.all_tasks()
                    if n:
                        tracer.start()
                    try:
                        response = await client.post("/api/chat", content=body, headers=JSON_TYPE)
                        by_response = tracer.visited()
                        await _tasks_end(before)
                    finally:
                        counts = tracer.stop() if n else None
                    assert response.status_code == 200, response.text
                    chunks = _data_chunks(response.text)
                    kinds = [c.get("type") for c in chunks]
                    assert "error" not in kinds and "finish" in kinds, response.text
                    assert "tool-output-available" in kinds, response.text  # plan_teach returned
                    if counts is not None:
                        out.append(Turn(counts, chunks, by_response))
                    await _settle(services)
    finally:
        await services.shutdown()
    return out


def _ratio(total: int, chunks: int) -> str:
    return f"{total / chunks:.2f} per chunk ({total} / {chunks})"


def report(turn: Turn, alike: str, longer: Turn, out: Callable[[str], None] = print) -> None:
    """Print the figures of `turn` (and the per-extra-chunk figures from `longer`)."""
    counts, chunks = turn.counts, len(turn.chunks)
    kinds = Counter(str(c.get("type")) for c in turn.chunks)
    out("bench_turn_walk: one streamed lesson turn, POST /api/chat in-process over ASGI; scripted model:")
    out("  3 text deltas, a plan_teach call, 3 text deltas after its return; counts from the request")
    out("  until the tasks it started have ended (all threads); the lesson's warm-up turn not counted")
    out(f"traced turns with these very counts: {alike}")
    early = len(turn.by_response)
    out(f"server modules visited: {len(counts.visited)} (by the end of the response body: {early})")
    total = sum(counts.reentries.values())
    out(f"re-entries (fresh calls into a server module from another module's frame): {total}")
    out("  top 5 modules by re-entries:")
    for name, n in sorted(counts.reentries.items(), key=lambda kv: (-kv[1], kv[0]))[:5]:
        out(f"    {n:5d}  {name}")
    resumed = sum(counts.resumes.values())
    out(f"  (resumptions of a running server generator/coroutine, not counted above: {resumed})")
    shape = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
    out(f"SSE JSON data chunks in the response: {chunks} ({shape}; data: [DONE] not counted)")
    encodes, decodes = sum(counts.encodes.values()), sum(counts.decodes.values())
    out("JSON calls per streamed chunk:")
    whole = f"encodes {_ratio(encodes, chunks)}, decodes {_ratio(decodes, chunks)}"
    out(f"  all in the turn / its chunks: {whole}")
    more = len(longer.chunks) - chunks
    more_enc = sum(longer.counts.encodes.values()) - encodes
    more_dec = sum(longer.counts.decodes.values()) - decodes
    out(
        f"  per extra streamed chunk (the same turn with {2 * EXTRA} more text deltas, {len(longer.chunks)} "
        f"chunks): encodes {_ratio(more_enc, more)}, decodes {_ratio(more_dec, more)}"
    )
    for title, table in (("encodes", counts.encodes), ("decodes", counts.decodes)):
        out(f"  {title} by function and nearest server module on the stack:")
        for (label, module), n in sorted(table.items(), key=lambda kv: (-kv[1], kv[0])):
            out(f"    {n:5d}  {label:<30} {module}")
    out("server modules visited (* after the response body ended), with their re-entries:")
    for name in sorted(counts.visited):
        late = " " if name in turn.by_response else "*"
        out(f"    {counts.reentries.get(name, 0):5d} {late} {name}")


def _signature(turn: Turn) -> tuple[Any, ...]:
    c = turn.counts
    frozen = (frozenset(c.visited), *(frozenset(t.items()) for t in (c.reentries, c.encodes, c.decodes)))
    return (*frozen, len(turn.chunks), frozenset(turn.by_response))


def _differences(a: Turn, b: Turn) -> str:
    """What `b` counted differently from `a`, in a few words."""
    out = [f"visited {name}" for name in sorted(b.counts.visited - a.counts.visited)]
    out += [f"not visited {name}" for name in sorted(a.counts.visited - b.counts.visited)]
    out += [f"visited by the response's end {name}" for name in sorted(b.by_response ^ a.by_response)]
    tables: list[tuple[str, Counter[Any], Counter[Any]]] = [
        ("re-entries", a.counts.reentries, b.counts.reentries),
        ("encodes", a.counts.encodes, b.counts.encodes),
        ("decodes", a.counts.decodes, b.counts.decodes),
    ]
    for title, x, y in tables:
        for key in sorted(set(x) | set(y), key=str):
            if x[key] != y[key]:
                label = key if isinstance(key, str) else " in ".join(key)
                out.append(f"{title} {label} {x[key]} -> {y[key]}")
    if len(a.chunks) != len(b.chunks):
        out.append(f"chunks {len(a.chunks)} -> {len(b.chunks)}")
    return "; ".join(out)


def main() -> None:
    tracer = Tracer()
    threading.setprofile(tracer.hook)  # every thread started from now on (worker pools included)
    try:
        with tempfile.TemporaryDirectory(prefix="lh-bench-walk-") as tmp:
            asked = [ASKED] * TRACED + [f"{ASKED} {AT_LENGTH}"]
            *turns, longer = asyncio.run(_turns(Path(tmp) / "data", tracer, asked))
    finally:
        threading.setprofile(None)  # type: ignore[arg-type,unused-ignore]
    signatures = [_signature(t) for t in turns]
    common = Counter(signatures).most_common(1)[0][0]
    chosen = turns[signatures.index(common)]
    alike = f"{signatures.count(common)} of {len(turns)}"
    odd = [f"turn {n + 1}: {_differences(chosen, t)}" for n, t in enumerate(turns) if signatures[n] != common]
    report(chosen, alike + (f" (the others differ: {' | '.join(odd)})" if odd else ""), longer)


if __name__ == "__main__":
    main()
