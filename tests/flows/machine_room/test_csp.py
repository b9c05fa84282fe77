"""The Content-Security-Policy on everything the server serves (issue 19, item 4; decision 0020).

Every response of `python -m server`'s app — the home page, a deep link, a built asset, an unknown
page, API JSON, a 404, a refusal — carries the app's policy (scripts from the app only; the one
outside connection is Deepgram's socket; frames from the app only; no plugins, no framing of the
app). A finished demo's page carries its own, sandboxed policy instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from server.api.app import create_app
from server.api.machine_room.csp import DEMO_POLICY, app_policy
from server.config import DataPaths
from server.core.contracts.jobs import DemoArtifact, JobRecord, ResearchArtifact, Source, WorkerResult
from server.core.machine_room.dictation import dictation_endpoints
from server.services.bootstrap import Services, build_services
from tests.fakes import FakeSecrets
from tests.livehttp import serve

DIRECTIVES = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self' 'unsafe-inline'",
    "img-src": "'self' data: blob:",
    "font-src": "'self' data:",
    "connect-src": "'self' wss://api.deepgram.com",
    "frame-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'self'",
    "frame-ancestors": "'none'",
}


def parse(policy: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in policy.split(";"):
        name, _, value = part.strip().partition(" ")
        assert name not in out, f"{name} twice in {policy!r}"
        out[name] = value.strip()
    return out


def assert_app_policy(response: httpx.Response) -> None:
    policies = response.headers.get_list("content-security-policy")
    assert len(policies) == 1, (response.url, policies)
    found = parse(policies[0])
    for name, value in DIRECTIVES.items():
        assert found.get(name) == value, (response.url, name, found.get(name))
    assert "'unsafe-eval'" not in policies[0]
    assert "unsafe-inline" not in found["script-src"] and "unsafe-inline" not in found["default-src"]


@pytest.fixture
def site(tmp_path: Path, data_dir: Path) -> Iterator[tuple[httpx.Client, Services]]:
    static = tmp_path / "static"
    (static / "assets").mkdir(parents=True)
    (static / "index.html").write_text(
        '<!doctype html><title>LH</title><script type="module" src="/assets/app.js"></script>'
    )
    (static / "assets" / "app.js").write_text("console.log('app');\n")
    data_dir.mkdir(parents=True, exist_ok=True)
    services = build_services(DataPaths(data_dir), offline=False, secrets=FakeSecrets())
    app = create_app(services, static_root=static, environ={})
    with serve(app) as url, httpx.Client(base_url=url, timeout=30) as client:
        yield client, services


def test_every_page_asset_and_api_answer_carries_the_policy(site: tuple[httpx.Client, Services]) -> None:
    client, _ = site
    for path, status in [
        ("/", 200),
        ("/chat/c_deep_link", 200),
        ("/practice/p_x", 200),
        ("/settings", 200),
        ("/assets/app.js", 200),
        ("/no/such/page", 200),  # the app's own not-found page
        ("/api/health", 200),
        ("/api/no-such-route", 404),
        ("/api/chats/c_missing", 404),
        ("/api/jobs/job_missing/demo", 404),
    ]:
        response = client.get(path)
        assert response.status_code == status, (path, response.status_code)
        assert_app_policy(response)
    # a malformed body's 400 and a foreign origin's 403 carry it too
    bad = client.post("/api/dictation/token", content=b"{", headers={"content-type": "application/json"})
    assert bad.status_code == 400
    assert_app_policy(bad)
    foreign = client.get("/api/health", headers={"origin": "https://evil.example"})
    assert foreign.status_code == 403
    assert_app_policy(foreign)


def _job(job_id: str, artifact: DemoArtifact | ResearchArtifact) -> JobRecord:
    now = datetime.now(UTC).isoformat()
    return JobRecord(
        id=job_id,
        chat_id="c_1",
        tool_call_id="call_1",
        kind=artifact.kind,
        input={"request": "x"},
        status="done",
        created_at=now,
        finished_at=now,
        result=WorkerResult(text="done", artifact=artifact),
    )


def test_a_demo_page_has_its_own_sandboxed_policy(site: tuple[httpx.Client, Services]) -> None:
    client, services = site
    html = "<!doctype html><canvas id=c></canvas><script>c.getContext('2d').fillRect(0,0,9,9)</script>"
    services.stores.jobs.save(_job("job_demo1", DemoArtifact(title="Box", html=html)))
    services.stores.jobs.save(
        _job(
            "job_research1",
            ResearchArtifact(
                question="q", summary="s [1]", sources=[Source(title="t", url="https://example.org/")]
            ),
        )
    )
    response = client.get("/api/jobs/job_demo1/demo")
    assert response.status_code == 200
    assert response.text == html
    assert response.headers["content-type"].startswith("text/html")
    assert response.headers.get_list("content-security-policy") == [DEMO_POLICY]
    demo = parse(DEMO_POLICY)
    assert demo["sandbox"] == "allow-scripts"  # an opaque origin even when opened outside its frame
    assert demo["default-src"] == "'none'" and demo["frame-ancestors"] == "'self'"
    assert response.headers["referrer-policy"] == "no-referrer"
    # a job that is not a demo, or an id that is no job, has no demo page
    for path in (
        "/api/jobs/job_research1/demo",
        "/api/jobs/..%2Fsettings/demo",
        f"/api/jobs/{'j' * 300}/demo",
    ):
        missing = client.get(path)
        assert missing.status_code == 404, path
        assert_app_policy(missing)


def test_the_socket_origin_follows_the_configured_deepgram() -> None:
    for base, origin in [
        ("https://api.deepgram.com", "wss://api.deepgram.com"),
        ("https://api.deepgram.com/", "wss://api.deepgram.com"),
        ("http://127.0.0.1:8123", "ws://127.0.0.1:8123"),
        ("https://dg.example.org:8443/proxy/", "wss://dg.example.org:8443"),
        ("http://[::1]:9000", "ws://[::1]:9000"),
    ]:
        endpoints = dictation_endpoints(base)
        assert endpoints.socket_origin == origin, base
        assert parse(app_policy(endpoints.socket_origin))["connect-src"] == f"'self' {origin}"
    assert dictation_endpoints("https://dg.example.org:8443/proxy/").listen_url.startswith(
        "wss://dg.example.org:8443/proxy/v1/listen?"
    )
    for bad in ("ftp://x", "api.deepgram.com", "https://", "https://h:99999", "https://h/?q=1"):
        with pytest.raises(ValueError, match="LH_DEEPGRAM_API_BASE"):
            dictation_endpoints(bad)
    for bad in ("https://x", "wss://x/path", "wss://x; script-src *", "wss://x 'unsafe-inline'"):
        with pytest.raises(ValueError):
            app_policy(bad)
