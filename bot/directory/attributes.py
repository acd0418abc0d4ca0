"""User attributes from the directory, under the names row filters use (`{user.city}`, `{user.departments}`).

Both platforms' profiles are mapped onto one vocabulary, so a role's filter means the same for a Slack user and a
Teams user:
- standard names: `department`, `departments` (a list: the department, and for Slack a custom field labelled
  Departments split at commas), `city`, `country`, `state`, `postal_code`, `office_location`, `title`,
  `company_name`, `employee_id`, `employee_type`, `usage_location`, `email`; Entra ID's
  onPremisesExtensionAttributes as `extension_attribute_1` ... `extension_attribute_15`;
- Slack custom profile fields by their label as a slug (`Employee ID` → `employee_id`, `Sales region` →
  `sales_region`), read with the labels team.profile.get lists.
Values are trimmed strings; an empty or unset value leaves the attribute out, so a filter that needs it matches
nothing (the rewrite fails closed), never "no filter".
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

Attributes = dict[str, str | list[str]]

#: Microsoft Graph user properties read with the members of each group, and the attribute each becomes.
GRAPH_PROPERTIES: dict[str, str] = {
    "department": "department",
    "city": "city",
    "country": "country",
    "state": "state",
    "postalCode": "postal_code",
    "officeLocation": "office_location",
    "jobTitle": "title",
    "companyName": "company_name",
    "employeeId": "employee_id",
    "employeeType": "employee_type",
    "usageLocation": "usage_location",
}
GRAPH_EXTENSIONS = "onPremisesExtensionAttributes"
#: Slack's own profile fields (users.profile.get) that become attributes; custom fields come by their label.
SLACK_STANDARD_FIELDS: dict[str, str] = {"title": "title"}
_LIST_SEPARATORS = re.compile(r"\s*[,;]\s*")


def slug(label: str) -> str:
    """An attribute name for a field label: lower case, runs of anything but letters and digits as one `_`."""
    text = unicodedata.normalize("NFKC", label).casefold()
    return re.sub(r"[\W_]+", "_", text).strip("_")


def _text(value: Any) -> str | None:
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        return None
    text = str(value).strip()
    return text or None


def _with_departments(attributes: Attributes, more: Iterable[str] = ()) -> Attributes:
    department = attributes.get("department")
    found = [department] if isinstance(department, str) else []
    found.extend(more)
    unique = list(dict.fromkeys(d for d in found if d))
    if unique:
        attributes["departments"] = unique
    return attributes


def from_graph_user(user: Mapping[str, Any]) -> Attributes:
    """Attributes of one Graph user object (as listed with `$select` of `graph_select()`)."""
    attributes: Attributes = {}
    for prop, name in GRAPH_PROPERTIES.items():
        value = _text(user.get(prop))
        if value is not None:
            attributes[name] = value
    email = _text(user.get("mail"))
    if email is not None:
        attributes["email"] = email
    extensions = user.get(GRAPH_EXTENSIONS)
    if isinstance(extensions, Mapping):
        for key, raw in extensions.items():
            number = str(key).removeprefix("extensionAttribute")
            value = _text(raw)
            if number.isdigit() and value is not None:
                attributes[f"extension_attribute_{int(number)}"] = value
    return _with_departments(attributes)


def graph_select() -> str:
    """The `$select` list for users: identity, mail, and every property attributes come from."""
    return ",".join(["id", "displayName", "mail", *GRAPH_PROPERTIES, GRAPH_EXTENSIONS])


def from_slack_profile(profile: Mapping[str, Any], labels: Mapping[str, str]) -> Attributes:
    """Attributes of one users.profile.get `profile`; `labels` maps custom field ids to their labels.

    A custom field whose label gives the same name as a standard field replaces it (the workspace's admin set it up
    on purpose); a custom field without a known label is left out.
    """
    attributes: Attributes = {}
    for field, name in SLACK_STANDARD_FIELDS.items():
        value = _text(profile.get(field))
        if value is not None:
            attributes[name] = value
    email = _text(profile.get("email"))
    if email is not None:
        attributes["email"] = email
    listed: list[str] = []
    fields = profile.get("fields")
    for field_id, entry in fields.items() if isinstance(fields, Mapping) else ():
        label = labels.get(str(field_id))
        value = _text(entry.get("value")) if isinstance(entry, Mapping) else None
        name = slug(label) if label else ""
        if not name or value is None:
            continue
        if name == "departments":
            listed.extend(v for v in _LIST_SEPARATORS.split(value) if v)
        else:
            attributes[name] = value
    return _with_departments(attributes, listed)
