"""A scripted `Headless` port: each call pops the next scripted result (or repeats the default)
and is recorded, so tests of the job pipeline run without a browser."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from server.agent.workbench.headless import HtmlCheckResult, SvgRenderResult

# A real 1x1 white PNG, for code that decodes what it is given.
BLANK_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108020000009077"
    "53de0000000c4944415478da63f8ffff3f0005fe02fe0def46b80000000049454e44ae426082"
)


@dataclass
class FakeHeadless:
    """Scripted results: `html_results` / `svg_results` are consumed in order, then the defaults
    (a clean visible page; a non-blank render). `html_calls` / `svg_calls` record the inputs;
    `available_` answers `available()`; `closed` counts `close()`."""

    html_results: deque[HtmlCheckResult] = field(default_factory=deque)
    svg_results: deque[SvgRenderResult] = field(default_factory=deque)
    available_: bool = True
    html_calls: list[tuple[str, float]] = field(default_factory=list)
    svg_calls: list[tuple[str, int, int]] = field(default_factory=list)
    closed: int = 0

    def script_html(self, *results: HtmlCheckResult) -> FakeHeadless:
        self.html_results.extend(results)
        return self

    def script_svg(self, *results: SvgRenderResult) -> FakeHeadless:
        self.svg_results.extend(results)
        return self

    def available(self) -> bool:
        return self.available_

    async def run_html(self, html: str, *, timeout_s: float = 10.0) -> HtmlCheckResult:
        self.html_calls.append((html, timeout_s))
        if self.html_results:
            return self.html_results.popleft()
        return HtmlCheckResult(visible=True)

    async def render_svg(self, svg: str, *, width: int = 800, height: int = 600) -> SvgRenderResult:
        self.svg_calls.append((svg, width, height))
        if self.svg_results:
            return self.svg_results.popleft()
        return SvgRenderResult(png=BLANK_PNG, nonblank=True)

    async def close(self) -> None:
        self.closed += 1
