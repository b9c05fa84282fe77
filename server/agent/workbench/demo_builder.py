"""The demo-builder (seed §5.1: verify, never one-shot): writes a self-contained HTML demo and
submits it with `submit_demo(title, html)`; every submission is run in the headless browser
first. Uncaught errors, console errors, dialogs (alert/confirm/prompt), a timeout or a blank
screen send it back to the model (`ModelRetry`) with what was observed; after 3 retries the job
fails naming the last problem."""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field
from pydantic_ai import Agent, ModelRetry, RunContext, ToolOutput
from pydantic_ai.models import Model
from pydantic_ai.usage import RunUsage

from server.agent.prompts import load_prompt
from server.agent.workbench.common import WorkerFailed, run_checked
from server.core.contracts.jobs import MAX_HTML, DemoArtifact, DemoInput, WorkerResult
from server.core.ports import Headless, HtmlCheck

RETRIES = 3
"""Submissions sent back before the job fails (4 attempts in all)."""
RUN_TIMEOUT_S = 10.0
"""Seconds a submitted page gets to load and draw."""
REQUEST_LIMIT = 12


class DemoSubmission(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: str = Field(min_length=1, max_length=200)
    html: str = Field(
        min_length=20, max_length=MAX_HTML, description="one complete, self-contained HTML document"
    )


@dataclass
class DemoState:
    headless: Headless
    timeout_s: float = RUN_TIMEOUT_S
    attempts: int = 0
    last_problem: str | None = None
    checks: list[str] = field(default_factory=list)


def _listed(items: list[str]) -> str:
    return "; ".join(f'"{item}"' for item in items[:5]) + (
        f" (and {len(items) - 5} more)" if len(items) > 5 else ""
    )


def problems_of(check: HtmlCheck, timeout_s: float) -> list[str]:
    """What in a headless run keeps a demo from the learner (empty when nothing does)."""
    problems = []
    if check.page_errors:
        problems.append(f"the page threw uncaught errors: {_listed(check.page_errors)}")
    if check.console_errors:
        problems.append(f"the console logged errors: {_listed(check.console_errors)}")
    if check.dialogs:
        problems.append(
            "the page opened dialogs, which are not allowed (show messages in the page): "
            + _listed(check.dialogs)
        )
    if check.timed_out:
        problems.append(
            f"the page did not finish loading and drawing within {timeout_s:g} s "
            "(an endless loop or a blocking script?)"
        )
    elif not check.visible:
        problems.append("nothing visible was drawn: the screenshot after loading is blank")
    return problems


def observed(timeout_s: float) -> list[str]:
    """The checks a delivered demo passed."""
    return [
        "ran in headless Chromium with JavaScript on and no network",
        "no uncaught errors",
        "no console errors",
        "no alert, confirm or prompt dialogs",
        f"loaded and drew something visible within {timeout_s:g} s",
    ]


def build_demo_builder(model: Model) -> Agent[DemoState, DemoSubmission]:
    agent: Agent[DemoState, DemoSubmission] = Agent(
        model,
        deps_type=DemoState,
        instructions=load_prompt("demo_builder"),
        name="demo_builder",
        output_type=ToolOutput(
            DemoSubmission, name="submit_demo", description="Submit the demo's title and HTML."
        ),
        retries={"tools": RETRIES, "output": RETRIES},
    )

    @agent.output_validator
    async def _verified(ctx: RunContext[DemoState], demo: DemoSubmission) -> DemoSubmission:
        state = ctx.deps
        state.attempts += 1
        check = await state.headless.run_html(demo.html, timeout_s=state.timeout_s)
        problems = problems_of(check, state.timeout_s)
        if problems:
            state.last_problem = "; ".join(problems) + "."
            raise ModelRetry(
                "The demo was run in a headless browser and failed its check: "
                + state.last_problem
                + " Fix exactly that and submit the whole HTML again."
            )
        state.checks = observed(state.timeout_s)
        return demo

    return agent


async def run_demo_builder(
    job: DemoInput, model: Model, headless: Headless, usage: RunUsage, *, timeout_s: float = RUN_TIMEOUT_S
) -> WorkerResult:
    """Build and verify a demo for `job.request`. Raises WorkerFailed (no browser, the check still
    failing after `RETRIES` retries, a model failure)."""
    if not headless.available():
        raise WorkerFailed("No headless browser runs here, so the demo could not be built and checked.")
    state = DemoState(headless=headless, timeout_s=timeout_s)
    agent = build_demo_builder(model)
    demo = await run_checked(
        agent,
        f"THE DEMO TO BUILD:\n{job.request}",
        deps=state,
        model=model,
        usage=usage,
        request_limit=REQUEST_LIMIT,
        what="demo-builder",
        last_problem=lambda: state.last_problem,
    )
    tries = "first try" if state.attempts == 1 else f"attempt {state.attempts}"
    text = (
        f"Demo “{demo.title}” is ready for the learner: {job.request.strip()} "
        f"It was verified before delivery (passed on the {tries}): it ran in a headless browser with no "
        "errors and no dialogs and drew something visible."
    )
    return WorkerResult(
        text=text, artifact=DemoArtifact(title=demo.title, html=demo.html, checks=state.checks)
    )
