"""Web search for the researcher (seed §5.1): Tavily, Brave and Google Programmable Search behind
the `WebSearch` port, and page reading with the main text extracted.

Every failure is a `SearchFailed` whose message is one plain sentence naming the provider and
what happened (a timeout, a refused key, an HTTP status, an answer that was not the expected
JSON); a provider's body and the key never appear in it.
"""

from __future__ import annotations

import asyncio
import html
import logging
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from server.core.contracts.jobs import ResearchSettings
from server.core.ports import SearchHit, WebSearch

log = logging.getLogger(__name__)

TIMEOUT = httpx.Timeout(20.0, connect=10.0)
"""Seconds: connecting 10, reading (and writing, pooling) 20."""
MAX_PAGE_BYTES = 2_000_000
"""Bytes of a page read; the rest is not downloaded."""
MAX_PAGE_CHARS = 12_000
"""Characters of a page's extracted text handed to the researcher."""
MAX_HITS = 10
_TAG = re.compile(r"<[^>]+>")
_TEXT_TYPES = ("text/html", "application/xhtml+xml", "text/plain", "application/xml", "text/xml")


class SearchFailed(Exception):
    """A search or a page read failed; `str()` is one plain sentence."""


@dataclass
class Hit:
    """One search hit (the `SearchHit` port): title, absolute http(s) URL, a short plain snippet."""

    title: str
    url: str
    snippet: str


def _plain(text: Any, limit: int) -> str:
    if not isinstance(text, str):
        return ""
    cleaned = " ".join(html.unescape(_TAG.sub("", text)).split())
    return cleaned[:limit]


def _web_url(url: Any) -> bool:
    if not isinstance(url, str):
        return False
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def _seconds(timeout: httpx.Timeout) -> str:
    value = timeout.read or timeout.connect or 0
    return f"{value:g} s"


class _Provider:
    """Shared HTTP handling; subclasses build the request and read the hits."""

    name = "the search provider"

    def __init__(self, key: str, *, base_url: str, timeout: httpx.Timeout = TIMEOUT) -> None:
        if not isinstance(key, str) or not key.strip():
            raise ValueError(f"{self.name} needs an API key")
        if not _web_url(base_url):
            raise ValueError(f"{self.name}'s base URL must be an http(s) URL, got {base_url!r}")
        self.key = key.strip()
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout

    async def _json(self, method: str, path: str, **kwargs: Any) -> Any:
        url = self.base_url + path
        try:
            async with httpx.AsyncClient(timeout=self.timeout, follow_redirects=False) as client:
                response = await client.request(method, url, **kwargs)
        except httpx.TimeoutException as exc:
            raise SearchFailed(f"{self.name} did not answer within {_seconds(self.timeout)}.") from exc
        except httpx.HTTPError as exc:
            raise SearchFailed(f"{self.name} could not be reached ({type(exc).__name__}).") from exc
        status = response.status_code
        if status in (401, 403):
            raise SearchFailed(f"{self.name} refused the API key (HTTP {status}); check it in Settings.")
        if status == 429:
            raise SearchFailed(f"{self.name} is rate limiting or the plan's quota is used up (HTTP 429).")
        if status != 200:
            raise SearchFailed(f"{self.name} answered HTTP {status} instead of search results.")
        try:
            return response.json()
        except ValueError as exc:
            raise SearchFailed(f"{self.name} answered with something that is not JSON.") from exc

    def _hits(self, rows: Any, title: str, url: str, snippet: str, limit: int) -> list[SearchHit]:
        if not isinstance(rows, list):
            raise SearchFailed(f"{self.name} answered JSON in an unexpected shape (no list of results).")
        hits: list[SearchHit] = []
        for row in rows:
            if isinstance(row, dict) and _web_url(row.get(url)):
                hits.append(
                    Hit(
                        title=_plain(row.get(title), 300) or row[url],
                        url=row[url],
                        snippet=_plain(row.get(snippet), 600),
                    )
                )
            if len(hits) >= limit:
                break
        return hits

    @staticmethod
    def _limit(limit: int) -> int:
        return max(1, min(MAX_HITS, int(limit)))

    async def read_page(self, url: str) -> str:
        """The page's main text (`read_page` below)."""
        return await read_page(url, limits=self.timeout)


class TavilySearch(_Provider):
    """Tavily: `POST {base}/search` with a JSON body, the key as a bearer token."""

    name = "Tavily"

    def __init__(
        self, key: str, *, base_url: str = "https://api.tavily.com", timeout: httpx.Timeout = TIMEOUT
    ) -> None:
        super().__init__(key, base_url=base_url, timeout=timeout)

    async def search(self, query: str, *, limit: int = 5) -> list[SearchHit]:
        """Up to `limit` (1-10) hits. Raises SearchFailed."""
        body = {"query": query, "max_results": self._limit(limit), "search_depth": "basic"}
        data = await self._json("POST", "/search", json=body, headers={"Authorization": f"Bearer {self.key}"})
        rows = data.get("results") if isinstance(data, dict) else None
        return self._hits(rows, "title", "url", "content", self._limit(limit))


