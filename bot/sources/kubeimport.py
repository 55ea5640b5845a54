"""Import the ``kubernetes`` package without the libraries it imports for features the bot never uses.

``import kubernetes`` runs the package's ``__init__``, which imports every sub-package. Two of them import, at import
time, libraries used by one path each: ``config.kube_config`` imports requests-oauthlib and oauthlib to refresh an
OIDC auth-provider's token, and ``stream.ws_client`` imports ``requests.utils`` for exec/attach over a websocket.
Through them come ``requests`` and charset-normalizer: 4.8 MB of every replica's memory at its first cluster read
(issue 29), for code that runs only when a kubeconfig's ``oidc`` auth-provider must be refreshed.

:func:`import_kubernetes` imports the package with those modules (:data:`DEFERRED`) stood in for: a name taken from
one of them (``from requests_oauthlib import OAuth2Session``) is a function that imports the real module and calls
the real name when it is called; a module kept whole (``import oauthlib.oauth2``) resolves its attributes through the
real module from then on. So an OIDC refresh still works, and loads those libraries the first time it runs.

Guarantees:

* Only the package's own import sees the stand-ins: they are in ``sys.modules`` while it runs, with the interpreter's
  import lock held (another thread's import waits), and removed after it.
* A module of :data:`DEFERRED` already imported is used as it is (nothing is deferred then).
* If a release of the package uses one of them while it is imported (a class subclassed, a constant read), the import
  with stand-ins fails, and the package is imported again as usual: the bot then pays the memory, not an error.
"""

from __future__ import annotations

import _imp
import importlib
import logging
import sys
import threading
import types
from collections.abc import Callable, Iterable
from typing import Any

log = logging.getLogger(__name__)

DEFERRED = ("requests", "requests.utils", "requests_oauthlib", "oauthlib", "oauthlib.oauth2")
"""What ``kubernetes`` imports for OIDC refresh and websocket streams, and only uses there."""

_once = threading.Lock()


def import_kubernetes() -> types.ModuleType:
    """The ``kubernetes`` package, imported the first time with :data:`DEFERRED` stood in for."""
    return import_deferring("kubernetes", DEFERRED)


def import_deferring(package: str, deferred: Iterable[str]) -> types.ModuleType:
    """``package``, imported (if it is not yet) with the modules ``deferred`` stood in for while it is."""
    with _once:
        if package in sys.modules:
            return sys.modules[package]
        stand_ins = {name: _Deferred(name) for name in deferred if name not in sys.modules}
        _imp.acquire_lock()  # re-entrant for this thread; any other thread's import waits until they are gone
        try:
            sys.modules.update(stand_ins)
            try:
                return importlib.import_module(package)
            except Exception as e:  # any failure of the deferred import: a plain one
                log.info("%s imported with %s (deferring them failed: %r)", package, ", ".join(stand_ins), e)
                for name in [m for m in sys.modules if m == package or m.startswith(f"{package}.")]:
                    del sys.modules[name]
                _remove(stand_ins)
                return importlib.import_module(package)
        finally:
            _remove(stand_ins)
            _imp.release_lock()


def _remove(stand_ins: dict[str, _Deferred]) -> None:
    for name, module in stand_ins.items():
        if sys.modules.get(name) is module:
            del sys.modules[name]


class _Deferred(types.ModuleType):
    """A module's stand-in: while it is in ``sys.modules`` (the package's import), a name taken from it is a
    function calling the real name; after, any attribute is the real module's (or its sub-module's)."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if sys.modules.get(self.__name__) is self:
            return _deferred_call(self.__name__, name)
        real = importlib.import_module(self.__name__)
        try:
            return getattr(real, name)
        except AttributeError:
            return importlib.import_module(f"{self.__name__}.{name}")


def _deferred_call(module: str, name: str) -> Callable[..., Any]:
    def deferred(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    deferred.__name__ = deferred.__qualname__ = name
    deferred.__module__ = module
    return deferred
