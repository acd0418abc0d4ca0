"""No dead code in the product: every function, method, class, property and import of the product packages is
used by the product itself (tests do not count), as vulture finds it.

Names that a framework calls rather than our code (Typer commands, registered by name or decorator, bolt
listeners, pydantic validators, methods a library's interface requires) are listed with the reason; a benchmark's
own code lives beside it under bench/.
"""

from __future__ import annotations

import pytest

from tablescout.cli import COMMANDS
from tests.support import REPO

vulture = pytest.importorskip("vulture")

PACKAGES = ("core", "catalog", "search", "workers", "bot", "api", "tablescout")
#: Decorators whose functions a framework calls: Typer commands, Slack bolt listeners, pydantic validators.
CALLED_BY_FRAMEWORKS = [
    "@*.command",
    "@*.callback",
    "@*.event",
    "@*.action",
    "@*.view",
    "@*.message",
    "@*.middleware",
    "@*.shortcut",
    "@*.options",
    "@*.thread_started",
    "@*.thread_context_changed",
    "@*.user_message",
    "@*.tool",
    "@*.resource",
    "@model_validator",
    "@field_validator",
    "@*.task",
    "@task",
]
#: Methods a library calls through the interface they implement.
INTERFACE_METHODS = {
    "forward": "torch.nn.Module: the ONNX export traces it (search/encoder_export.py)",
    "refresh_session": "botframework's AppCredentials interface (bot/teams/credentials.py)",
    "is_valid_app_id": "botframework's CredentialProvider interface (bot/teams/credentials.py)",
    "is_authentication_disabled": "botframework's CredentialProvider interface (bot/teams/credentials.py)",
    "create_credentials": "botframework's ServiceClientCredentialsFactory interface (bot/teams/credentials.py)",
    "bind_processor": "SQLAlchemy's TypeEngine interface (core/store/vectors.py)",
}
KINDS = {"function", "method", "class", "property", "import"}
#: The command-line commands, found by name when they run (`tablescout.cli.COMMANDS`: module, function or Typer app).
COMMAND_FUNCTIONS = {(f"tablescout/cli/{module}.py", name) for module, name in COMMANDS.values()}


def unused() -> list[str]:
    finder = vulture.Vulture(ignore_names=list(INTERFACE_METHODS), ignore_decorators=CALLED_BY_FRAMEWORKS)
    finder.scavenge([str(REPO / p) for p in PACKAGES], exclude=["*/migrations/versions/*"])
    return sorted(
        f"{item.filename.relative_to(REPO)}:{item.first_lineno} {item.typ} {item.name}"
        for item in finder.get_unused_code(min_confidence=60)
        if item.typ in KINDS and (str(item.filename.relative_to(REPO)), item.name) not in COMMAND_FUNCTIONS
    )


def test_the_product_holds_no_code_only_tests_or_nothing_call() -> None:
    assert unused() == []
