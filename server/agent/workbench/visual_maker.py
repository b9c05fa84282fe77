"""The visual-maker (seed §5.1: verify, never one-shot): draws an SVG and submits it with
`submit_visual(title, svg)`. Each submission is sanitized (`SvgRejected` goes back to the model),
rendered in the headless browser (a blank picture goes back), and, when a vision model is
configured, looked at by a second agent that answers `{matches, problems}` (not matching goes
back with the problems). Without a vision model the artifact says `looked_at=False`."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field
from pydantic_ai import Agent, BinaryContent, ModelRetry, RunContext, ToolOutput
from pydantic_ai.messages import UserContent
from pydantic_ai.models import Model
from pydantic_ai.usage import RunUsage

from server.agent.machine_room.model_guard import classify
from server.agent.prompts import load_prompt
from server.agent.workbench.common import WorkerFailed, run_checked
from server.core.contracts.jobs import MAX_SVG, VisualArtifact, VisualInput, WorkerResult
from server.core.ports import Headless
from server.core.workbench.svg import SvgRejected, sanitize_svg

log = logging.getLogger("lh.job")

RETRIES = 3
REQUEST_LIMIT = 16
WIDTH, HEIGHT = 800, 600


class VisualSubmission(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: str = Field(min_length=1, max_length=200)
    svg: str = Field(min_length=20, max_length=MAX_SVG, description="one complete SVG document")


class Verdict(BaseModel):
    """The vision reviewer's answer."""

    model_config = ConfigDict(extra="forbid")
    matches: bool = Field(description="true when the picture shows what was asked and is fit to show")
    problems: str = Field(default="", max_length=2_000, description="what to fix, when it does not match")


@dataclass
class VisualState:
    request: str
    headless: Headless
    vision: Model | None
    attempts: int = 0
    sanitized: str = ""
    looked_at: bool = False
    last_problem: str | None = None
    checks: list[str] = field(default_factory=list)


def build_checker(vision: Model) -> Agent[None, Verdict]:
    return Agent(
        vision,
        instructions=load_prompt("visual_checker"),
        name="visual_checker",
        output_type=ToolOutput(Verdict, name="verdict", description="Say whether the picture matches."),
        retries={"tools": 2, "output": 2},
    )


def build_visual_maker(model: Model) -> Agent[VisualState, VisualSubmission]:
    agent: Agent[VisualState, VisualSubmission] = Agent(
        model,
        deps_type=VisualState,
        instructions=load_prompt("visual_maker"),
        name="visual_maker",
        output_type=ToolOutput(
            VisualSubmission, name="submit_visual", description="Submit the title and SVG."
        ),
        retries={"tools": RETRIES, "output": RETRIES},
    )

    def refuse(state: VisualState, problem: str) -> ModelRetry:
        state.last_problem = problem
        return ModelRetry(
            f"The picture was refused: {problem} Fix exactly that and submit the whole SVG again."
        )

    @agent.output_validator
    async def _verified(ctx: RunContext[VisualState], visual: VisualSubmission) -> VisualSubmission:
        state = ctx.deps
        state.attempts += 1
        try:
            clean = sanitize_svg(visual.svg)
        except SvgRejected as exc:
            raise refuse(state, exc.reason) from exc
        render = await state.headless.render_svg(clean, width=WIDTH, height=HEIGHT)
        if not render.nonblank:
            raise refuse(state, "it rendered blank (every pixel alike): nothing visible was drawn.")
        checks = [
            "sanitized (no scripts, handlers or external links)",
            f"rendered at {WIDTH}×{HEIGHT}, not blank",
        ]
        looked_at = False
        if state.vision is not None:
            checker = build_checker(state.vision)
            prompt: list[UserContent] = [
                f"THE REQUEST:\n{state.request}\n\nTHE PICTURE'S TITLE: {visual.title}\n\n"
                "THE RENDERED PICTURE:",
                BinaryContent(data=render.png, media_type="image/png"),
            ]
            try:
                verdict = (await checker.run(prompt, usage=ctx.usage)).output
            except Exception as exc:  # the reviewer is a check on top: without it the picture stands
                failure = classify(exc, state.vision.model_name)
                reason = str(failure) if failure is not None else type(exc).__name__
                log.warning("the vision check could not run: %s", reason)
                checks.append(f"the vision model could not look at it ({reason})")
            else:
                if not verdict.matches:
                    problems = verdict.problems.strip() or "it does not show what was asked."
                    raise refuse(state, f"a reviewer looked at the rendered picture and found: {problems}")
                looked_at = True
                checks.append("looked at by a vision model: it shows what was asked")
        state.sanitized, state.looked_at, state.checks = clean, looked_at, checks
        return visual

    return agent


async def run_visual_maker(
    job: VisualInput, model: Model, vision: Model | None, headless: Headless, usage: RunUsage
) -> WorkerResult:
    """Draw and verify a picture for `job.request`. Raises WorkerFailed (no browser, the checks
    still failing after `RETRIES` retries, a model failure)."""
    if not headless.available():
        raise WorkerFailed("No headless browser runs here, so the picture could not be rendered and checked.")
    state = VisualState(request=job.request, headless=headless, vision=vision)
    agent = build_visual_maker(model)
    visual = await run_checked(
        agent,
        f"THE PICTURE TO DRAW:\n{job.request}",
        deps=state,
        model=model,
        usage=usage,
        request_limit=REQUEST_LIMIT,
        what="visual-maker",
        last_problem=lambda: state.last_problem,
    )
    if state.looked_at:
        verified = "a vision model looked at the rendered picture and judged that it shows what was asked"
    else:
        verified = "it was rendered and checked to be non-blank, but no vision model looked at it"
    text = (
        f"Picture “{visual.title}” is ready for the learner: {job.request.strip()} "
        f"It was sanitized and {verified}."
    )
    artifact = VisualArtifact(
        title=visual.title, svg=state.sanitized, looked_at=state.looked_at, checks=state.checks
    )
    return WorkerResult(text=text, artifact=artifact)
