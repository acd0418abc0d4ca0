"""The configuration file `tablescout init` writes when there is none: valid, empty, and self-explaining."""

from __future__ import annotations

from pathlib import Path

STARTER = """\
# tablescout configuration. Service URLs and secrets come from environment variables (see docs/configuration.md);
# this file holds sources, roles and directory-group mappings.
#
# roles: what each role may see. Table patterns are shell-style and case-insensitive: TABLE (or ORD_*) means the
# default schema, rpt.TABLE or rpt.* another schema, *.TABLE every schema, "*" everything; a deny without a schema
# covers every schema and beats an allow; a user may see what any of their roles allows. A grant may also carry
# row_filters, column_masks and catalog: true (see docs/configuration.md, "Row filters and column masks").
#   analyst:
#     grants:
#       - database: erp
#         allow: ["*"]
#         deny: ["EMP_*"]
#   admin:
#     admin: true
#     grants:
#       - database: "*"
#
# groups: directory groups whose members get roles (Slack user-group id or @handle; Entra ID group object id).
#   - platform: slack
#     group: "@data-team"
#     roles: [analyst]
#
# default_role: the role of users in no mapped group; leave it out and they may query nothing.
#
# sources: maintained by `tablescout source add NAME URL`; passwords only as ${ENV_VAR} placeholders there.
roles: {}
groups: []
sources: {}
"""


def write_starter_config(path: Path) -> bool:
    if path.exists():
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(STARTER, encoding="utf-8")
    path.chmod(0o600)
    return True
