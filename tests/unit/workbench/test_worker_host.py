"""Which job tools the teacher is offered, and which models a worker runs on (issue 14, item 3):
research only with a provider that can search (its key, and Google's engine id), demo and visual
only where the headless browser runs; a visual job gets the vision slot's model."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_ai.models.test import TestModel

from server.core.contracts.jobs import DemoArtifact, WorkerResult, WorkerUsage
from server.core.contracts.models import (
    ModelSlot,
    ModelSlots,
    ResearchSettings,
    ResolvedModel,
    RoleOverrides,
    Settings,
)
from server.services.machine_room.models import ModelService
from server.services.workbench import workers
from server.services.workbench.workers import WorkerHost
from tests.fakes import FakeSecrets, FakeSettingsStore


class Browser:
    """A headless-browser port that only answers `available` (raises when told it cannot start)."""

    def __init__(self, available: bool | Exception) -> None:
        self._available = available

    def available(self) -> bool:
        if isinstance(self._available, Exception):
            raise self._available
        return self._available

    async def run_html(self, html: str, *, timeout_s: float = 10.0) -> Any:
        raise AssertionError("not run here")

    async def render_svg(self, svg: str, *, width: int = 800, height: int = 600) -> Any:
        raise AssertionError("not run here")


def host(
    research: ResearchSettings,
    keys: dict[str, str],
    browser: bool | Exception = True,
    slots: ModelSlots | None = None,
) -> WorkerHost:
    settings = Settings(research=research, models=slots or ModelSlots())
    built: dict[str, TestModel] = {}

    def factory(resolved: ResolvedModel, key: str | None, url: str | None) -> TestModel:
        return built.setdefault(resolved.model, TestModel(model_name=resolved.model))

    store = FakeSettingsStore(settings)
    models = ModelService(store, FakeSecrets(keys), None, factory, environ={})  # type: ignore[arg-type]
    return WorkerHost(models, Browser(browser), store)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("research", "keys", "browser", "offered"),
    [
        (ResearchSettings(), {"tavily": "tv-key"}, True, ["demo", "visual"]),  # no provider chosen
        (ResearchSettings(provider="tavily"), {}, True, ["demo", "visual"]),  # no key
        (ResearchSettings(provider="tavily"), {"tavily": "tv-key"}, True, ["research", "demo", "visual"]),
        (ResearchSettings(provider="brave"), {"brave": "  "}, True, ["demo", "visual"]),  # a blank key
        (ResearchSettings(provider="google"), {"google": "g-key"}, True, ["demo", "visual"]),  # no cx
        (
            ResearchSettings(provider="google", google_cx="cx1"),
            {"google": "g-key"},
            True,
            ["research", "demo", "visual"],
        ),
        (ResearchSettings(provider="tavily"), {"tavily": "tv-key"}, False, ["research"]),  # no browser
        (ResearchSettings(), {}, RuntimeError("chromium is missing"), []),  # a browser check that fails
    ],
)
def test_the_job_tools_offered(
    research: ResearchSettings, keys: dict[str, str], browser: bool | Exception, offered: list[str]
) -> None:
    assert host(research, keys, browser).job_kinds() == offered


async def test_a_visual_job_runs_on_the_vision_slots_model(monkeypatch: pytest.MonkeyPatch) -> None:
    slots = ModelSlots(
        strong=ModelSlot(provider="openai", model="gpt-strong"),
        vision=ModelSlot(provider="openai", model="gpt-vision"),
    )
    worker_host = host(ResearchSettings(), {"openai": "sk-test"}, slots=slots)
    seen: list[Any] = []

    async def run_worker(kind: str, tool_input: dict[str, Any], deps: Any) -> tuple[WorkerResult, Any]:
        seen.append((kind, deps))
        return WorkerResult(text="ok", artifact=DemoArtifact(title="t", html="<p>t</p>")), WorkerUsage()

    monkeypatch.setattr(workers, "run_worker", run_worker)
    await worker_host.run("visual", {"request": "a tangent line"})
    await worker_host.run("demo", {"request": "a slider"})
    (visual_kind, visual), (demo_kind, demo) = seen
    assert visual_kind == "visual" and visual.model.model_name == "gpt-strong"
    assert visual.vision is not None and visual.vision.model_name == "gpt-vision"
    assert demo_kind == "demo" and demo.vision is None  # only the visual-maker looks at pictures
    assert demo.search is None


async def test_without_a_vision_slot_a_visual_job_is_not_looked_at(monkeypatch: pytest.MonkeyPatch) -> None:
    slots = ModelSlots(strong=ModelSlot(provider="openai", model="gpt-strong"))
    worker_host = host(ResearchSettings(), {"openai": "sk-test"}, slots=slots)
    seen: list[Any] = []

    async def run_worker(kind: str, tool_input: dict[str, Any], deps: Any) -> tuple[WorkerResult, Any]:
        seen.append(deps)
        return WorkerResult(text="ok", artifact=DemoArtifact(title="t", html="<p>t</p>")), WorkerUsage()

    monkeypatch.setattr(workers, "run_worker", run_worker)
    await worker_host.run("visual", {"request": "a tangent line"})
    assert seen[0].vision is None


async def test_each_job_kind_runs_its_roles_override_and_names_the_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 30 item 2: a Workbench helper's override in settings' `roles` is what it runs, the
    picture checker's override looks at a visual without a vision slot, and the job's usage
    names the models that ran."""
    slots = ModelSlots(strong=ModelSlot(provider="openai", model="gpt-strong"))
    worker_host = host(ResearchSettings(), {"openai": "sk-test"}, slots=slots)
    settings = worker_host.settings.load()
    settings.roles = RoleOverrides.model_validate(
        {
            "demoBuilder": {"provider": "openai", "model": "gpt-demo"},
            "visualCheck": {"provider": "openai", "model": "gpt-eyes"},
        }
    )
    worker_host.settings.save(settings)
    seen: list[Any] = []

    async def run_worker(kind: str, tool_input: dict[str, Any], deps: Any) -> tuple[WorkerResult, Any]:
        seen.append(deps)
        return WorkerResult(text="ok", artifact=DemoArtifact(title="t", html="<p>t</p>")), WorkerUsage(
            requests=1
        )

    monkeypatch.setattr(workers, "run_worker", run_worker)
    _, demo_usage = await worker_host.run("demo", {"request": "a slider"})
    _, visual_usage = await worker_host.run("visual", {"request": "a tangent line"})
    assert seen[0].model.model_name == "gpt-demo" and seen[0].vision is None
    assert seen[1].model.model_name == "gpt-strong"  # the visual maker is not overridden
    assert seen[1].vision is not None and seen[1].vision.model_name == "gpt-eyes"
    assert (demo_usage.model, demo_usage.vision_model, demo_usage.requests) == ("gpt-demo", None, 1)
    assert (visual_usage.model, visual_usage.vision_model) == ("gpt-strong", "gpt-eyes")
    # the job record's usage as GET /api/chats/{id}/jobs serves it (frontend jobUsageLine reads it)
    assert visual_usage.model_dump(by_alias=True)["visionModel"] == "gpt-eyes"


async def test_a_failed_job_still_names_the_model_it_spent_on(monkeypatch: pytest.MonkeyPatch) -> None:
    slots = ModelSlots(strong=ModelSlot(provider="openai", model="gpt-strong"))
    worker_host = host(ResearchSettings(), {"openai": "sk-test"}, slots=slots)

    class Spent(RuntimeError):
        usage = WorkerUsage(requests=2)

    async def run_worker(kind: str, tool_input: dict[str, Any], deps: Any) -> tuple[WorkerResult, Any]:
        raise Spent("the demo did not run")

    monkeypatch.setattr(workers, "run_worker", run_worker)
    with pytest.raises(Spent) as failed:
        await worker_host.run("demo", {"request": "a slider"})
    assert failed.value.usage.model == "gpt-strong" and failed.value.usage.requests == 2
