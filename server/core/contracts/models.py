"""Model slots and settings contracts (seed §3: BYOK slots strong / cheap / vision).

`settings.json` in the data dir holds `{"models": {"strong": Slot|null, "cheap": ..., "vision": ...}}`.
Keys never live here: they come from the environment or the OS keychain.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, HttpUrl, field_validator, model_validator
from pydantic.alias_generators import to_camel

Provider = Literal[
    "openrouter",
    "openai",
    "openai-compatible",
    "local",
    "chatgpt",
    "github-copilot-subscription",
    "xai-subscription",
]
PROVIDERS: tuple[Provider, ...] = get_args(Provider)
"""The last three are subscription logins (issue 19; `server.core.machine_room.subscriptions`):
persisted routes distinct from the API-key routes, never falling back to them."""
KeyedProvider = Literal["openrouter", "openai", "openai-compatible"]
KEYED_PROVIDERS: tuple[KeyedProvider, ...] = ("openrouter", "openai", "openai-compatible")
SearchProviderName = Literal["tavily", "brave", "google"]
SEARCH_PROVIDERS: tuple[SearchProviderName, ...] = ("tavily", "brave", "google")
SecretName = Literal["openrouter", "openai", "openai-compatible", "tavily", "brave", "google", "deepgram"]
"""Whose key the key store holds: a model provider's, a web search provider's or the dictation
service's (Deepgram)."""
SlotName = Literal["strong", "cheap", "vision"]
SLOT_NAMES: tuple[SlotName, ...] = ("strong", "cheap", "vision")


