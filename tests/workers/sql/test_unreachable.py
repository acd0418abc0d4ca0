"""A source database that cannot be reached (server down, file gone) reads as "not answering" to the model and the
user: no host, port, path or driver text in what run_sql returns or stores; the log keeps the details."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from sqlalchemy.orm import Session

from core.store.models import Source
from core.store.repositories import sources as source_repo
from tests.support import isolated_settings
from tests.workers.sql.conftest import STAFF
from workers.sql.service import run_sql


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize(
    ("kind", "url"),
    [
        ("mariadb", "mysql+pymysql://reader@127.0.0.1:{port}/erp"),
        ("postgresql", "postgresql+psycopg://reader@127.0.0.1:{port}/erp?connect_timeout=2"),
        ("sqlite", "sqlite:///{home}/gone/erp.db"),
    ],
)
def test_an_unreachable_database_is_not_answering_without_details(
    session: Session, tmp_path: Path, caplog: pytest.LogCaptureFixture, kind: str, url: str
) -> None:
    port = _closed_port()
    name = f"down_{kind}_{port}"
    written = url.format(port=port, home=tmp_path)
    (tmp_path / "tablescout.yaml").write_text(f"sources:\n  {name}:\n    url: '{written}'\n")
    settings = isolated_settings(tmp_path)
    source_repo.add(session, Source(name=name, engine=kind, url_ref=name))

    outcome = run_sql(session, settings, STAFF, name, "SELECT 1")

    assert outcome.status == "error"
    assert outcome.error == (
        f"error: cannot reach database {name} right now; tell the user that this database is not answering "
        "and to try again in a few minutes"
    )
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert name in logged
    assert (str(port) if kind != "sqlite" else "gone") in logged  # the operator's detail stays in the log
