"""One job at a time per app, across the workers of a replica and across replicas.

Two alerts for the same app handled at once would both find no thread and both post a parent. :class:`AppLocks`
makes the work on an app's thread a critical section: a lock per app in the store (``lock:app:<app_key>``, see
:mod:`bot.store`) with a lease, renewed while the holder works, so that a holder that dies (kill -9) blocks the
app for at most ``lease_s``. A waiter polls with a growing, jittered delay; after ``wait_s`` it gives up with
:class:`AppBusy` and its job stays pending, to be claimed again.

The owner is a worker (a queue consumer), which does one job at a time: a lock it finds in its own name is a
leftover of its own job interrupted earlier (Redis went away before the lock could be released), and is taken
over at once rather than waited out. Code that holds an app's lock never asks for it again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import AsyncIterator

from bot.errors import ArgoWhyError
from bot.store import Store, StoreUnavailable

log = logging.getLogger("argo_why.serial")


class AppBusy(ArgoWhyError):
    """Another worker kept the app's lock for longer than this one would wait."""


class AppLocks:
    def __init__(self, store: Store, owner: str, *, lease_s: int = 30, wait_s: float = 120.0) -> None:
        self.store = store
        self.owner = owner
        self.lease_s = max(1, lease_s)
        self.wait_s = wait_s

    @contextlib.asynccontextmanager
    async def hold(self, app_key: str) -> AsyncIterator[None]:
        name = f"app:{app_key}"
        deadline = time.monotonic() + self.wait_s
        delay = 0.02
        while not (await self.store.acquire_lock(name, self.owner, self.lease_s)
                   or await self.store.refresh_lock(name, self.owner, self.lease_s)):  # fmt: skip
            if time.monotonic() > deadline:
                raise AppBusy(f"{app_key} is being worked on elsewhere for more than {self.wait_s:.0f} s")
            await asyncio.sleep(delay * random.uniform(0.5, 1.5))
            delay = min(delay * 2, 0.5)
        renew = asyncio.create_task(self._renew(name), name=f"lease {name}")
        try:
            yield
        finally:
            renew.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renew
            with contextlib.suppress(StoreUnavailable):  # it expires by itself
                await self.store.release_lock(name, self.owner)

    async def _renew(self, name: str) -> None:
        while True:
            await asyncio.sleep(self.lease_s / 3)
            try:
                if not await self.store.refresh_lock(name, self.owner, self.lease_s):
                    # the lease ran out (a long stall, or Redis came back empty): the posts stay idempotent
                    log.warning("lost %s while working; another worker may start on it", name)
                    return
            except StoreUnavailable as e:
                log.warning("could not renew %s: %s", name, e)
