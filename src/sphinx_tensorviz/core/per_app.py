"""State the extension keeps for one Sphinx application, without setting attributes on it.

Why: the application belongs to Sphinx (and, in tests or a server, to a process that builds
several projects); an extension that hangs ``app._something`` on it changes an object it does not
own and leaves that state behind for as long as the application lives. What is per build belongs
in the environment; what is per application (the kinds the features registered, the artifacts
parsed in this process) lives in a :class:`PerApp` slot of the module that owns it, keyed weakly:
two applications never share a value, and a value goes when its application does.

A slot is a module-level object, so ``sphinx-build -j``'s forked workers see the parent's
values, as they saw its attributes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar
from weakref import WeakKeyDictionary

T = TypeVar("T")


class PerApp(Generic[T]):
    """One value per application, made by ``factory`` on first use and dropped with the application.

    The value must not refer to the application itself (it would keep it alive).
    """

    def __init__(self, factory: Callable[[], T]) -> None:
        self._factory = factory
        self._values: WeakKeyDictionary[Any, T] = WeakKeyDictionary()

    def of(self, app: Any) -> T:
        """The value of ``app``, made now if it has none yet."""
        try:
            return self._values[app]
        except KeyError:
            value = self._values[app] = self._factory()
            return value

    def get(self, app: Any) -> T | None:
        """The value of ``app``, or ``None`` when nothing made one (nothing is made here)."""
        return self._values.get(app)
