"""The researcher (seed §5.1): searches the web, reads pages, and submits a cited summary.

Tools: `search(query)` (hits from the configured provider) and `read(url)` (only URLs that came
back from a search; the page's main text). Output: the `submit` tool, checked in code before it
is accepted: every `[n]` in the summary names a listed source, and every listed source is a page
that was read. A failed check goes back to the model (`ModelRetry`) with the reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field
from pydantic_ai import Agent, ModelRetry, RunContext, ToolOutput
from pydantic_ai.models import Model
from pydantic_ai.usage import RunUsage

from server.agent.prompts import load_prompt
from server.agent.workbench.common import WorkerFailed, run_checked, worker_usage
from server.agent.workbench.web import SearchFailed
from server.core.contracts.jobs import ResearchArtifact, ResearchInput, Source, WorkerResult
from server.core.ports import SearchHit, WebSearch

MAX_SEARCHES = 6
MAX_READS = 8
REQUEST_LIMIT = 24
"""Model requests one research job may make."""
_CITE = re.compile(r"\[(\d+)\]")


class SourceIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: str = Field(min_length=1, max_length=300)
    url: str = Field(min_length=8, max_length=2_000, description="exactly as it came from search")


class Submission(BaseModel):
    """The researcher's submit: a summary citing [n] and the sources, [1] = sources[0]."""

    model_config = ConfigDict(extra="forbid")
    summary: str = Field(min_length=20, max_length=20_000)
    sources: list[SourceIn] = Field(min_length=1, max_length=12)


@dataclass
class ResearchState:
    """What this run found: hits by URL (from `search`) and the URLs read successfully."""

    search: WebSearch
    hits: dict[str, SearchHit] = field(default_factory=dict)
    read: set[str] = field(default_factory=set)
    searches: int = 0
    reads: int = 0
    last_problem: str | None = None


def check_submission(submission: Submission, state: ResearchState) -> list[str]:
    """Why the submission cannot be delivered (empty when it can)."""
    problems = []
    cited = {int(n) for n in _CITE.findall(submission.summary)}
    if not cited:
        problems.append("the summary cites no source; cite each claim as [1], [2], …")
    bad = sorted(n for n in cited if not 1 <= n <= len(submission.sources))
    if bad:
        listed = len(submission.sources)
        problems.append(
            f"the summary cites {', '.join(f'[{n}]' for n in bad)} but only {listed} source"
            f"{'s are' if listed != 1 else ' is'} listed"
        )
    for n, source in enumerate(submission.sources, start=1):
        if source.url not in state.read:
            origin = "came from a search but was never read" if source.url in state.hits else "was never read"
            problems.append(f"source [{n}] ({source.url}) {origin}; read it with `read` or drop it")
    return problems


def build_researcher(model: Model) -> Agent[ResearchState, Submission]:
    agent: Agent[ResearchState, Submission] = Agent(
        model,
        deps_type=ResearchState,
        instructions=load_prompt("researcher"),
        name="researcher",
        output_type=ToolOutput(Submission, name="submit", description="Submit the cited summary."),
        retries={"tools": 3, "output": 3},
    )

    @agent.tool
    async def search(ctx: RunContext[ResearchState], query: str) -> str:
        """Search the web; returns numbered hits (title, url, snippet)."""
        state = ctx.deps
        query = query.strip()
        if not query:
            raise ModelRetry("the query is empty")
        if state.searches >= MAX_SEARCHES:
            return f"No more searches ({MAX_SEARCHES} used): read what you found and submit."
        state.searches += 1
        hits = await state.search.search(query[:400], limit=5)  # SearchFailed ends the job honestly
        if not hits:
            return "No results; try other words."
        lines = []
        for i, hit in enumerate(hits, start=1):
            state.hits.setdefault(hit.url, hit)
            lines.append(f"{i}. {hit.title}\n   {hit.url}\n   {hit.snippet}")
        return "\n".join(lines)

    @agent.tool
    async def read(ctx: RunContext[ResearchState], url: str) -> str:
        """Read a page from your search results; returns its main text (truncated)."""
        state = ctx.deps
        url = url.strip()
        if url not in state.hits:
            raise ModelRetry("you can read only URLs from your search results, exactly as listed")
        if state.reads >= MAX_READS and url not in state.read:
            return f"No more reading ({MAX_READS} pages read): submit from what you have."
        state.reads += 1
        try:
            text = await state.search.read_page(url)
        except SearchFailed as exc:
            return f"This page could not be read ({exc}); it cannot be a source. Pick another."
        state.read.add(url)
        return text

    @agent.output_validator
    def _verified(ctx: RunContext[ResearchState], submission: Submission) -> Submission:
        problems = check_submission(submission, ctx.deps)
        if problems:
            ctx.deps.last_problem = "; ".join(problems) + "."
            raise ModelRetry("The submission was refused: " + ctx.deps.last_problem + " Submit again.")
        return submission

    return agent


def result_text(question: str, submission: Submission) -> str:
    sources = "\n".join(f"[{n}] {s.title} — {s.url}" for n, s in enumerate(submission.sources, start=1))
    head = f"Research on {question!r} (every cited page was read):"
    return f"{head}\n\n{submission.summary}\n\nSources:\n{sources}"


async def run_researcher(
    job: ResearchInput, model: Model, search: WebSearch | None, usage: RunUsage
) -> WorkerResult:
    """Research `job.question`. Raises WorkerFailed (no provider, a search failure, the checks
    still failing after 3 retries, a model failure)."""
    if search is None:
        raise WorkerFailed(
            "No web search provider is configured, so the question could not be researched "
            "(choose one and add its key in Settings)."
        )
    state = ResearchState(search=search)
    agent = build_researcher(model)
    submission = await run_checked(
        agent,
        f"THE QUESTION:\n{job.question}",
        deps=state,
        model=model,
        usage=usage,
        request_limit=REQUEST_LIMIT,
        what="researcher",
        last_problem=lambda: state.last_problem,
        plain={SearchFailed: "The research stopped because the web search failed: "},
    )
    try:
        artifact = ResearchArtifact(
            question=job.question,
            summary=submission.summary,
            sources=[Source.model_validate({"title": s.title, "url": s.url}) for s in submission.sources],
        )
    except ValueError as exc:
        raise WorkerFailed(
            "The researcher's sources were not valid web addresses.", worker_usage(usage)
        ) from exc
    return WorkerResult(text=result_text(job.question, submission), artifact=artifact)
