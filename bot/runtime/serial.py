"""One job at a time per app, across the workers of a replica and across replicas.

Two alerts for the same app handled at once would both find no thread and both post a parent. :class:`AppLocks`
makes the work on an app's thread a critical section: a lock per app in the store (``lock:app:<app_key>``, see
:mod:`bot.store`) with a lease, renewed while the holder works, so that a holder that dies (kill -9) blocks the
app for at most ``lease_s``. A waiter polls with a growing, jittered delay; after ``wait_s`` it gives up with
:class:`AppBusy` and its job stays pending, to be claimed again.

The owner is a worker (a queue consumer), which does one job at a time: a lock it finds in its own name is a
leftover of its own job interrupted earlier (Redis went away before the lock could be released), and is taken
over at once rather than waited out. Code that holds an app's lock never asks for it again.

:func:`leased` is the same lease for a lock that is not waited for (the digest flush, the opening of a pull
request): taken or not at once, renewed while held, and released on the way out however the block ends, also when
the answer to the taking never came (a cancelled task, a lost connection): the lock may be ours, and a release only
deletes a lock in its holder's name (fencing by identity), so it never frees someone else's.
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


@contextlib.asynccontextmanager
async def leased(store: Store, name: str, owner: str, lease_s: int) -> AsyncIterator[bool]:
    """Hold the lock ``name`` for the block if nobody holds it (yields whether it is held), renewed every third of
    ``lease_s``: a holder that dies blocks the others for at most ``lease_s``."""
    held: bool | None = None  # None: the taking did not answer, the lock may be ours
    renew: asyncio.Task[None] | None = None
    try:
        held = await store.acquire_lock(name, owner, lease_s)
        if held:
            renew = asyncio.create_task(_renew(store, name, owner, lease_s), name=f"lease {name}")
        yield held
    finally:
        if renew is not None:
            renew.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renew
        if held is not False:
            with contextlib.suppress(StoreUnavailable):  # it expires by itself, within lease_s
                await store.release_lock(name, owner)


async def _renew(store: Store, name: str, owner: str, lease_s: int) -> None:
    while True:
        await asyncio.sleep(lease_s / 3)
        try:
            if not await store.refresh_lock(name, owner, lease_s):
                # the lease ran out (a long stall, or Redis came back empty): what the holder writes stays idempotent
                log.warning("lost %s while working; another replica may start on it", name)
                return
        except StoreUnavailable as e:
            log.warning("could not renew %s: %s", name, e)


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
        try:
            while not (await self.store.acquire_lock(name, self.owner, self.lease_s)
                       or await self.store.refresh_lock(name, self.owner, self.lease_s)):  # fmt: skip
                if time.monotonic() > deadline:
                    raise AppBusy(f"{app_key} is being worked on elsewhere for more than {self.wait_s:.0f} s")
                await asyncio.sleep(delay * random.uniform(0.5, 1.5))
                delay = min(delay * 2, 0.5)
        except asyncio.CancelledError:  # stopped while taking it: the lock may be ours (released in our name only)
            with contextlib.suppress(StoreUnavailable):
                await self.store.release_lock(name, self.owner)
            raise
        renew = asyncio.create_task(_renew(self.store, name, self.owner, self.lease_s), name=f"lease {name}")
        try:
            yield
        finally:
            renew.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renew
            with contextlib.suppress(StoreUnavailable):  # it expires by itself
                await self.store.release_lock(name, self.owner)
