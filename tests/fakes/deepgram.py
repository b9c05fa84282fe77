"""A fake Deepgram on loopback for dictation's tests: a real HTTP server in a thread
(`ThreadingHTTPServer` on 127.0.0.1, a free port) answering Deepgram's token grant
`POST /v1/auth/grant` (`Authorization: Token <key>`, body `{"ttl_seconds": n}`) with
`{"access_token": <jwt-like>, "expires_in": n}` when the key is `valid_key`.

Modes: `"ok"`; `"unauthorized"` (401 with a body that must never be shown), `"forbidden"` (403),
`"error"` (500, same body), `"garbage"` (200, not JSON), `"no_token"` (200 JSON without a token),
`"odd"` (200 JSON of another shape), `"bad_request"` (400, not JSON), `"slow"` (answers after
`slow_s`). A wrong key gets 401 in any mode. `requests` records
(method, path, headers, body) of every request. Use as a context manager.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

VALID_KEY = "dg-test-key-0123456789abcdef"
SECRET_BODY = "INTERNAL-DEEPGRAM-TRACE request_id=should-never-be-shown"
TOKEN = "eyJhbGciOiJIUzI1NiJ9.fake-deepgram-jwt.signature"


class FakeDeepgram:
    def __init__(self, *, valid_key: str = VALID_KEY, slow_s: float = 2.0) -> None:
        self.mode = "ok"
        self.valid_key = valid_key
        self.slow_s = slow_s
        self.requests: list[tuple[str, str, dict[str, str], bytes]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: Any) -> None:
                pass

            def do_POST(self) -> None:
                fake._handle(self)

            def do_GET(self) -> None:
                fake._handle(self)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    @property
    def ws_origin(self) -> str:
        return f"ws://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FakeDeepgram:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _send(self, handler: BaseHTTPRequestHandler, status: int, body: bytes, kind: str) -> None:
        with contextlib.suppress(OSError):
            handler.send_response(status)
            handler.send_header("content-type", kind)
            handler.send_header("content-length", str(len(body)))
            handler.end_headers()
            handler.wfile.write(body)

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        body = handler.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in handler.headers.items()}
        self.requests.append((handler.command, handler.path, headers, body))
        if handler.command != "POST" or handler.path != "/v1/auth/grant":
            self._send(handler, 404, b'{"err_msg": "not found"}', "application/json")
            return
        secret = json.dumps({"err_code": "X", "err_msg": SECRET_BODY}).encode()
        if headers.get("authorization") != f"Token {self.valid_key}":
            self._send(handler, 401, secret, "application/json")
            return
        if self.mode == "slow":
            time.sleep(self.slow_s)
        if self.mode == "unauthorized":
            self._send(handler, 401, secret, "application/json")
        elif self.mode == "forbidden":
            self._send(handler, 403, secret, "application/json")
        elif self.mode == "error":
            self._send(handler, 500, SECRET_BODY.encode(), "text/plain")
        elif self.mode == "garbage":
            self._send(handler, 200, b"<html>not json</html>", "text/html")
        elif self.mode == "odd":
            self._send(handler, 200, b'[{"access_token": 1}]', "application/json")
        elif self.mode == "bad_request":
            self._send(handler, 400, b"<html>bad</html>", "text/html")
        elif self.mode == "no_token":
            self._send(handler, 200, b'{"expires_in": 30}', "application/json")
        else:
            ttl = json.loads(body or b"{}").get("ttl_seconds") or 30
            answer = json.dumps({"access_token": TOKEN, "expires_in": ttl}).encode()
            self._send(handler, 200, answer, "application/json")
