"""Fixtures shared by the logbook tests: a PostgreSQL server for the session (skipped with the
reason when it cannot be had) and ``target``, each test's fresh logbook on both backends."""

import atexit

import pytest

from tests.fakes import postgres_server

__all__ = ["pg_server", "raw", "target"]


_SHARED: list[postgres_server.PostgresServer] = []


def _shared_server() -> postgres_server.PostgresServer:
    """One server per test process, stopped when its session ends (``stop_shared``, from conftest's
    pytest_sessionfinish; at exit as well, should a process end another way). The test modules import
    ``pg_server``, and a fixture imported into five modules is five fixtures: each module started
    its own server (an initdb each) and all five were stopped and removed in the last test's
    teardown (25 s of one test under load)."""
    if not _SHARED:
        server = postgres_server.PostgresServer()
        server.start()
        atexit.register(stop_shared)
        _SHARED.append(server)
    return _SHARED[0]


def stop_shared() -> None:
    while _SHARED:
        _SHARED.pop().stop()


@pytest.fixture(scope="session")
def pg_server():
    why = postgres_server.available()
    if why:
        pytest.skip(f"PostgreSQL logbook not tested: {why}")
    return _shared_server()


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
