"""The Workbench workers (seed §5.1: sub-agents verify, never one-shot), with scripted models
(FunctionModel): the researcher against a small web on loopback, the demo-builder and the
visual-maker against real headless Chromium (Debian's `chromium`)."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
from pydantic_ai import BinaryContent
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RunUsage

from server.agent.workbench.common import worker_usage
from server.agent.workbench.headless import ChromiumHeadless, HtmlCheckResult
from server.agent.workbench.web import (
    BraveSearch,
    GoogleSearch,
    SearchFailed,
    TavilySearch,
    build_search,
    read_page,
)
from server.agent.workbench.workers import WorkerDeps, WorkerFailed, run_worker
from server.core.contracts.jobs import ResearchSettings, WorkerUsage
from tests.fakes.headless import FakeHeadless
from tests.fakes.web import SECRET_BODY, FakeWeb

FAST = httpx.Timeout(0.4, connect=1.0)
SVG_NS = "http://www.w3.org/2000/svg"


# -- scripted models --------------------------------------------------------------------------------
def tool_returns(messages: list[ModelMessage], name: str) -> list[str]:
    """What the tool `name` returned (retried calls left out), in order."""
    return [
        str(p.content)
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart) and p.tool_name == name and p.outcome != "retried"
    ]


def retries(messages: list[ModelMessage]) -> list[str]:
    """What the model was sent back (a refused call or submission), in order."""
    sent = []
    for m in messages:
        for p in m.parts if isinstance(m, ModelRequest) else ():
            if isinstance(p, RetryPromptPart):
                sent.append(p.model_response())
            elif isinstance(p, ToolReturnPart) and p.outcome == "retried":
                sent.append(str(p.content))
    return sent


def call(name: str, args: dict[str, Any]) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart(name, args)])


class Recorder:
    """Wraps a script; `calls` counts model requests, `seen` keeps each message history."""

    def __init__(self, script: Callable[[list[ModelMessage], AgentInfo], ModelResponse]) -> None:
        self.script = script
        self.seen: list[list[ModelMessage]] = []

    async def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.seen.append(list(messages))
        return self.script(messages, info)

    @property
    def calls(self) -> int:
        return len(self.seen)

    def model(self) -> FunctionModel:
        return FunctionModel(self, model_name="scripted")


def researcher_script(
    cite_unread_first: bool = False,
) -> Callable[[list[ModelMessage], AgentInfo], ModelResponse]:
    """Searches, reads the first hit, then submits; with `cite_unread_first` its first submit also
    cites the second hit, never read, and after the refusal it reads that page and submits again."""

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        found = tool_returns(messages, "search")
        if not found:
            return call("search", {"query": "photosynthesis light reactions"})
        urls = re.findall(r"https?://\S+", found[0])
        read = tool_returns(messages, "read")
        if not read:
            return call("read", {"url": urls[0]})
        refused = retries(messages)
        if cite_unread_first and not refused:
            sources = [{"title": "Photosynthesis", "url": urls[0]}, {"title": "Light", "url": urls[1]}]
            summary = "Plants turn light into sugar [1]; water is split in the thylakoids [2]."
            return call("submit", {"summary": summary, "sources": sources})
        if cite_unread_first and len(read) < 2:
            return call("read", {"url": urls[1]})
        if cite_unread_first:
            sources = [{"title": "Photosynthesis", "url": urls[0]}, {"title": "Light", "url": urls[1]}]
            summary = "Plants turn light into sugar [1]; water is split in the thylakoids [2]."
        else:
            sources = [{"title": "Photosynthesis", "url": urls[0]}]
            summary = "Plants turn light energy into chemical energy, releasing oxygen [1]."
        return call("submit", {"summary": summary, "sources": sources})

    return script


def submitter(tool: str, submissions: list[dict[str, Any]]) -> Recorder:
    """Submits `submissions[i]` on its i-th request (the last one again when they run out)."""
    state = {"n": 0}

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        index = min(state["n"], len(submissions) - 1)
        state["n"] += 1
        return call(tool, submissions[index])

    return Recorder(script)


# -- fixtures -----------------------------------------------------------------------------------------
@pytest.fixture
def web() -> Any:
    with FakeWeb(slow_s=3.0) as server:
        yield server


@pytest.fixture
async def chromium() -> AsyncIterator[ChromiumHeadless]:
    if shutil.which("chromium") is None:
        pytest.skip("the demo and visual checks need Debian's chromium on PATH (apt-get install chromium)")
    headless = ChromiumHeadless(settle_s=0.3)
    yield headless
    await headless.close()


def tavily(web: FakeWeb) -> Any:
    return build_search(ResearchSettings(provider="tavily", base_url=web.base_url), "tvly-test", timeout=FAST)


def deps(
    model: FunctionModel, *, search: Any = None, headless: Any = None, vision: Any = None, **kw: Any
) -> WorkerDeps:
    return WorkerDeps(model=model, vision=vision, search=search, headless=headless or FakeHeadless(), **kw)


# -- the researcher -----------------------------------------------------------------------------------
async def test_researcher_searches_reads_and_delivers_a_cited_summary(web: FakeWeb) -> None:
    model = Recorder(researcher_script())
    result, usage = await run_worker(
        "research", {"question": "How does photosynthesis work?"}, deps(model.model(), search=tavily(web))
    )

    artifact = result.artifact
    assert artifact.kind == "research"
    assert [str(s.url) for s in artifact.sources] == [web.url("photosynthesis")]
    assert "[1]" in artifact.summary
    assert web.url("photosynthesis") in result.text and "every cited page was read" in result.text
    # the page it read reached the model as extracted text, not markup
    page_text = tool_returns(model.seen[-1], "read")[0]
    assert "chlorophyll absorbs" in page_text and "<p>" not in page_text and "Copyright" not in page_text
    assert usage.requests == model.calls == 3
    assert usage.input_tokens and usage.output_tokens  # FunctionModel reports (estimated) tokens
    method, path, headers, body = web.requests[0]
    assert (method, path, headers["Authorization"]) == ("POST", "/search", "Bearer tvly-test")
    assert json.loads(body)["query"] == "photosynthesis light reactions"


async def test_researcher_citing_a_page_it_never_read_is_sent_back_then_reads_it(web: FakeWeb) -> None:
    model = Recorder(researcher_script(cite_unread_first=True))
    result, usage = await run_worker(
        "research", {"question": "How does photosynthesis work?"}, deps(model.model(), search=tavily(web))
    )

    refused = retries(model.seen[-1])
    assert len(refused) == 1
    assert "source [2]" in refused[0] and "never read" in refused[0]
    assert [str(s.url) for s in result.artifact.sources] == [
        web.url("photosynthesis"),
        web.url("light-reactions"),
    ]
    assert usage.requests == 5  # search, read, refused submit, read, submit


async def test_researcher_may_read_only_urls_from_its_search_results(web: FakeWeb) -> None:
    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if not tool_returns(messages, "search"):
            return call("search", {"query": "calvin cycle"})
        if not retries(messages):
            return call("read", {"url": "http://127.0.0.1:9/secret"})
        return ModelResponse(
            parts=[
                ToolCallPart(
                    "submit",
                    {
                        "summary": "Carbon is fixed by RuBisCO [1].",
                        "sources": [{"title": "x", "url": web.url("calvin-cycle")}],
                    },
                )
            ]
        )

    model = Recorder(script)
    with pytest.raises(WorkerFailed) as failed:
        await run_worker(
            "research", {"question": "What is the Calvin cycle?"}, deps(model.model(), search=tavily(web))
        )
    first_refusal = retries(model.seen[2])[0]
    assert "only URLs from your search results" in first_refusal
    assert "never read" in str(failed.value)  # it never read the page it cited, to the end
    assert all(path != "/secret" for _, path, _, _ in web.requests)


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("garbage", "Tavily answered with something that is not JSON"),
        ("slow", "Tavily did not answer within 0.4 s"),
        ("error", "Tavily answered HTTP 500 instead of search results"),
        ("unauthorized", "Tavily refused the API key (HTTP 401)"),
    ],
)
async def test_a_failing_search_provider_fails_the_job_honestly(
    web: FakeWeb, mode: str, expected: str
) -> None:
    web.mode = mode
    model = Recorder(researcher_script())
    with pytest.raises(WorkerFailed) as failed:
        await run_worker(
            "research", {"question": "How does photosynthesis work?"}, deps(model.model(), search=tavily(web))
        )
    message = str(failed.value)
    assert expected in message and message.startswith("The research stopped because the web search failed")
    assert SECRET_BODY not in message and "tvly-test" not in message
    assert failed.value.usage.requests == 1


async def test_no_search_provider_fails_without_calling_a_model() -> None:
    model = Recorder(researcher_script())
    with pytest.raises(WorkerFailed, match="No web search provider is configured"):
        await run_worker("research", {"question": "How does photosynthesis work?"}, deps(model.model()))
    assert model.calls == 0


@pytest.mark.parametrize(
    ("kind", "tool_input", "expected"),
    [
        ("research", {"question": "?"}, "question: String should have at least 3 characters"),
        ("demo", {"request": "x" * 3000}, "request: String should have at most 2000 characters"),
        ("visual", {}, "request: Field required"),
        ("poem", {"request": "a poem"}, "There is no 'poem' worker"),
    ],
)
async def test_a_bad_input_fails_without_calling_a_model(
    kind: Any, tool_input: dict[str, Any], expected: str
) -> None:
    model = Recorder(researcher_script())
    with pytest.raises(WorkerFailed, match=re.escape(expected)) as failed:
        await run_worker(kind, tool_input, deps(model.model(), search=object()))
    assert model.calls == 0 and failed.value.usage.requests == 0
    assert failed.value.usage.input_tokens is None


# -- the search adapters and page reading ----------------------------------------------------------------
async def test_brave_and_google_adapters_read_their_providers_answers(web: FakeWeb) -> None:
    brave = build_search(ResearchSettings(provider="brave", base_url=web.base_url), "brave-key", timeout=FAST)
    google = build_search(
        ResearchSettings(provider="google", google_cx="cx1", base_url=web.base_url), "g-key", timeout=FAST
    )
    assert isinstance(brave, BraveSearch) and isinstance(google, GoogleSearch)

    brave_hits = await brave.search("rubisco enzyme", limit=2)
    google_hits = await google.search("rubisco enzyme", limit=2)
    assert [h.url for h in brave_hits] == [h.url for h in google_hits] == [web.url("calvin-cycle")]
    assert brave_hits[0].title == "The Calvin cycle"  # <strong> stripped
    (_, _, brave_headers, _), (_, google_path, _, _) = web.requests
    assert brave_headers["X-Subscription-Token"] == "brave-key"
    assert google_path == "/customsearch/v1"

    web.mode = "garbage"
    with pytest.raises(SearchFailed, match="Brave Search answered with something that is not JSON"):
        await brave.search("x")


def test_build_search_is_none_without_a_provider_or_key() -> None:
    assert build_search(ResearchSettings(), "key") is None
    assert build_search(ResearchSettings(provider="tavily"), None) is None
    assert build_search(ResearchSettings(provider="tavily"), "  ") is None
    assert build_search(ResearchSettings(provider="google"), "key") is None  # no engine id
    assert isinstance(build_search(ResearchSettings(provider="tavily"), "k"), TavilySearch)


async def test_read_page_refuses_what_it_cannot_read(web: FakeWeb) -> None:
    with pytest.raises(SearchFailed, match=r"did not answer within 0\.4 s"):
        await read_page(f"{web.base_url}/slow", limits=FAST)
    with pytest.raises(SearchFailed, match="answered HTTP 404"):
        await read_page(web.url("missing"), limits=FAST)
    with pytest.raises(SearchFailed, match=r"not a text page \(application/pdf\)"):
        await read_page(f"{web.base_url}/file.pdf", limits=FAST)
    with pytest.raises(SearchFailed, match="holds no readable text"):
        await read_page(f"{web.base_url}/empty", limits=FAST)
    for url in ("file:///etc/passwd", "javascript:alert(1)", "ftp://example.com/x"):
        with pytest.raises(SearchFailed, match="Only http and https"):
            await read_page(url)


async def test_read_page_truncates_long_text(web: FakeWeb) -> None:
    web.pages["long"] = ("A long page", "Sentence number one is here and it goes on. " * 800)
    text = await read_page(web.url("long"), limits=FAST)
    assert len(text) == 12_000 and text.endswith("[…]")


# -- the demo-builder against real Chromium -----------------------------------------------------------
GOOD_DEMO = (
    "<!doctype html><html><body><h1>Slope</h1><input id=s type=range min=0 max=10 value=5>"
    "<canvas id=c width=300 height=200></canvas><script>"
    "const c=document.getElementById('c').getContext('2d');"
    "function draw(){c.clearRect(0,0,300,200);c.beginPath();c.moveTo(0,200);"
    "c.lineTo(300,200-20*document.getElementById('s').value);c.stroke();}"
    "document.getElementById('s').oninput=draw;draw();</script></body></html>"
)


@pytest.mark.timeout(60)
async def test_a_demo_that_throws_is_sent_back_and_the_fix_is_delivered(chromium: ChromiumHeadless) -> None:
    broken = GOOD_DEMO.replace("draw();</script>", "draw();undefinedFunction();</script>")
    model = submitter(
        "submit_demo", [{"title": "Slope", "html": broken}, {"title": "Slope", "html": GOOD_DEMO}]
    )

    result, usage = await run_worker(
        "demo", {"request": "a line whose slope follows a slider"}, deps(model.model(), headless=chromium)
    )

    refused = retries(model.seen[-1])
    assert len(refused) == 1 and "undefinedFunction is not defined" in refused[0]
    assert result.artifact.kind == "demo" and result.artifact.html == GOOD_DEMO
    assert "no uncaught errors" in result.artifact.checks
    assert "verified before delivery" in result.text and "a line whose slope follows a slider" in result.text
    assert usage.requests == 2


@pytest.mark.timeout(90)
async def test_a_demo_that_keeps_alerting_fails_naming_the_dialog(chromium: ChromiumHeadless) -> None:
    alerting = GOOD_DEMO.replace("draw();</script>", "draw();alert('Move the slider!');</script>")
    model = submitter("submit_demo", [{"title": "Slope", "html": alerting}])

    with pytest.raises(WorkerFailed) as failed:
        await run_worker(
            "demo", {"request": "a line whose slope follows a slider"}, deps(model.model(), headless=chromium)
        )

    message = str(failed.value)
    assert "still failed its check" in message and "alert: Move the slider!" in message
    assert model.calls == 4 and failed.value.usage.requests == 4  # retries=3: four attempts


@pytest.mark.timeout(60)
async def test_a_demo_that_loops_forever_times_out_and_is_fixed(chromium: ChromiumHeadless) -> None:
    looping = "<!doctype html><html><body><h1>Spin</h1><script>while(true){}</script></body></html>"
    model = submitter(
        "submit_demo", [{"title": "Spin", "html": looping}, {"title": "Slope", "html": GOOD_DEMO}]
    )
    started = asyncio.get_running_loop().time()

    result, _ = await run_worker(
        "demo",
        {"request": "a line whose slope follows a slider"},
        deps(model.model(), headless=chromium, demo_timeout_s=3),
    )

    assert "did not finish loading and drawing within 3 s" in retries(model.seen[-1])[0]
    assert result.artifact.html == GOOD_DEMO
    assert asyncio.get_running_loop().time() - started < 30


@pytest.mark.timeout(30)
async def test_headless_reports_errors_dialogs_and_blank_pages(chromium: ChromiumHeadless) -> None:
    check = await chromium.run_html(
        "<p>x</p><img src='https://example.com/pixel.png'><script>console.error('bad');confirm('sure?')</script>",
        timeout_s=5,
    )
    assert check.dialogs == ["confirm: sure?"]
    assert "bad" in check.console_errors
    assert any("ERR_FAILED" in e for e in check.console_errors)  # the network request was aborted
    assert check.visible and not check.timed_out
    blank = await chromium.run_html("<html><body></body></html>", timeout_s=5)
    assert (blank.visible, blank.timed_out, blank.page_errors) == (False, False, [])


# -- the visual-maker against real Chromium -----------------------------------------------------------
def picture(body: str) -> str:
    return f'<svg xmlns="{SVG_NS}" viewBox="0 0 200 100">{body}</svg>'


CIRCLE = picture('<circle cx="100" cy="50" r="40" fill="#36c"/><text x="10" y="95">radius</text>')


@pytest.mark.timeout(60)
async def test_a_blank_svg_is_sent_back_and_a_drawn_one_delivered_unlooked(
    chromium: ChromiumHeadless,
) -> None:
    blank = picture('<rect width="200" height="100" fill="white"/>')
    model = submitter(
        "submit_visual", [{"title": "Circle", "svg": blank}, {"title": "Circle", "svg": CIRCLE}]
    )

    result, usage = await run_worker(
        "visual", {"request": "a circle with its radius"}, deps(model.model(), headless=chromium)
    )

    assert "rendered blank" in retries(model.seen[-1])[0]
    artifact = result.artifact
    assert artifact.kind == "visual" and artifact.looked_at is False
    assert "<circle" in artifact.svg
    assert "no vision model looked at it" in result.text and "non-blank" in result.text
    assert usage.requests == 2


@pytest.mark.timeout(60)
async def test_an_svg_with_script_is_sanitized_and_the_script_never_runs(chromium: ChromiumHeadless) -> None:
    # Were the script to run, it would erase the picture and the render would be blank.
    hostile = picture(
        '<script>document.documentElement.innerHTML="";</script>'
        '<circle cx="100" cy="50" r="40" fill="#36c" onload="this.remove()"/>'
        '<image href="https://evil.example/track.png" width="10" height="10"/>'
    )
    model = submitter("submit_visual", [{"title": "Circle", "svg": hostile}])

    result, usage = await run_worker(
        "visual", {"request": "a circle"}, deps(model.model(), headless=chromium)
    )

    svg = result.artifact.svg
    assert "<script" not in svg and "onload" not in svg and "evil.example" not in svg
    assert "<circle" in svg
    assert usage.requests == 1  # rendered non-blank at once: the script did not run


@pytest.mark.timeout(60)
async def test_the_vision_model_rejects_once_then_accepts(chromium: ChromiumHeadless) -> None:
    first = picture('<circle cx="100" cy="50" r="40" fill="#36c"/>')
    model = submitter(
        "submit_visual", [{"title": "Circle", "svg": first}, {"title": "Circle", "svg": CIRCLE}]
    )
    looked: list[bytes] = []

    def vision_script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        images = [
            item
            for m in messages
            if isinstance(m, ModelRequest)
            for p in m.parts
            if isinstance(p, UserPromptPart) and not isinstance(p.content, str)
            for item in p.content
            if isinstance(item, BinaryContent)
        ]
        assert images and images[0].media_type == "image/png" and images[0].data.startswith(b"\x89PNG")
        looked.append(images[0].data)
        if len(looked) == 1:
            return call("verdict", {"matches": False, "problems": "The radius is not labelled."})
        return call("verdict", {"matches": True, "problems": ""})

    vision = Recorder(vision_script)
    result, usage = await run_worker(
        "visual",
        {"request": "a circle with its radius labelled"},
        deps(model.model(), headless=chromium, vision=vision.model()),
    )

    assert "The radius is not labelled." in retries(model.seen[-1])[0]
    assert len(looked) == 2 and looked[0] != looked[1]
    assert result.artifact.looked_at is True
    assert "a vision model looked at the rendered picture" in result.text
    assert usage.requests == 4  # two submissions, two looks


# -- usage and model failures ----------------------------------------------------------------------------
def test_usage_is_unknown_when_no_tokens_were_reported() -> None:
    assert worker_usage(RunUsage(requests=2)) == WorkerUsage(requests=2)
    assert worker_usage(RunUsage(requests=2)).input_tokens is None
    counted = worker_usage(RunUsage(requests=1, input_tokens=10, output_tokens=3))
    assert (counted.input_tokens, counted.output_tokens, counted.cost_usd) == (10, 3, None)


async def test_a_provider_failure_becomes_a_plain_sentence() -> None:
    def refuse(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise ModelHTTPError(429, "scripted", body={"error": SECRET_BODY})

    with pytest.raises(WorkerFailed) as failed:
        await run_worker("demo", {"request": "a slider"}, deps(FunctionModel(refuse, model_name="scripted")))
    assert SECRET_BODY not in str(failed.value)
    assert (
        str(failed.value)
        == "the provider is rate limiting requests to scripted (HTTP 429); wait a minute and try again"
    )
    assert failed.value.usage.input_tokens is None  # the refused request reported nothing


# -- cancellation ---------------------------------------------------------------------------------------
async def test_cancelling_a_worker_cancels_it_at_once() -> None:
    entered = asyncio.Event()

    async def stuck(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        entered.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    task = asyncio.create_task(run_worker("demo", {"request": "a slider"}, deps(FunctionModel(stuck))))
    await asyncio.wait_for(entered.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_the_fake_headless_records_and_replays_its_script() -> None:
    fake = FakeHeadless().script_html(HtmlCheckResult(page_errors=["boom"], visible=True))
    model = submitter("submit_demo", [{"title": "Slope", "html": GOOD_DEMO}])
    result, _ = await run_worker("demo", {"request": "a slider"}, deps(model.model(), headless=fake))
    assert [h for h, _ in fake.html_calls] == [GOOD_DEMO, GOOD_DEMO]
    assert "boom" in retries(model.seen[-1])[0]
    assert result.artifact.checks
