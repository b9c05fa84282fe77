"""Benchmark: schema-valid tool calls and seconds per turn of the offline model (issue 9).

Run: `.venv/bin/python -m tests.bench.machine_room.bench_offline_tools
[--reps N] [--variants a,b] [--gguf PATH]`
(prints a table; figures go to docs/benchmarks.md). Not part of the test suite: nothing is asserted.

A real llama.cpp server child (`OfflineModelServer`, the app's own arguments) serves the offline
GGUF; the real prober and teacher agents run on it through the project's engine (`build_model`,
the offline path) and `stream_turn`, with the offline reply cap and retries of `services.turn`.
Five fixed lesson situations (transcripts that call for the prober's opening question, a placement
quiz, `probe_done`, the teacher's `plan_init`, a tagged teaching quiz) run `--reps` times each
under every variant, repetition i with sampling seed i (repeatable). The situations run in turn
within a repetition, so that, as in a lesson, a turn shares only a prefix (instructions, tools,
part of the transcript) with the turn before it in llama.cpp's prompt cache.

A recording wrapper around the model keeps every model response; each tool call in them is checked
with the tool's own validation (the argument models, `parse_plan` for `plan_init`, the plan's node
ids for a tagged teaching quiz). Reported per situation and overall: valid calls / tool calls (any
tool), turns that ended with a valid call of the expected tool, model requests per turn, and the
median seconds per turn.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import RunContext

from server.agent.classroom.lesson import build_prober, build_teacher, stream_turn
from server.agent.classroom.offline_fit import OfflineTuning, plan_node_ids
from server.agent.machine_room.engine import build_model
from server.config import OFFLINE_MODEL_NAME
from server.core.classroom.plan_tree import PlanError, parse_plan
from server.core.contracts.models import ResolvedModel
from server.core.contracts.plan import PlanInitInput
from server.core.contracts.probe import ProbeAssessment
from server.core.contracts.questions import AskInput, QuizInput
from server.core.transcript import for_model, has_plan, probe_assessment
from server.services.classroom.role_runs import OFFLINE_MAX_TOKENS, OFFLINE_RETRIES
from server.services.machine_room.offline_child import find_gguf
from server.services.machine_room.offline_model import OfflineModelServer

# -- the fixed situations ------------------------------------------------------------------------------


def _user(mid: str, text: str) -> dict[str, Any]:
    return {"id": mid, "role": "user", "parts": [{"type": "text", "text": text}]}


def _assistant(mid: str, *parts: dict[str, Any]) -> dict[str, Any]:
    return {"id": mid, "role": "assistant", "parts": list(parts)}


def _tool(name: str, call_id: str, args: dict[str, Any], output: Any) -> dict[str, Any]:
    return {
        "type": f"tool-{name}",
        "toolCallId": call_id,
        "state": "output-available",
        "input": args,
        "output": output,
    }


def _quiz(call_id: str, question: str, options: list[str], correct: int, chosen: int) -> dict[str, Any]:
    args = {"question": question, "options": options, "correct": correct, "explanation": "See the rule."}
    result = {
        "kind": "quiz",
        "chosen": chosen,
        "chosenText": options[chosen],
        "correct": chosen == correct,
        "correctIndex": correct,
        "correctText": options[correct],
    }
    return _tool("quiz", call_id, args, result)


OPENING = [_user("u1", "Hi! Teach me fractions.")]
AFTER_GOAL = [
    *OPENING,
    _assistant(
        "a1",
        _tool(
            "ask_user_question",
            "c_goal",
            {"question": "What do you want to do with fractions?", "options": ["Add them", "Compare them"]},
            {"kind": "answer", "answer": "Add fractions with different denominators", "chosen": None},
        ),
    ),
]
AFTER_QUIZZES = [
    *AFTER_GOAL,
    _assistant("a2", _quiz("c_q1", "What is $1/2 + 1/2$?", ["1", "2/4", "1/4"], 0, 0)),
    _assistant("a3", _quiz("c_q2", "What is $1/2 + 1/3$?", ["2/5", "5/6", "1/6"], 1, 0)),
]
ASSESSMENT = {
    "topic": "fractions",
    "goal": "Add fractions with different denominators",
    "floor": "adds fractions with equal denominators",
    "ceiling": "adds fractions with different denominators",
    "level": "beginner",
}
AFTER_PROBE = [
    *AFTER_QUIZZES,
    _assistant("a4", _tool("probe_done", "c_done", ASSESSMENT, "Final result processed.")),
]
PLAN_SOURCE = (
    "graph TD\n  same[Same denominators] --> common[Common denominator]\n"
    "  common --> add[Adding unlike fractions]"
)
AFTER_PLAN = [
    *AFTER_PROBE,
    _assistant(
        "a5",
        _tool(
            "plan_init",
            "c_plan",
            {"title": "Adding fractions", "mermaid": PLAN_SOURCE},
            {"ok": True, "plan": parse_plan("Adding fractions", PLAN_SOURCE).model_dump(mode="json")},
        ),
        {"type": "text", "text": "Let us start with fractions that share a denominator."},
    ),
    _user("u2", "Ready, go on."),
]


@dataclass(frozen=True)
class Situation:
    name: str
    role: str
    messages: list[dict[str, Any]]
    expected: str
    tagged: bool = False


SITUATIONS = [
    Situation("prober question", "prober", OPENING, "ask_user_question"),
    Situation("placement quiz", "prober", AFTER_GOAL, "quiz"),
    Situation("probe_done", "prober", AFTER_QUIZZES, "probe_done"),
    Situation("plan_init", "teacher", AFTER_PROBE, "plan_init"),
    Situation("tagged teaching quiz", "teacher", AFTER_PLAN, "quiz", tagged=True),
]

# -- validation, as the tools do it --------------------------------------------------------------------

ARGUMENT_MODELS: dict[str, type[BaseModel]] = {
    "quiz": QuizInput,
    "ask_user_question": AskInput,
    "probe_done": ProbeAssessment,
    "plan_init": PlanInitInput,
}


def check_call(call: ToolCallPart, situation: Situation, plan_done: bool) -> tuple[bool, str]:
    """(valid, why not): the tool's own validation of this call's arguments."""
    model = ARGUMENT_MODELS.get(call.tool_name)
    if model is None or (call.tool_name == "probe_done" and situation.role != "prober"):
        return False, f"unknown tool {call.tool_name}"
    if call.tool_name == "plan_init" and situation.role != "teacher":
        return False, "plan_init is not the prober's"
    try:
        args = model.model_validate(call.args_as_dict())
    except ValidationError as exc:
        first = exc.errors()[0]
        return (
            False,
            f"{call.tool_name}: {'.'.join(map(str, first['loc'])) or 'arguments'}: {first['msg'][:60]}",
        )
    except ValueError as exc:
        return False, f"{call.tool_name}: arguments are not JSON ({str(exc)[:40]})"
    if isinstance(args, PlanInitInput):
        if plan_done:
            return False, "plan_init: already authored"
        try:
            parse_plan(args.title, args.mermaid)
        except PlanError as exc:
            return False, f"plan_init: {str(exc)[:80]}"
    return True, ""


def tagged(call: ToolCallPart, situation: Situation) -> bool:
    if not situation.tagged:
        return True
    node = call.args_as_dict().get("node")
    return node in plan_node_ids(situation.messages)


# -- recording -----------------------------------------------------------------------------------------


class Recorder(WrapperModel):
    """Keeps every model response; sends the repetition's sampling seed with each request."""

    def __init__(self, wrapped: Model) -> None:
        super().__init__(wrapped)
        self.responses: list[ModelResponse] = []
        self.seed = 0

    def _seeded(self, settings: ModelSettings | None) -> ModelSettings:
        return ModelSettings(**(settings or {}), seed=self.seed)

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        response = await self.wrapped.request(
            messages, self._seeded(model_settings), model_request_parameters
        )
        self.responses.append(response)
        return response

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncIterator[StreamedResponse]:
        async with self.wrapped.request_stream(
            messages, self._seeded(model_settings), model_request_parameters, run_context
        ) as stream:
            yield stream
        self.responses.append(stream.get())


