"""Privacy mode (`privacy:` in tablescout.yaml): which sources' data a hosted model may not read.

Under "schema_only" a hosted model reads a source's structure (tables, columns, types, keys, joins, row counts) and
writes SQL over it, but no row value: no sample, frequent value, range, code or code meaning, value-index hit, note
text or query result. A source's own `privacy` replaces the installation's. A turn can reach every source its asker
may query (search spans them, and SQL may name any of them), so a turn is in privacy mode when any of those sources
is: the strictest wins. The local model (`local:`) runs on this machine and is not a hosted model.
"""

from __future__ import annotations

from collections.abc import Iterable

from core.config.file import ConfigFile, PrivacyMode

#: The prefix of the model setting (TABLESCOUT_MODEL) and of the provider label of the model served on this machine
#: (`tablescout model serve-local`): the one provider that is not hosted.
LOCAL_PROVIDER = "local"


def source_privacy(config: ConfigFile, database: str) -> PrivacyMode:
    """The privacy mode of source `database` (a name or an alias): its own, else the installation's."""
    name = config.source_for(database)
    entry = config.sources.get(name) if name is not None else None
    if entry is not None and entry.privacy is not None:
        return entry.privacy
    return config.privacy


def schema_only(config: ConfigFile, databases: Iterable[str]) -> bool:
    """Whether any of `databases` is under "schema_only" (the strictest mode wins)."""
    return any(source_privacy(config, name) == "schema_only" for name in databases)


def hosted(model_label: str) -> bool:
    """Whether the model of provider label `model_label` ("anthropic:…", "openai:…", "local:…") runs elsewhere.
    Every OpenAI-compatible endpoint counts as hosted: tablescout cannot tell where it runs."""
    provider, _, _ = model_label.partition(":")
    return provider.strip().lower() != LOCAL_PROVIDER
