"""The embedded store's handle list stays honest, and a store whose server died comes back (issue 30, items 6
and 7): real processes (a dead one, a zombie, one that reuses a listed PID) and a real embedded server, killed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from core.errors import StoreUnavailable
from core.store import embedded, embedded_handles
from core.store.database import Store, connection_lost, open_store
from core.store.embedded import start_embedded
from tests.store_processes import assert_nothing_left, dead, handle_pids, kill_postmaster, postmasters, wait_until
from tests.support import isolated_settings


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield process
    process.kill()
    process.wait()


def _ended() -> int:
    """The PID of a process that has ended and been reaped."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def _list(pgdata: Path, pids: list[int], owners: dict[int, float]) -> None:
    pgdata.mkdir(exist_ok=True)
    (pgdata / embedded_handles.HANDLE_LIST).write_text(json.dumps(pids))
    (pgdata / embedded_handles.OWNERS).write_text(json.dumps({str(k): v for k, v in owners.items()}))


def test_holders_that_are_gone_or_are_another_process_now_are_struck_off(
    tmp_path: Path, sleeper: subprocess.Popen[bytes]
) -> None:
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])  # ends at once; not waited for: a zombie
    wait_until(lambda: embedded_handles.started_at(zombie.pid) is None, 10, "the child to end")
    live = sleeper.pid
    started = embedded_handles.started_at(live)
    assert started is not None
    reused = os.getpid()  # alive, but the start time recorded for its PID is another process's
    ended = _ended()
    _list(tmp_path, [ended, zombie.pid, live, reused], {live: started, reused: started - 100})
    try:
        assert sorted(embedded_handles.prune(tmp_path)) == sorted([ended, zombie.pid, reused])
    finally:
        zombie.wait()
    assert handle_pids(tmp_path) == [live]
    assert json.loads((tmp_path / embedded_handles.OWNERS).read_text()) == {str(live): started}
    assert embedded_handles.prune(tmp_path) == []  # nothing more to strike


def test_a_holder_listed_without_a_start_time_counts_while_its_pid_runs(
    tmp_path: Path, sleeper: subprocess.Popen[bytes]
) -> None:
    _list(tmp_path, [sleeper.pid], {})
    assert embedded_handles.prune(tmp_path) == []
    assert handle_pids(tmp_path) == [sleeper.pid]


def test_a_handle_list_cut_short_by_a_crash_is_started_over(tmp_path: Path) -> None:
    (tmp_path / embedded_handles.HANDLE_LIST).write_text("[12, 3")
    assert embedded_handles.prune(tmp_path) == []
    assert handle_pids(tmp_path) == []


def test_a_server_whose_other_holders_died_stops_when_its_last_live_holder_closes(tmp_path: Path) -> None:
    pgdata = tmp_path / "pgdata"
    first = start_embedded(pgdata)
    first.stop()
    assert_nothing_left(pgdata)
    # Two holders that died without closing: one gone, one whose PID now names this test process.
    _list(pgdata, [_ended(), os.getpid()], {os.getpid(): 1.0})
    server = start_embedded(pgdata)
    assert handle_pids(pgdata) == [os.getpid()]
    server.stop()
    assert_nothing_left(pgdata)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = open_store(isolated_settings(tmp_path / "home"))
    yield opened
    opened.close()


def _answers(store: Store) -> int:
    with store.engine.connect() as conn:
        return int(conn.execute(text("SELECT 1")).scalar_one())


def test_a_store_whose_embedded_server_was_killed_starts_it_again(store: Store, tmp_path: Path) -> None:
    assert store.embedded is not None
    pgdata = store.embedded.pgdata
    assert _answers(store) == 1
    killed = kill_postmaster(pgdata)
    wait_until(lambda: not store.embedded.running(), 10, "the store to notice")  # type: ignore[union-attr]
    with pytest.raises(DBAPIError) as lost:
        _answers(store)
    assert connection_lost(lost.value)

    store.revive()
    assert store.embedded.running()
    assert _answers(store) == 1
    assert [p.pid for p in postmasters(pgdata)] != [killed]
    assert handle_pids(pgdata) == [os.getpid()]
    store.close()
    assert_nothing_left(pgdata)


def test_a_stale_postmaster_pid_naming_another_program_does_not_stop_the_store_coming_back(store: Store) -> None:
    """A container restarted: the old server's postmaster.pid names a PID another program has now."""
    assert store.embedded is not None
    pgdata = store.embedded.pgdata
    killed = kill_postmaster(pgdata)
    wait_until(lambda: dead([killed]) == [killed] and not postmasters(pgdata), 10, "the killed server to go")
    lines = (pgdata / "postmaster.pid").read_text().splitlines()
    assert lines[0] == str(killed)
    (pgdata / "postmaster.pid").write_text("\n".join([str(os.getpid()), *lines[1:]]) + "\n")
    store.revive()
    assert _answers(store) == 1


def test_a_server_that_cannot_start_again_is_reported_unavailable(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embedded, "OPEN_WAIT_S", 1.0)  # it would keep trying for 10 s
    assert store.embedded is not None
    pgdata = store.embedded.pgdata
    kill_postmaster(pgdata)
    (pgdata / "PG_VERSION").rename(pgdata / "PG_VERSION.moved")  # no data directory pgserver could start on
    try:
        wait_until(lambda: not store.embedded.running(), 10, "the store to notice")  # type: ignore[union-attr]
        with pytest.raises(StoreUnavailable, match="cannot start the embedded metadata store"):
            store.revive()
    finally:
        (pgdata / "PG_VERSION.moved").rename(pgdata / "PG_VERSION")
    store.revive()  # and back once it can
    assert _answers(store) == 1