# -- running -------------------------------------------------------------------------------------------


@dataclass
class Turn:
    seconds: float
    requests: int
    calls: int
    valid: int
    expected_ok: bool
    text_only: bool
    error: str | None
    reasons: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    """The refused calls' arguments as sent (printed with --verbose)."""


@dataclass(frozen=True)
class Variant:
    name: str
    tuning: OfflineTuning | None
    gguf: Path | None = None


async def run_turn(recorder: Recorder, variant: Variant, situation: Situation, seed: int) -> Turn:
    recorder.responses = []
    recorder.seed = seed
    cap, retries = OFFLINE_MAX_TOKENS, OFFLINE_RETRIES
    if situation.role == "prober":
        agent = build_prober(recorder, max_tokens=cap, retries=retries, offline=variant.tuning)
    else:
        agent = build_teacher(
            recorder,
            assessment=probe_assessment(situation.messages),
            max_tokens=cap,
            retries=retries,
            offline=variant.tuning,
        )
    started = time.perf_counter()
    error = None
    async for chunk in stream_turn(
        agent, chat_id="bench", messages=for_model(situation.messages), reply_id="r1"
    ):
        if chunk.get("type") == "error":
            error = str(chunk.get("errorText"))[:100]
    seconds = time.perf_counter() - started
    calls = valid = 0
    expected_ok = False
    plan_done = has_plan(situation.messages)
    reasons: list[str] = []
    refused: list[str] = []
    for response in recorder.responses:
        for part in response.parts:
            if not isinstance(part, ToolCallPart):
                continue
            calls += 1
            ok, why = check_call(part, situation, plan_done)
            if ok:
                valid += 1
                if part.tool_name == "plan_init":
                    plan_done = True
                if part.tool_name == situation.expected:
                    if tagged(part, situation):
                        expected_ok = True
                    else:
                        reasons.append("quiz: untagged or unknown node")
            else:
                reasons.append(why)
                refused.append(f"{part.tool_name} {str(part.args)[:300]!r}")
    text_only = calls == 0 and any(isinstance(p, TextPart) for r in recorder.responses for p in r.parts)
    return Turn(
        seconds, len(recorder.responses), calls, valid, expected_ok, text_only, error, reasons, refused
    )