class BraveSearch(_Provider):
    """Brave Search: `GET {base}/res/v1/web/search`, the key in `X-Subscription-Token`."""

    name = "Brave Search"

    def __init__(
        self, key: str, *, base_url: str = "https://api.search.brave.com", timeout: httpx.Timeout = TIMEOUT
    ) -> None:
        super().__init__(key, base_url=base_url, timeout=timeout)

    async def search(self, query: str, *, limit: int = 5) -> list[SearchHit]:
        """Up to `limit` (1-10) hits. Raises SearchFailed."""
        data = await self._json(
            "GET",
            "/res/v1/web/search",
            params={"q": query, "count": self._limit(limit)},
            headers={"X-Subscription-Token": self.key, "Accept": "application/json"},
        )
        if not isinstance(data, dict):
            raise SearchFailed(f"{self.name} answered JSON in an unexpected shape (no list of results).")
        web = data.get("web")
        if web is None and "type" in data:
            return []  # a valid answer with no web results
        rows = web.get("results") if isinstance(web, dict) else None
        return self._hits(rows, "title", "url", "description", self._limit(limit))


class GoogleSearch(_Provider):
    """Google Programmable Search: `GET {base}/customsearch/v1?key=…&cx=…&q=…`."""

    name = "Google Programmable Search"

    def __init__(
        self,
        key: str,
        cx: str,
        *,
        base_url: str = "https://www.googleapis.com",
        timeout: httpx.Timeout = TIMEOUT,
    ) -> None:
        super().__init__(key, base_url=base_url, timeout=timeout)
        if not isinstance(cx, str) or not cx.strip():
            raise ValueError("Google Programmable Search needs a search engine id (cx)")
        self.cx = cx.strip()

    async def search(self, query: str, *, limit: int = 5) -> list[SearchHit]:
        """Up to `limit` (1-10) hits. Raises SearchFailed."""
        data = await self._json(
            "GET",
            "/customsearch/v1",
            params={"key": self.key, "cx": self.cx, "q": query, "num": self._limit(limit)},
        )
        if not isinstance(data, dict):
            raise SearchFailed(f"{self.name} answered JSON in an unexpected shape (no list of results).")
        if "items" not in data and "searchInformation" in data:
            return []  # Google omits `items` when nothing matched
        return self._hits(data.get("items"), "title", "link", "snippet", self._limit(limit))


def _extract(markup: str) -> str:
    import trafilatura

    return trafilatura.extract(markup, include_comments=False, include_tables=True) or ""


async def read_page(url: str, *, limits: httpx.Timeout = TIMEOUT) -> str:
    """The main text of a web page, at most `MAX_PAGE_CHARS` characters (longer text ends with
    "[…]"). Reads at most `MAX_PAGE_BYTES` bytes, follows up to 5 redirects.

    Raises:
        SearchFailed: not an http(s) URL, unreachable, timed out, a status other than 200, not a
            text page (a PDF, an image), or no readable text in it.
    """
    if not _web_url(url):
        raise SearchFailed("Only http and https pages can be read.")
    host = urlsplit(url).hostname
    try:
        async with (
            httpx.AsyncClient(timeout=limits, follow_redirects=True, max_redirects=5) as client,
            client.stream("GET", url, headers={"Accept": "text/html,text/plain;q=0.9"}) as response,
        ):
            if response.status_code != 200:
                raise SearchFailed(f"The page at {host} answered HTTP {response.status_code}.")
            kind = response.headers.get("content-type", "text/html").split(";")[0].strip().lower()
            if kind not in _TEXT_TYPES:
                raise SearchFailed(f"The page at {host} is not a text page ({kind}).")
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) >= MAX_PAGE_BYTES:
                    del body[MAX_PAGE_BYTES:]
                    break
            encoding = response.charset_encoding or "utf-8"
    except httpx.TimeoutException as exc:
        raise SearchFailed(f"The page at {host} did not answer within {_seconds(limits)}.") from exc
    except httpx.TooManyRedirects as exc:
        raise SearchFailed(f"The page at {host} redirected too many times.") from exc
    except httpx.HTTPError as exc:
        raise SearchFailed(f"The page at {host} could not be reached ({type(exc).__name__}).") from exc
    try:
        markup = bytes(body).decode(encoding, errors="replace")
    except LookupError:
        markup = bytes(body).decode("utf-8", errors="replace")
    text = markup if kind == "text/plain" else await asyncio.to_thread(_extract, markup)
    text = text.strip()
    if not text:
        raise SearchFailed(f"The page at {host} holds no readable text.")
    if len(text) > MAX_PAGE_CHARS:
        text = text[: MAX_PAGE_CHARS - 3] + "[…]"
    return text


def build_search(
    settings: ResearchSettings, key: str | None, *, timeout: httpx.Timeout = TIMEOUT
) -> WebSearch | None:
    """The configured provider, or None when research is off: no provider chosen, no key, or
    Google without its search engine id (`google_cx`). `settings.base_url` overrides the origin."""
    if settings.provider is None or not key or not key.strip():
        return None
    extra: dict[str, Any] = {"timeout": timeout}
    if settings.base_url:
        extra["base_url"] = settings.base_url
    if settings.provider == "tavily":
        return TavilySearch(key, **extra)
    if settings.provider == "brave":
        return BraveSearch(key, **extra)
    if not settings.google_cx:
        return None
    return GoogleSearch(key, settings.google_cx, **extra)
