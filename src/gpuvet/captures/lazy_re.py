"""Patterns compiled on their first use (issue 43). CPython compiles a pattern in Python code: a reader module's
tables (app_errors' runtime messages, the kernel drivers' messages) cost milliseconds each when imported, and a
bug report's read imports ~950 patterns to use ~100 of them (~0.1 s of its ~1 s). A pattern made here is its
text and flags until a method or attribute is first asked for; then it is compiled and its methods are set on
it, so every later call is the compiled pattern's own. It is no ``re.Pattern`` to ``isinstance`` nor to the
``re`` module's functions (``re.search(p, s)``), and a match's ``.re`` is the compiled pattern, not it (a reader
that tells its patterns apart by ``m.re is _X`` keeps ``re.compile``'s); marks.Marks' markers stay ``re.compile``'s
(their line-start ones are searched together only when they are)."""

from __future__ import annotations

import re
from typing import cast

_BOUND = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split", "scanner", "flags", "groups",
          "groupindex")
MADE: list[_Later] = []  # every pattern made here, for the test that compiles each (a typo fails there, not later)


class _Later:
    """``pattern`` and ``flags``, compiled the first time anything else is asked of it."""

    def __init__(self, pattern: str, flags: int) -> None:
        self.pattern, self.given = pattern, flags

    def __getattr__(self, name: str) -> object:  # called only for a name not set on it yet
        if name.startswith("__"):  # copy, pickle and the like probe for dunders: this has none of its own
            raise AttributeError(name)
        compiled = re.compile(self.pattern, self.given)
        for attr in _BOUND:
            setattr(self, attr, getattr(compiled, attr))
        return getattr(compiled, name)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _Later):
            return (self.pattern, self.given) == (other.pattern, other.given)
        return isinstance(other, re.Pattern) and re.compile(self.pattern, self.given) == other

    def __hash__(self) -> int:
        return hash((self.pattern, self.given))

    def __copy__(self) -> _Later:  # as a compiled pattern's: the same one (a pattern never changes)
        return self

    def __deepcopy__(self, memo: object) -> _Later:
        return self

    def __reduce__(self) -> tuple[object, tuple[str, int]]:  # pickled as its text and flags, as re.Pattern is
        return lazy, (self.pattern, self.given)

    def __repr__(self) -> str:
        return f"lazy({self.pattern!r}, {self.given})"


def lazy(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, compiled on first use (see the module's docstring for what it is not)."""
    made = _Later(pattern, int(flags))
    MADE.append(made)
    return cast("re.Pattern[str]", made)