def _row(label: str, turns: list[Turn]) -> str:
    calls = sum(t.calls for t in turns)
    valid = sum(t.valid for t in turns)
    expected = sum(t.expected_ok for t in turns)
    rate = f"{valid}/{calls} ({valid / calls:.0%})" if calls else "0/0 (-)"
    requests = sum(t.requests for t in turns) / len(turns)
    secs = statistics.median(t.seconds for t in turns)
    text = sum(t.text_only for t in turns)
    errors = sum(t.error is not None for t in turns)
    return (
        f"  {label:<22} {rate:>15} {expected:>3}/{len(turns):<3} ({expected / len(turns):>4.0%}) "
        f"{requests:>5.1f} {secs:>7.1f} {text:>5} {errors:>6}"
    )


async def run_variant(variant: Variant, reps: int, verbose: bool) -> dict[str, list[Turn]]:
    gguf = variant.gguf or find_gguf()
    with tempfile.TemporaryDirectory() as tmp:
        server = OfflineModelServer(Path(tmp) / "offline.log", gguf)
        try:
            url = await server.wait_ready(120)
            resolved = ResolvedModel(provider="local", model=OFFLINE_MODEL_NAME, offline=True)
            recorder = Recorder(build_model(resolved, api_key=None, base_url=url))
            results: dict[str, list[Turn]] = {}
            for seed in range(reps):  # situations interleaved: no turn reuses its own prompt
                for situation in SITUATIONS:
                    turn = await run_turn(recorder, variant, situation, seed)
                    results.setdefault(situation.name, []).append(turn)
                    if verbose:
                        print(f"    {situation.name} seed {seed}: {turn}", flush=True)
        finally:
            server.stop()
    return results


VARIANTS: dict[str, Callable[[Path | None], Variant]] = {
    "baseline": lambda gguf: Variant("baseline (as hosted models)", None, gguf),
    "forced": lambda gguf: Variant("forced tool", OfflineTuning(force_tool=True, short_schemas=False), gguf),
    "short": lambda gguf: Variant("short schemas", OfflineTuning(force_tool=False, short_schemas=True), gguf),
    "both": lambda gguf: Variant("forced + short (kept)", OfflineTuning(), gguf),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--gguf", action="append", type=Path, default=[], help="other GGUFs to run too")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    ggufs: list[Path | None] = [None, *args.gguf]
    header = (
        f"  {'situation':<22} {'valid calls':>15} {'expected ok':>15} {'req/t':>5} "
        f"{'s/turn':>7} {'text':>5} {'errors':>6}"
    )
    for gguf in ggufs:
        for key in args.variants.split(","):
            variant = VARIANTS[key](gguf)
            print(
                f"\n{variant.name} on {(gguf or find_gguf() or Path('?')).name}, {args.reps} reps", flush=True
            )
            results = asyncio.run(run_variant(variant, args.reps, args.verbose))
            print(header)
            for name, turns in results.items():
                print(_row(name, turns))
            everything = [t for turns in results.values() for t in turns]
            print(_row("overall", everything), flush=True)
            reasons: dict[str, int] = {}
            for turn in everything:
                for reason in [*turn.reasons, *([turn.error] if turn.error else [])]:
                    reasons[reason] = reasons.get(reason, 0) + 1
            for reason, count in sorted(reasons.items(), key=lambda kv: -kv[1])[:6]:
                print(f"    {count:>3} x {reason}")


if __name__ == "__main__":
    main()
