"""The one settings object: environment variables for URLs and secrets, the YAML file for everything else.

Nothing else in tablescout reads `os.environ`. `load_settings()` validates both halves before anything starts,
so a typo in either is reported up front instead of half-way through a command. The environment is read once; the
file is read again whenever it changes, so a running worker or bot server follows an operator's edits.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from core.config.file import ConfigFile
from core.config.watch import ConfigState, watch
from core.errors import ConfigError

ENV_PREFIX = "TABLESCOUT_"
CONFIG_NAME = "tablescout.yaml"


def _default_home() -> Path:
    import platformdirs  # only where TABLESCOUT_HOME is not set (2.5 ms of every command's start-up otherwise)

    return platformdirs.user_data_path("tablescout", appauthor=False)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore", frozen=True)

    home: Path = Field(default_factory=_default_home)
    config: Path | None = None
    database_url: SecretStr | None = None
    redis_url: SecretStr | None = None
    model: str | None = None  # "anthropic:<model>" or "openai:<model>"
    model_tools: Literal["native", "json"] = "native"  # "json": JSON-schema constrained replies, no tool calls
    turn_deadline_s: float = Field(180.0, gt=0, le=3000)  # a turn answers (or gives up honestly) within this
    max_rounds: int = Field(12, ge=1, le=50)
    # How a question turn runs: guided (one search, one SQL call, bounded repair; for small models), loop (the
    # agentic tool loop), or auto: guided for small models (the local: provider), the loop for the others.
    turn_path: Literal["auto", "guided", "loop"] = "auto"
    # Statements the guided path writes for one question at most, the answer being the result most of them agree on
    # (workers.turns.candidates): the most likely one, then sampled ones until two agree. 1: the most likely only.
    guided_candidates: int = Field(3, ge=1, le=5)
    worker_visibility_timeout_s: int = Field(4200, ge=30)  # broker redelivers an unacknowledged job after this
    sweep_interval_s: float = Field(30.0, gt=0, le=3600)  # how often the beat's sweep looks for lost jobs and answers
    turn_requeue_after_s: float = Field(120.0, gt=0)  # a turn no worker started this long after queueing runs again
    turn_lease_grace_s: float = Field(30.0, ge=0)  # a running turn whose lease ended this long ago runs again
    turn_max_tries: int = Field(3, ge=1, le=20)  # runs of one turn (first, redelivered, swept) before it fails honestly
    # minilm-int8: MiniLM on ONNX Runtime, int8 (search.encoder_onnx); minilm: the same on torch; use-multilingual
    embedding_encoder: Literal["minilm-int8", "minilm", "use-multilingual"] = "minilm-int8"
    embedding_max_tokens: int = Field(128, ge=16, le=512)  # texts are cut here (MiniLM was trained on 128)
    embedding_model: str | None = None  # a sentence-transformers model directory; None: the bundled MiniLM
    # A second vector per chunk from the multilingual encoder (search.multilingual), made when a source is indexed:
    # questions written mostly in a script other than Latin (Korean, Japanese, Chinese, Cyrillic, ...) are searched
    # by it. Off: such questions are searched like any other (and indexing does not pay for the second vectors).
    multilingual_vectors: bool = True
    # Two-speed indexing (search.refinement): new and changed chunks are written with the fast static encoder's
    # vector, searchable at once, and refined to the main encoder's vector afterwards (a worker job per source, or
    # inline at the end of `tablescout analyze`). Off: every chunk is embedded by the main encoder as it is written.
    fast_indexing: bool = True
    reranker_model: str | None = None  # a CrossEncoder model directory; None: bi-encoder reranking
    # The key of `hash` column masks (core.access.mask_key); unset: $TABLESCOUT_HOME/mask.key, which `init` creates.
    mask_key: SecretStr | None = None
    token: SecretStr | None = None  # the API token `tablescout mcp` acts with (only its hash is stored)
    slack_api_url: str | None = None  # Slack Web API base (e.g. https://slack.com/api/), for proxies and tests
    # The bot server's address as users' browsers reach it (https://bot.example.com), for the links to whole results
    # in Teams cards (bot/result_files.py); unset: the address Teams used to reach the server.
    public_url: str | None = None
    graph_api_url: str = "https://graph.microsoft.com/v1.0"  # Microsoft Graph, for Entra group membership
    entra_login_url: str = "https://login.microsoftonline.com"  # Entra ID token authority (client credentials)
    teams_app_id: str | None = None
    teams_app_password: SecretStr | None = None
    teams_tenant_id: str | None = None
    teams_openid_metadata_url: str | None = None  # the Bot Framework's signing keys elsewhere (national cloud, tests)
    anthropic_api_key: SecretStr | None = Field(None, validation_alias=AliasChoices("ANTHROPIC_API_KEY"))
    anthropic_base_url: str | None = Field(None, validation_alias=AliasChoices("ANTHROPIC_BASE_URL"))
    openai_api_key: SecretStr | None = Field(None, validation_alias=AliasChoices("OPENAI_API_KEY"))
    openai_base_url: str | None = Field(None, validation_alias=AliasChoices("OPENAI_BASE_URL"))
    slack_bot_token: SecretStr | None = Field(None, validation_alias=AliasChoices("SLACK_BOT_TOKEN"))
    slack_signing_secret: SecretStr | None = Field(None, validation_alias=AliasChoices("SLACK_SIGNING_SECRET"))
    slack_app_token: SecretStr | None = Field(None, validation_alias=AliasChoices("SLACK_APP_TOKEN"))

    @property
    def config_path(self) -> Path:
        return self.config if self.config is not None else self.home / CONFIG_NAME

    @property
    def embedded_pgdata(self) -> Path:
        return self.home / "pgdata"

    @property
    def file(self) -> ConfigFile:
        """The configuration file's last valid version, read again when the file has changed (core.config.watch):
        roles, grants, group mappings and source URLs changed in the file apply from the next look on."""
        return self.config_state().config

    def config_state(self) -> ConfigState:
        """The configuration in use and, when an edit of the file was invalid, why it is not the file on disk."""
        return watch(self.config_path).current()

    def environment_value(self, name: str) -> str | None:
        """A variable named in the configuration (`${VAR}` in a source URL); the one sanctioned way to read it."""
        return os.environ.get(name)


def _known_env_names() -> set[str]:
    names = set()
    for field_name, info in Settings.model_fields.items():
        if info.validation_alias is None:
            names.add(ENV_PREFIX + field_name.upper())
    return names


def load_settings(*, check_file: bool = True) -> Settings:
    """Read and validate the environment and (unless `check_file` is false) the configuration file; raise
    ConfigError on any mistake."""
    unknown = sorted(k for k in os.environ if k.startswith(ENV_PREFIX) and k not in _known_env_names())
    if unknown:
        known = ", ".join(sorted(_known_env_names()))
        raise ConfigError(f"unknown environment variable(s) {', '.join(unknown)}; tablescout knows {known}")
    try:
        settings = Settings()
    except ValueError as exc:
        raise ConfigError(f"invalid environment: {exc}") from exc
    if check_file:
        watch(settings.config_path).current(strict=True)  # validate the file now, before anything starts
    return settings
