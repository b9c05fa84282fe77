"""The offline model's background build in the page's banner, in Chromium (issue 29, item 1).

The server runs as `make run` runs it while llama.cpp is not installed: the builder (named by
`LH_OFFLINE_BUILD_COMMAND`: tests/fake_llama_build.py, the real builder's protocol, held until
released) builds in the background. The banner says the build's step, files and time in the
server's words and where a key, a subscription or a local model server is set up meanwhile, and
not the untrue "install the 'local' extra" advice; when the build ends the page, asking every few
seconds, shows the offline demo model without a reload, and no build banner. A failed build says
why and that lessons can still run on the learner's own model. The offline model is the scripted
llama child on loopback.
"""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from server.api.app import create_app
from server.config import DataPaths
from server.services.bootstrap import build_services
from server.services.machine_room.offline_build import BUILD_COMMAND_ENV
from server.services.machine_room.offline_model import OfflineModelServer
from tests.fakes import FakeSecrets
from tests.livehttp import serve
from tests.unit.machine_room.test_offline_model import Scripted, gguf_file

pytestmark = pytest.mark.e2e
FAKE_BUILDER = Path(__file__).resolve().parents[2] / "fake_llama_build.py"


def serve_building(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch, *args: str
) -> Iterator[str]:
    command = [sys.executable, str(FAKE_BUILDER), "--release", str(tmp_path / "release"), *args]
    monkeypatch.setenv(BUILD_COMMAND_ENV, shlex.join(command))
    offline = OfflineModelServer(
        tmp_path / "logs" / "offline-model.log",
        gguf_file(tmp_path),
        command=Scripted(tmp_path, "ok").command,
        installed=False,
    )
    services = build_services(DataPaths(data_dir), secrets=FakeSecrets(), offline_server=offline)  # type: ignore[arg-type]
    with serve(create_app(services)) as url:
        yield url


@pytest.fixture
def building_url(tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    yield from serve_building(tmp_path, data_dir, monkeypatch)


def test_the_banner_follows_the_build_and_the_demo_model_arrives_without_a_reload(  # type: ignore[no-untyped-def]
    page, building_url: str, tmp_path: Path, data_dir: Path
) -> None:
    page.goto(building_url + "/")
    build = page.get_by_test_id("offline-build")
    expect(build).to_contain_text(
        re.compile(
            r"Building the offline model: step 1 of 2, compiling llama\.cpp \(20 of 40 files\), \d+ s so far"
        )
    )
    expect(build).to_contain_text(
        "Meanwhile a subscription, an API key or a model server on this computer works now"
    )
    expect(page.get_by_text("install the 'local' extra")).to_have_count(0)
    # the first screen says the demo is on its way rather than leaving its fourth way missing
    expect(page.get_by_test_id("first-run-demo-building")).to_contain_text("appears here when it is ready")
    expect(page.get_by_test_id("first-run-demo")).to_have_count(0)
    page.screenshot(path=str(data_dir.parent / "offline-build.png"))
    build.get_by_role("link", name="Settings").click()
    expect(page).to_have_url(re.compile(r"/settings$"))
    expect(page.get_by_test_id("offline-build")).to_be_visible()  # on every page

    (tmp_path / "release").touch()
    expect(page.get_by_test_id("offline-banner")).to_contain_text("SmolLM2-135M-Instruct", timeout=60_000)
    expect(page.get_by_test_id("offline-build")).to_have_count(0)
    page.get_by_role("link", name="Learning Harness").click()  # home, no reload: the demo is offered
    expect(page.get_by_test_id("first-run-demo")).to_be_visible()
    expect(page.get_by_test_id("first-run-demo-building")).to_have_count(0)


@pytest.fixture
def failing_url(tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    (tmp_path / "release").touch()
    yield from serve_building(
        tmp_path, data_dir, monkeypatch, "--exit", "1", "--last-line", "CMake Error: CMAKE_C_COMPILER not set"
    )


def test_a_failed_build_says_why_in_the_banner(page, failing_url: str) -> None:  # type: ignore[no-untyped-def]
    page.goto(failing_url + "/")
    build = page.get_by_test_id("offline-build")
    expect(build).to_contain_text("The offline model could not be built")
    expect(build).to_contain_text("CMAKE_C_COMPILER not set")
    expect(build).to_contain_text("Lessons can still run on a subscription, an API key or a model server")
