from __future__ import annotations

import pytest

from catalog import source_url
from core.errors import SourceError


def test_default_drivers_and_absolute_sqlite_paths() -> None:
    assert source_url.parse("mysql://r@h/erp").drivername == "mysql+pymysql"
    assert source_url.parse("mariadb://r@h/erp").drivername == "mariadb+pymysql"
    assert source_url.parse("postgresql://r@h/erp").drivername == "postgresql+psycopg"
    assert source_url.parse("postgres://r@h/erp").drivername == "postgresql+psycopg"
    assert source_url.parse("mysql+pymysql://r@h/erp").drivername == "mysql+pymysql"
    relative = source_url.parse("sqlite:///data/erp.sqlite")
    assert relative.database is not None
    assert relative.database.startswith("/")


def test_placeholders_stay_readable_and_expand_with_quoting() -> None:
    url = source_url.parse("mysql://reader:${ERP_PW}@db:3306/erp")
    assert source_url.clear_text_secrets(url) == []
    assert source_url.render(url) == "mysql+pymysql://reader:${ERP_PW}@db:3306/erp"
    assert source_url.display(url) == "mysql+pymysql://reader:${ERP_PW}@db:3306/erp"
    expanded = source_url.expand(url, {"ERP_PW": "p@ss:w/rd"}.get)
    assert expanded.password == "p@ss:w/rd"
    assert source_url.parse(source_url.render(url)).password == "${ERP_PW}"


def test_clear_text_secrets_are_found_and_masked() -> None:
    url = source_url.parse("postgresql://u:hunter2@db/x?sslmode=require&password=hunter3")
    assert source_url.clear_text_secrets(url) == ["password", "query parameter password"]
    shown = source_url.display(url)
    assert "hunter2" not in shown
    assert "hunter3" not in shown
    assert "sslmode=require" in shown


def test_missing_variable_is_named() -> None:
    url = source_url.parse("mysql://reader:${NOT_SET_ANYWHERE}@db/erp")
    with pytest.raises(SourceError, match=r"\$\{NOT_SET_ANYWHERE\}"):
        source_url.expand(url, lambda _name: None)


@pytest.mark.parametrize("bad", ["", "erp", "sqlite://", "sqlite:///:memory:", "://x"])
def test_unusable_urls(bad: str) -> None:
    with pytest.raises(SourceError):
        source_url.parse(bad)
