"""Fixtures shared by the logbook tests: a PostgreSQL server for the session (skipped with the
reason when it cannot be had) and ``target``, each test's fresh logbook on both backends."""

import pytest

from tests.fakes import postgres_server

__all__ = ["pg_server", "raw", "target"]


@pytest.fixture(scope="session")
def pg_server():
    why = postgres_server.available()
    if why:
        pytest.skip(f"PostgreSQL logbook not tested: {why}")
    server = postgres_server.PostgresServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def target(request, tmp_path):
    """Where a test's logbook lives: a fresh SQLite file, or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "lb.db")
    return request.getfixturevalue("pg_server").new_database()


def raw(book, sql):
    """A statement straight to the database underneath (to damage it as a disk or a person would)."""
    cur = book.db.cursor()
    cur.execute(sql)
    if book.backend == "sqlite":
        book.db.commit()
