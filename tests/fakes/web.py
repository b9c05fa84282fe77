"""A small web on loopback for the researcher's tests: a real HTTP server in a thread
(`ThreadingHTTPServer` on 127.0.0.1, a free port) serving

- fake search APIs: Tavily `POST /search`, Brave `GET /res/v1/web/search`, Google
  `GET /customsearch/v1`, whose hits point at this server's own pages;
- pages `GET /pages/<name>` with real paragraphs (`pages`), and `GET /slow` which answers after
  `slow_s` seconds (longer than a test client's read timeout);
- failure modes for the search APIs: `mode = "garbage"` (200 with a body that is not JSON),
  `"slow"` (answers after `slow_s`), `"error"` (HTTP 500 with a body that must never be shown),
  `"unauthorized"` (401).

`requests` records (method, path, headers, body) of every request. Use as a context manager.
"""

from __future__ import annotations

import contextlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

PAGES: dict[str, tuple[str, str]] = {
    "photosynthesis": (
        "Photosynthesis explained",
        "Photosynthesis is the process by which green plants, algae and some bacteria turn light energy "
        "into chemical energy. In the chloroplasts, chlorophyll absorbs mostly red and blue light. "
        "Water is split, releasing oxygen, and carbon dioxide is fixed into sugars in the Calvin cycle. "
        "The overall equation is six molecules of carbon dioxide and six of water giving one glucose "
        "and six oxygen.",
    ),
    "light-reactions": (
        "The light-dependent reactions",
        "The light-dependent reactions take place in the thylakoid membranes. Photosystem II uses light "
        "to split water, producing oxygen, protons and electrons. The electrons pass along a transport "
        "chain to photosystem I, pumping protons that drive ATP synthase. NADPH is made at the end of "
        "the chain and both ATP and NADPH power the Calvin cycle in the stroma.",
    ),
    "calvin-cycle": (
        "The Calvin cycle",
        "The Calvin cycle fixes carbon dioxide using the enzyme RuBisCO, which attaches it to ribulose "
        "bisphosphate. The products are reduced with ATP and NADPH into three-carbon sugars; most are "
        "recycled to regenerate ribulose bisphosphate and some leave the cycle to build glucose.",
    ),
}
SECRET_BODY = "INTERNAL-STACK-TRACE secret=sk-should-never-be-shown"


def page_html(title: str, text: str) -> str:
    paragraphs = "".join(f"<p>{sentence.strip()}.</p>" for sentence in text.split(". ") if sentence.strip())
    return (
        f"<!doctype html><html><head><title>{title}</title></head><body>"
        "<nav><a href='/'>Home</a> | <a href='/about'>About</a></nav>"
        f"<article><h1>{title}</h1>{paragraphs}</article>"
        "<footer>Copyright the fake web.</footer></body></html>"
    )


class FakeWeb:
    def __init__(self, *, slow_s: float = 2.0) -> None:
        self.mode = "ok"
        self.slow_s = slow_s
        self.pages = dict(PAGES)
        self.requests: list[tuple[str, str, dict[str, str], bytes]] = []
        self._stop = threading.Event()
        web = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: Any) -> None:
                pass

            def do_GET(self) -> None:
                web._handle(self, "GET")

            def do_POST(self) -> None:
                web._handle(self, "POST")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.block_on_close = False
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def url(self, name: str) -> str:
        return f"{self.base_url}/pages/{name}"

    def __enter__(self) -> FakeWeb:
        self._thread.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self._stop.set()
        self.server.shutdown()
        self.server.server_close()

    # -- the handler ----------------------------------------------------------------------------
    def _hits(self, query: str) -> list[tuple[str, str, str]]:
        words = {w.lower() for w in query.split() if len(w) > 3}
        chosen = [
            (title, self.url(name), text[:140])
            for name, (title, text) in self.pages.items()
            if not words or words & set((title + " " + text).lower().replace(",", " ").split())
        ]
        return chosen or [(title, self.url(name), text[:140]) for name, (title, text) in self.pages.items()]

    def _send(self, handler: BaseHTTPRequestHandler, status: int, body: str, kind: str) -> None:
        data = body.encode("utf-8")
        handler.send_response(status)
        handler.send_header("Content-Type", kind)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        with contextlib.suppress(OSError):  # the client gave up (a timeout test)
            handler.wfile.write(data)

    def _sleep(self) -> None:
        self._stop.wait(self.slow_s)

    def _handle(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        parts = urlsplit(handler.path)
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        self.requests.append((method, parts.path, dict(handler.headers.items()), body))
        query = parse_qs(parts.query)
        search_paths = {"/search", "/res/v1/web/search", "/customsearch/v1"}
        if parts.path in search_paths:
            if self.mode == "slow":
                self._sleep()
            if self.mode == "garbage":
                return self._send(handler, 200, "<html>Gateway says hi {not json", "application/json")
            if self.mode == "error":
                return self._send(handler, 500, SECRET_BODY, "text/plain")
            if self.mode == "unauthorized":
                return self._send(handler, 401, json.dumps({"detail": SECRET_BODY}), "application/json")
        if parts.path == "/search" and method == "POST":
            q = json.loads(body or b"{}").get("query", "")
            results = [{"title": t, "url": u, "content": s, "score": 0.9} for t, u, s in self._hits(q)]
            return self._send(handler, 200, json.dumps({"query": q, "results": results}), "application/json")
        if parts.path == "/res/v1/web/search":
            q = query.get("q", [""])[0]
            results = [
                {"title": f"<strong>{t}</strong>", "url": u, "description": s} for t, u, s in self._hits(q)
            ]
            payload = {"type": "search", "web": {"type": "search", "results": results}}
            return self._send(handler, 200, json.dumps(payload), "application/json")
        if parts.path == "/customsearch/v1":
            q = query.get("q", [""])[0]
            items = [{"title": t, "link": u, "snippet": s} for t, u, s in self._hits(q)]
            return self._send(
                handler, 200, json.dumps({"kind": "customsearch#search", "items": items}), "application/json"
            )
        if parts.path.startswith("/pages/"):
            name = parts.path.removeprefix("/pages/")
            if name not in self.pages:
                return self._send(handler, 404, "<html><body><p>Not found</p></body></html>", "text/html")
            title, text = self.pages[name]
            return self._send(handler, 200, page_html(title, text), "text/html; charset=utf-8")
        if parts.path == "/slow":
            self._sleep()
            return self._send(handler, 200, page_html("Late", "This page came too late. " * 5), "text/html")
        if parts.path == "/empty":
            return self._send(handler, 200, "<html><body></body></html>", "text/html")
        if parts.path == "/file.pdf":
            return self._send(handler, 200, "%PDF-1.4 ...", "application/pdf")
        return self._send(handler, 404, "not found", "text/plain")
