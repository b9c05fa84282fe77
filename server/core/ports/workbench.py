"""The Workbench's ports: job records, the headless browser, web search."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from server.core.contracts.jobs import JobRecord


class JobStore(Protocol):
    """Workbench job records, `data/jobs/<id>.json`, written only by the job runner (seed §4)."""

    def get(self, job_id: str) -> JobRecord | None:
        """The record, or None when absent. Raises StoreCorrupt when unreadable."""
        ...

    def save(self, job: JobRecord) -> None:
        """Replace the record atomically. Raises OSError loudly."""
        ...

    def update(self, job_id: str, change: Callable[[JobRecord], JobRecord | None]) -> JobRecord | None:
        """Read, change and write under the job's lock; `change` returns the new record or None
        (no write). Returns what was written, or None."""
        ...

    def list(self, chat_id: str | None = None) -> list[JobRecord]:
        """Every readable record (of one session when `chat_id` is given); unreadable ones are
        skipped and logged."""
        ...

    def delete(self, job_id: str) -> bool:
        """Remove the record; False when it did not exist."""
        ...


class HtmlCheck(Protocol):
    """What running an HTML page in a headless browser observed."""

    console_errors: list[str]
    page_errors: list[str]
    dialogs: list[str]
    visible: bool
    timed_out: bool


class SvgRender(Protocol):
    """An SVG rendered to pixels."""

    png: bytes
    nonblank: bool


class Headless(Protocol):
    """A headless browser that runs untrusted HTML and SVG with no network (seed §5.1: sub-agents
    verify, never one-shot). The adapter is `server.agent.workbench.headless.ChromiumHeadless`."""

    def available(self) -> bool:
        """Whether a browser can run here (demo and visual tools are offered only then)."""
        ...

    async def run_html(self, html: str, *, timeout_s: float = 10.0) -> HtmlCheck:
        """Load the page, let it run, and report errors, dialogs and whether anything visible was
        drawn. A page that never settles reports `timed_out`."""
        ...

    async def render_svg(self, svg: str, *, width: int = 800, height: int = 600) -> SvgRender:
        """Render an SVG (already sanitized) to a PNG."""
        ...


class SearchHit(Protocol):
    title: str
    url: str
    snippet: str


class WebSearch(Protocol):
    """A web search provider the learner configured (Tavily, Brave or Google Programmable Search)."""

    async def search(self, query: str, *, limit: int = 5) -> list[SearchHit]:
        """Hits for a query. Raises SearchFailed (in the adapter module) with a plain sentence."""
        ...

    async def read_page(self, url: str) -> str:
        """The main text of a page (extracted), at most a bounded number of characters. Raises
        SearchFailed when it cannot be fetched or holds no text."""
        ...
