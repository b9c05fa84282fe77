"""Issue 26 item 5 over a real socket: the loopback guard refuses what the issue found accepted
(a state-changing request marked `Sec-Fetch-Site: cross-site` without an Origin, an `https`
Origin, malformed Host values, repeated security headers) and lets the app's own requests and
non-browser clients through. Raw bytes, so the Host and repeated headers are exactly as sent; a
refusal writes nothing (the session list stays empty)."""

from __future__ import annotations

import json
import socket
from urllib.parse import urlsplit

import pytest

from tests.flows.conftest import Live


def raw(url: str, head: bytes, body: bytes = b"{}") -> tuple[int, dict[str, str], bytes]:
    """Send `POST /api/chats` with the header block `head` (CRLF-separated, no Host added);
    the answer's status, lower-cased headers and body."""
    parts = urlsplit(url)
    request = b"POST /api/chats HTTP/1.1\r\n" + head + b"content-type: application/json\r\n"
    request += b"content-length: %d\r\nconnection: close\r\n\r\n" % len(body) + body
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    header_block, _, payload = data.partition(b"\r\n\r\n")
    lines = header_block.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return status, headers, payload


def sessions(live: Live) -> list[object]:
    chats: list[object] = live.client.get("/api/chats").json()["chats"]
    return chats


def test_the_issues_findings_are_refused_and_write_nothing(live: Live) -> None:
    host = urlsplit(live.url).netloc.encode()
    port = urlsplit(live.url).port or 80
    cases = {
        "cross-site, no Origin": b"host: %s\r\nsec-fetch-site: cross-site\r\n" % host,
        "same-site, no Origin": b"host: %s\r\nsec-fetch-site: same-site\r\n" % host,
        "none (typed URL) posting": b"host: %s\r\nsec-fetch-site: none\r\n" % host,
        "https Origin": b"host: %s\r\norigin: https://%s\r\n" % (host, host),
        "userinfo Host": b"host: a@%s\r\n" % host,
        "Host with two ports": b"host: %s:80\r\n" % host,
        "Host with a trailing dot": b"host: 127.0.0.1.:%d\r\n" % port,
        "percent-encoded Host": b"host: 127.0.0.1%%3A%d\r\n" % port,
        "another loopback IP": b"host: 127.0.0.2:%d\r\n" % port,
        "bare IPv6 Host": b"host: ::1\r\n",
        "two Hosts": b"host: %s\r\nhost: %s\r\n" % (host, host),
        "two Sec-Fetch-Site": b"host: %s\r\nsec-fetch-site: same-origin\r\nsec-fetch-site: cross-site\r\n"
        % host,
        "two Origins": b"host: %s\r\norigin: http://%s\r\norigin: http://%s\r\n" % (host, host, host),
    }
    for name, head in cases.items():
        status, headers, payload = raw(live.url, head)
        if status == 400 and name == "two Hosts":
            continue  # h11 refuses a repeated Host itself (RFC 9112 3.2); it never reaches the app
        assert status == 403, (name, status, payload)
        body = json.loads(payload)
        assert body["error"] == "forbidden" and body["detail"], (name, body)
        assert headers["content-type"] == "application/json"
    assert sessions(live) == []


def test_our_pages_and_non_browser_clients_pass(live: Live) -> None:
    host = urlsplit(live.url).netloc.encode()
    port = urlsplit(live.url).port or 80
    allowed = {
        "the app's own fetch": b"host: %s\r\norigin: http://%s\r\nsec-fetch-site: same-origin\r\n"
        % (host, host),
        "curl or Electron main": b"host: %s\r\n" % host,
        "localhost by name": b"host: localhost:%d\r\norigin: http://localhost:%d\r\n" % (port, port),
    }
    for name, head in allowed.items():
        status, _, payload = raw(live.url, head)
        assert status == 201, (name, status, payload)
    assert len(sessions(live)) == len(allowed)


@pytest.mark.parametrize("value", [b"127.0.0.1\x00", b"127.0.0.1 x", b"", b"\xff"])
def test_a_host_the_parser_or_the_guard_refuses_never_reaches_a_route(live: Live, value: bytes) -> None:
    status, _, payload = raw(live.url, b"host: %s\r\n" % value)
    assert status in (400, 403), (value, status, payload)
    assert sessions(live) == []
