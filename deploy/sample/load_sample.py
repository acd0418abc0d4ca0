"""Trial stack (docker compose profile `sample`): the sample ERP and billing databases in the sample MariaDB, a
read-only account for tablescout there, both registered as sources and analysed.

Runs in the tablescout image (`python /opt/tablescout/load_sample.py --host sample-db`) and uses the `tablescout`
commands a person would. Running it again changes nothing that is in place: databases already loaded are kept, the
account keeps its grants, registered sources stay, and analysis reuses unchanged tables.

Environment: SAMPLE_DB_ROOT_PASSWORD (an account that may create databases and users; `--admin-user`),
SAMPLE_DB_READER_PASSWORD (the read-only account's password; sources refer to it as ${SAMPLE_DB_READER_PASSWORD},
so the workers read it from their environment when they connect and it is never written to a file).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys

from sqlalchemy import URL, Engine, create_engine, text
from sqlalchemy.exc import SQLAlchemyError

from catalog.sample_erp import DATABASES, metadata_for

NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,31}$")


class SampleSetupError(Exception):
    """A step of the trial setup failed; the message says which and why."""


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--host", default="sample-db", help="The sample MariaDB's host name.")
    parser.add_argument("--port", type=int, default=3306)
    parser.add_argument("--admin-user", default="root", help="Creates the databases and the read-only account.")
    parser.add_argument("--reader", default="tablescout_reader", help="The read-only account tablescout uses.")
    parser.add_argument("--prefix", default="", help="Prefix of the database names (erp, billing).")
    parser.add_argument("--skip-analyze", action="store_true", help="Register the sources but do not analyse them.")
    args = parser.parse_args(argv)
    for label, value in (("--admin-user", args.admin_user), ("--reader", args.reader)):
        if not NAME.match(value):
            parser.error(f"{label} {value!r} must be letters, digits and '_' (at most 32)")
    if args.prefix and not re.fullmatch(r"[A-Za-z0-9_]{1,32}", args.prefix):
        parser.error(f"--prefix {args.prefix!r} must be letters, digits and '_'")
    return args


def environment_value(name: str) -> str:
    value = os.environ.get(name)
    if value is None:
        raise SampleSetupError(f"{name} is not set; put it in deploy/.env")
    return value


def admin_engine(args: argparse.Namespace) -> Engine:
    url = URL.create(
        "mysql+pymysql",
        username=args.admin_user,
        password=environment_value("SAMPLE_DB_ROOT_PASSWORD") or None,
        host=args.host,
        port=args.port,
    )
    return create_engine(url, pool_pre_ping=True)


def prepare_server(engine: Engine, databases: dict[str, str], reader: str, reader_password: str) -> None:
    """The databases and the read-only account (SELECT and SHOW VIEW on the sample databases, nothing else)."""
    with engine.begin() as conn:
        for database in databases.values():
            conn.execute(text(f"CREATE DATABASE IF NOT EXISTS `{database}` CHARACTER SET utf8mb4"))
        conn.execute(text(f"CREATE USER IF NOT EXISTS '{reader}'@'%' IDENTIFIED BY :pw"), {"pw": reader_password})
        conn.execute(text(f"ALTER USER '{reader}'@'%' IDENTIFIED BY :pw"), {"pw": reader_password})
        for database in databases.values():
            conn.execute(text(f"GRANT SELECT, SHOW VIEW ON `{database}`.* TO '{reader}'@'%'"))


def is_loaded(engine: Engine, name: str, database: str) -> bool:
    """Every table of the sample exists in `database` and holds rows (a load is one transaction per database)."""
    wanted = sorted(metadata_for(name).tables)
    with engine.connect() as conn:
        present = set(
            conn.scalars(
                text("SELECT table_name FROM information_schema.tables WHERE table_schema = :db"), {"db": database}
            )
        )
        if not set(wanted) <= present:
            return False
        return all(conn.scalar(text(f"SELECT COUNT(*) FROM `{database}`.`{table}`")) for table in wanted)


def tablescout(*args: str) -> str:
    """Run a tablescout command as a person would; its output is shown, a failure stops the setup."""
    print("$ tablescout " + " ".join(args), flush=True)
    completed = subprocess.run(  # noqa: S603 - our own command line, arguments built here
        [sys.executable, "-m", "tablescout", *args], capture_output=True, text=True, check=False
    )
    if completed.stdout and "--json" not in args:
        print(completed.stdout, end="", flush=True)
    if completed.returncode != 0:
        reason = completed.stderr.strip().splitlines()[-1] if completed.stderr.strip() else "no message"
        raise SampleSetupError(f"`tablescout {' '.join(args)}` failed: {reason}")
    return completed.stdout


def registered_sources() -> set[str]:
    rows = json.loads(tablescout("source", "list", "--json"))
    return {str(row["name"]) for row in rows}


def run(args: argparse.Namespace) -> None:
    databases = {name: f"{args.prefix}{name}" for name in DATABASES}
    reader_password = environment_value("SAMPLE_DB_READER_PASSWORD")
    if not reader_password:
        raise SampleSetupError("SAMPLE_DB_READER_PASSWORD is empty; give the read-only account a password")
    server = f"{args.host}:{args.port}"
    engine = admin_engine(args)
    try:
        prepare_server(engine, databases, args.reader, reader_password)
        print(f"Read-only account {args.reader} may read {', '.join(databases.values())} on {server}", flush=True)
        for name, database in databases.items():
            if is_loaded(engine, name, database):
                print(f"Sample database {name} is already loaded in {database}", flush=True)
                continue
            admin = f"mysql+pymysql://{args.admin_user}:${{SAMPLE_DB_ROOT_PASSWORD}}@{server}/{database}"
            tablescout("sample", "load", name, admin)
    except SQLAlchemyError as exc:
        orig = getattr(exc, "orig", None)
        reason = str(orig if orig is not None else exc).strip().splitlines()[0]
        raise SampleSetupError(f"cannot prepare the sample databases on {server}: {reason}") from exc
    finally:
        engine.dispose()
    known = registered_sources()
    for name, database in databases.items():
        if name in known:
            print(f"Source {name} is already registered", flush=True)
            continue
        url = f"mysql+pymysql://{args.reader}:${{SAMPLE_DB_READER_PASSWORD}}@{server}/{database}"
        tablescout("source", "add", name, url)
    if not args.skip_analyze:
        tablescout("analyze", *databases)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        run(args)
    except SampleSetupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print('The sample databases are ready: ask with `tablescout ask "..."` or in Slack or Teams.', flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
