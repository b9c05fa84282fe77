"""Issue 26 item 5: the accepted Host and Origin shapes, proved with generated inputs.

The oracle below is written independently of `server.api.machine_room.security`'s regular expression: a Host
passes exactly when it is one of `127.0.0.1`, `localhost` (any case) or `[::1]`, optionally
followed by `:port` with port a decimal 1..65535 without a leading zero; an Origin passes exactly
when it is `http://` + that same host and port (a missing port is 80 on both sides).
"""

from __future__ import annotations

import string

import hypothesis.strategies as st
from hypothesis import example, given, settings

from server.api.machine_room.security import loopback_authority, refusal_reason

NAMES = ("127.0.0.1", "localhost", "[::1]")
FRAGMENTS = [
    "",
    ":",
    "::",
    "@",
    ".",
    " ",
    "\t",
    "\x00",
    "%",
    "%2e",
    "%3A",
    "[",
    "]",
    "/",
    "\\",
    "#",
    "?",
    "0",
    "8765",
    ":80",
    ":0",
    ":65536",
    ":08765",
    "a@",
    "user:pw@",
    "127.0.0.2",
    "127.1",
    "2130706433",
    "0x7f.0.0.1",
    "[0:0:0:0:0:0:0:1]",
    "[::ffff:127.0.0.1]",
    "::1",
    "localhost.",
    "evil.example",
    "ｌｏｃａｌｈｏｓｔ",
    "٨٧٦٥",
    "é",
]


def oracle_authority(value: str) -> tuple[str, int] | None:
    for name in NAMES:
        lowered = value.lower() if value.isascii() else value
        if lowered == name:
            return name, 80
        if lowered.startswith(name + ":"):
            port = value[len(name) + 1 :]
            ok = port.isascii() and port.isdigit() and not port.startswith("0") and 1 <= int(port) <= 65535
            return (name, int(port)) if ok else None
    return None


def passes(headers: dict[str, str], method: str = "POST") -> bool:
    return (
        refusal_reason(headers, "/api/chats", method=method, token=None, allowed_origins=frozenset()) is None
    )


valid_hosts = st.builds(
    lambda name, port: name + (f":{port}" if port is not None else ""),
    st.sampled_from([*NAMES, "LOCALHOST", "LocalHost"]),
    st.none() | st.integers(1, 65535),
)


@st.composite
def mutated(draw: st.DrawFn, base: st.SearchStrategy[str]) -> str:
    """A valid value with fragments inserted, replaced or appended at random places."""
    value = draw(base)
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(value)))
        cut = draw(st.integers(0, 2))
        fragment = draw(st.sampled_from(FRAGMENTS) | st.text(max_size=4))
        value = value[:at] + fragment + value[at + cut :]
    return value


any_host = valid_hosts | mutated(valid_hosts) | st.text(max_size=30) | st.sampled_from(FRAGMENTS)


@given(any_host)
@settings(max_examples=1500)
@example("a@127.0.0.1")
@example("127.0.0.1:80:80")
@example("127.0.0.1.")
@example(" 127.0.0.1")
@example("127.0.0.1%3A8765")
@example("127.0.0.1\x00")
@example("127.0.0.2:8765")
@example("::1")
@example("[::1]:8765")
@example("")
def test_a_host_passes_exactly_when_it_has_the_loopback_shape(host: str) -> None:
    expected = oracle_authority(host)
    assert loopback_authority(host) == (None if expected is None else (expected[0], expected[1]))
    assert passes({"host": host}) == (expected is not None), host


schemes = st.sampled_from(["http", "https", "HTTP", "ws", "file", "", "http:", "chrome-extension"])
suffixes = st.sampled_from(["", "/", "/x", "?", "#", " ", ":", "."])
any_origin = (
    st.builds(lambda s, h, x: f"{s}://{h}{x}", schemes, valid_hosts | mutated(valid_hosts), suffixes)
    | st.text(max_size=30)
    | st.sampled_from(["null", "http://", "http://evil.example", "https://127.0.0.1:8765"])
)


@given(host=valid_hosts, origin=any_origin)
@settings(max_examples=1500)
@example(host="127.0.0.1:8765", origin="https://127.0.0.1:8765")
@example(host="127.0.0.1:8765", origin="http://127.0.0.1:8765")
@example(host="127.0.0.1:8765", origin="http://localhost:8765")
@example(host="127.0.0.1", origin="http://127.0.0.1")
@example(host="127.0.0.1:80", origin="http://127.0.0.1")
def test_an_origin_passes_exactly_when_it_is_the_hosts_own_http_origin(host: str, origin: str) -> None:
    own = oracle_authority(host)
    assert own is not None
    theirs = oracle_authority(origin.removeprefix("http://")) if origin.startswith("http://") else None
    for method in ("GET", "POST"):
        assert passes({"host": host, "origin": origin}, method) == (theirs == own), (host, origin)


@given(
    st.dictionaries(
        st.sampled_from(["host", "origin", "sec-fetch-site", "x-lh-token", "cookie", "referer"]),
        st.text(alphabet=string.printable + "\x00\x80\xff", max_size=40),
    ),
    st.sampled_from(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "get"]),
    st.sampled_from(["/api", "/api/chat", "/api/health", "/", "/assets/x.js", "/apiary", ""]),
    st.none() | st.text(max_size=10),
)
@settings(max_examples=800)
def test_refusals_are_sentences_and_a_pass_meets_every_rule(
    headers: dict[str, str], method: str, path: str, token: str | None
) -> None:
    """Any header combination: either a sentence, or a request that meets all three rules."""
    why = refusal_reason(headers, path, method=method, token=token, allowed_origins=frozenset())
    if why is not None:
        assert isinstance(why, str) and len(why) < 400
        return
    own = oracle_authority(headers.get("host", ""))
    assert own is not None
    if "origin" in headers:
        assert oracle_authority(headers["origin"].removeprefix("http://")) == own
        assert headers["origin"].startswith("http://")
    site = headers.get("sec-fetch-site")
    api = path == "/api" or path.startswith("/api/")
    if site not in (None, "same-origin"):
        assert method in ("GET", "HEAD") and (not api or site == "none")
    if token and api:
        assert headers.get("x-lh-token") == token