class Camel(BaseModel):
    """Base for wire contracts: camelCase on the wire, snake_case in Python."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class ModelSlot(Camel):
    """One model slot: which provider serves which model id.

    Attributes:
        provider: openrouter | openai | openai-compatible (any base URL) | local (the offline model)
            | chatgpt | github-copilot-subscription | xai-subscription (subscription logins).
        model: the provider's model id, e.g. "anthropic/claude-sonnet-4" (1-200 chars).
        base_url: required for openai-compatible (e.g. "http://127.0.0.1:11434/v1"), ignored otherwise.
    """

    provider: Provider
    model: str = Field(min_length=1, max_length=200)
    base_url: str | None = None

    @field_validator("model")
    @classmethod
    def _strip_model(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("model id must not be blank")
        return value

    @field_validator("base_url")
    @classmethod
    def _check_base_url(cls, value: str | None) -> str | None:
        if value is None or value.strip() == "":
            return None
        HttpUrl(value)  # raises a ValueError naming what is wrong
        return value.strip().rstrip("/")

    @model_validator(mode="after")
    def _compatible_needs_url(self) -> ModelSlot:
        if self.provider == "openai-compatible" and not self.base_url:
            raise ValueError("provider openai-compatible needs baseUrl, e.g. http://127.0.0.1:11434/v1")
        return self


class ModelSlots(Camel):
    """The three slots; a null slot means "not chosen" (strong falls back to the offline model)."""

    strong: ModelSlot | None = None
    cheap: ModelSlot | None = None
    vision: ModelSlot | None = None


RoleName = Literal[
    "prober",
    "teacher",
    "partitioner",
    "problemGenerator",
    "grader",
    "researcher",
    "demoBuilder",
    "visualMaker",
    "visualCheck",
    "extraction",
    "summaries",
    "naming",
]
"""Every role that calls a model (seed §7 `BACKGROUND_MODEL_ROLES`, issue 30 item 2); what each
does and its default slot: `server.core.machine_room.model_roles.MODEL_ROLES`."""
ROLE_NAMES: tuple[RoleName, ...] = get_args(RoleName)


class RoleOverrides(Camel):
    """`roles` section: per-role model overrides (camelCase on the wire: `problemGenerator`).

    A null role runs its default (`model_roles.MODEL_ROLES`): prober and teacher the lesson's
    own model, the others a named slot. A set role runs that model instead.
    """

    prober: ModelSlot | None = None
    teacher: ModelSlot | None = None
    partitioner: ModelSlot | None = None
    problem_generator: ModelSlot | None = None
    grader: ModelSlot | None = None
    researcher: ModelSlot | None = None
    demo_builder: ModelSlot | None = None
    visual_maker: ModelSlot | None = None
    visual_check: ModelSlot | None = None
    extraction: ModelSlot | None = None
    summaries: ModelSlot | None = None
    naming: ModelSlot | None = None

    def of(self, role: RoleName) -> ModelSlot | None:
        """The override of `role` (its wire name, e.g. "problemGenerator"), None when unset.

        Raises KeyError for a name that is not a role."""
        value = getattr(self, ROLE_FIELDS[role])
        return value if isinstance(value, ModelSlot) else None


ROLE_FIELDS: dict[str, str] = {to_camel(name): name for name in RoleOverrides.model_fields}
"""Role wire name -> `RoleOverrides` field ("problemGenerator" -> "problem_generator")."""


CHUNK_TOKENS_FLOOR = 500
"""The smallest extraction budget; a smaller `graph.extractionChunkTokens` is raised to it."""
IDLE_SECONDS_FLOOR = 30.0
"""The shortest idle delay a settings file may ask for; a shorter one is raised to it."""
DEFAULT_IDLE_SECONDS = 300.0


class GraphSettings(Camel):
    """`graph` section.

    Attributes:
        enabled: whether lessons use the knowledge graph at all (seed §6); off, the teacher is not
            given the graph tools whatever `agent.graphTools` says (`teacher_reads_graph`).
        extraction_chunk_tokens: a lesson's uncovered teacher prose that triggers extraction at
            once, and the per-job budget for batches and notes chunks, in estimated tokens; a value
            under 500 is floored to 500 (never invalidates the file).
        lesson_idle_seconds: a lesson whose last turn settled this long ago gets its uncovered
            teacher prose extracted even below the budget (default 5 minutes; floored to 30 s).
    """

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")

    enabled: bool = True
    extraction_chunk_tokens: int = 8192
    lesson_idle_seconds: float = DEFAULT_IDLE_SECONDS

    @field_validator("extraction_chunk_tokens")
    @classmethod
    def _floor_tokens(cls, value: int) -> int:
        return max(value, CHUNK_TOKENS_FLOOR)

    @field_validator("lesson_idle_seconds")
    @classmethod
    def _floor_idle(cls, value: float) -> float:
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError("lessonIdleSeconds must be a finite number of seconds")
        return min(max(value, IDLE_SECONDS_FLOOR), 7 * 24 * 3600.0)


class AgentSettings(Camel):
    """`agent` section.

    Attributes:
        graph_tools: whether the teacher may read the graph (`list_sessions`, `list_propositions`).
        context_tokens: the estimated tokens of a lesson the model reads per request (the plan,
            a running summary, the recent messages verbatim; issue 15). The offline model reads
            at most `OFFLINE_CONTEXT_TOKENS` whatever this says.
    """

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")

    graph_tools: bool = True
    context_tokens: int = Field(default=24_000, ge=2_000, le=2_000_000)


def teacher_reads_graph(graph: GraphSettings, agent: AgentSettings) -> bool:
    """Whether the teacher is given the read-only graph tools (seed §6): `agent.graphTools`
    composed with `graph.enabled` (both must be on)."""
    return graph.enabled and agent.graph_tools


SubscriptionRoute = Literal["chatgpt", "github-copilot-subscription", "xai-subscription"]
SUBSCRIPTION_ROUTES: tuple[SubscriptionRoute, ...] = get_args(SubscriptionRoute)
"""The subscription providers of `Provider` (the same ids as
`server.core.machine_room.subscriptions.SUBSCRIPTION_PROVIDERS`)."""


class BackgroundConsent(Camel):
    """`backgroundConsent` section (seed §5.1, §8.1): per subscription, whether work the learner
    did not start (an idle wake of a lesson by a finished job, a finished job's result steered into
    a running turn) may run on it. Independent per provider, default ON. Providers that are not
    subscriptions (API keys, local servers, the offline model) need no consent.

    Wire keys are the provider ids: `{"chatgpt": true, "github-copilot-subscription": false, ...}`.
    """

    model_config = ConfigDict(populate_by_name=True, extra="allow")

    chatgpt: bool = True
    github_copilot_subscription: bool = Field(default=True, alias="github-copilot-subscription")
    xai_subscription: bool = Field(default=True, alias="xai-subscription")

    def allows(self, provider: str) -> bool:
        """Whether background work may run on `provider` (True for every non-subscription one)."""
        if provider not in SUBSCRIPTION_ROUTES:
            return True
        return bool(getattr(self, provider.replace("-", "_")))

    def view(self) -> dict[str, bool]:
        """`{provider id: allowed}` for the three subscriptions."""
        return {p: self.allows(p) for p in SUBSCRIPTION_ROUTES}


class ModelCallSettings(Camel):
    """`modelCalls` section: deadlines and retries of every model request (issue 10).

    Attributes:
        connect_s: seconds to open a connection to the model's server.
        first_token_s: seconds from sending a request until its first streamed bytes (or its
            whole answer, for a request that does not stream).
        idle_s: seconds allowed between two streamed chunks once the answer has begun.
        retries: further attempts after a rate limit (429), a server error (5xx) or a refused
            connection, before anything streamed; a `Retry-After` is honoured up to `max_wait_s`.
        max_wait_s: the longest `Retry-After` waited for; a longer one fails at once, saying when.
    """

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")

    connect_s: float = Field(default=15.0, gt=0, le=600)
    first_token_s: float = Field(default=120.0, gt=0, le=3600)
    idle_s: float = Field(default=60.0, gt=0, le=3600)
    retries: int = Field(default=2, ge=0, le=10)
    max_wait_s: float = Field(default=60.0, ge=0, le=3600)


class ResearchSettings(Camel):
    """`research` section of settings.json: which web search provider the researcher uses.

    Attributes:
        provider: None switches the `research` tool off (the teacher is not offered it).
        google_cx: the Programmable Search engine id (Google only).
        base_url: overrides the provider's API origin (a proxy, or a fake on loopback in tests).
    """

    provider: SearchProviderName | None = None
    google_cx: str | None = Field(default=None, max_length=200)
    base_url: str | None = Field(default=None, max_length=500)

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value in (None, ""):
            return None
        if not value.startswith(("http://", "https://")):
            raise ValueError("baseUrl must be an http:// or https:// URL, or null for the provider's own")
        return value.rstrip("/")


class Settings(Camel):
    """The whole `settings.json`. Unknown top-level sections are kept for later issues."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")

    models: ModelSlots = Field(default_factory=ModelSlots)
    roles: RoleOverrides = Field(default_factory=RoleOverrides)
    graph: GraphSettings = Field(default_factory=GraphSettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    model_calls: ModelCallSettings = Field(default_factory=ModelCallSettings)
    research: ResearchSettings = Field(default_factory=ResearchSettings)
    background_consent: BackgroundConsent = Field(default_factory=BackgroundConsent)


class ModelRef(Camel):
    """The model a session is stamped with at creation (seed §3: per-session models)."""

    provider: Provider
    model: str
    base_url: str | None = None


class ResolvedModel(Camel):
    """What actually runs for a slot or a session.

    Attributes:
        provider: the provider that will be called.
        model: the model id sent to it.
        base_url: the OpenAI-compatible endpoint, None for the offline model (known only once running).
        offline: True when this is the tiny offline demo model.
    """

    provider: Provider
    model: str
    base_url: str | None = None
    offline: bool = False

    @property
    def reads_images(self) -> bool:
        """Whether this model may be given a learner's image as an image (issue 26, item 1): the
        one place that says which models cannot. The offline model cannot (llama.cpp's
        chatml-function-calling template prints a content list as text, so an image arrives as
        its base64 characters, and a few KB overflow the 4,096-token context: HTTP 400 on that
        turn and every later one while the image is in view). Every other model is given the
        image; one that refuses it answers a provider error the learner reads in plain words."""
        return not self.offline
