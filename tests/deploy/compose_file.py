"""Reading deploy/compose.yaml the way docker compose does: YAML with merge keys, a .env file, and variable
interpolation (`$VAR`, `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?error}`, `${VAR?error}`,
`${VAR:+other}`, `${VAR+other}`, `$$` for a literal `$`, defaults nested), per the Compose Specification."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class InterpolationError(Exception):
    pass


def load_yaml(path: Path) -> dict[str, Any]:
    document = yaml.safe_load(path.read_text(encoding="utf-8"))  # SafeLoader resolves `<<: *anchor` merge keys
    assert isinstance(document, dict)
    return document


def parse_env_file(path: Path) -> dict[str, str]:
    """NAME=value lines; blank lines and # comments skipped; surrounding quotes removed."""
    values: dict[str, str] = {}
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, separator, value = line.partition("=")
        if not separator or not NAME.fullmatch(name.strip()):
            raise ValueError(f"{path}:{number}: not NAME=value: {raw!r}")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        values[name.strip()] = value
    return values


def interpolate(text: str, env: dict[str, str], used: set[str] | None = None) -> str:
    """`text` with its variables substituted from `env`; `used` collects the names it refers to."""
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char != "$":
            out.append(char)
            i += 1
            continue
        nxt = text[i + 1] if i + 1 < len(text) else ""
        if nxt == "$":
            out.append("$")
            i += 2
        elif nxt == "{":
            end = _closing_brace(text, i + 1)
            out.append(_expression(text[i + 2 : end], env, used))
            i = end + 1
        else:
            match = NAME.match(text, i + 1)
            if match is None:
                out.append("$")
                i += 1
                continue
            if used is not None:
                used.add(match.group())
            out.append(env.get(match.group(), ""))
            i = match.end()
    return "".join(out)


def _closing_brace(text: str, start: int) -> int:
    depth = 0
    for index in range(start, len(text)):
        if text[index] == "{":
            depth += 1
        elif text[index] == "}":
            depth -= 1
            if depth == 0:
                return index
    raise InterpolationError(f"unclosed ${{ in {text!r}")


def _expression(body: str, env: dict[str, str], used: set[str] | None) -> str:
    match = NAME.match(body)
    if match is None:
        raise InterpolationError(f"invalid variable ${{{body}}}")
    name, rest = match.group(), body[match.end() :]
    if used is not None:
        used.add(name)
    value = env.get(name)
    if not rest:
        return value or ""
    for operator in (":-", ":?", ":+", "-", "?", "+"):
        if rest.startswith(operator):
            argument = rest[len(operator) :]
            empty_counts = operator.startswith(":")
            is_set = value is not None and (value != "" or not empty_counts)
            if operator.endswith("-"):
                return value if is_set and value is not None else interpolate(argument, env, used)
            if operator.endswith("?"):
                if not is_set:
                    raise InterpolationError(f"{name}: {interpolate(argument, env, used)}")
                return value or ""
            return interpolate(argument, env, used) if is_set else ""
    raise InterpolationError(f"invalid variable ${{{body}}}")


def interpolate_tree(node: Any, env: dict[str, str], used: set[str] | None = None) -> Any:
    if isinstance(node, str):
        return interpolate(node, env, used)
    if isinstance(node, list):
        return [interpolate_tree(item, env, used) for item in node]
    if isinstance(node, dict):
        return {key: interpolate_tree(value, env, used) for key, value in node.items()}
    return node
