"""A bot in a process of its own, for the tests that kill it (SIGKILL) mid-job.

``python -m tests.harness.bot_process [--claim-idle-ms N] [--lock-lease S] [--tick S]`` runs what ``argo-why serve``
runs, configured from the environment the same way, with the runtime's timings shortened so that a test does not wait
minutes for what the dead process held (its entries, its app locks, its scheduler lease).
"""

from __future__ import annotations

import argparse
import logging

import uvicorn

from bot.app import build_app, build_services
from bot.config import load_settings
from bot.runtime import Runtime


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.harness.bot_process")
    parser.add_argument("--claim-idle-ms", type=int, default=300)
    parser.add_argument("--lock-lease", type=int, default=2)
    parser.add_argument("--tick", type=float, default=0.2)
    args = parser.parse_args(argv)
    settings = load_settings()
    settings.check_serve()
    logging.basicConfig(level=logging.WARNING)
    services = build_services(settings)
    runtime = Runtime(services, claim_idle_ms=args.claim_idle_ms, tick_s=args.tick, lock_lease_s=args.lock_lease)
    uvicorn.run(build_app(services, runtime=runtime), host="127.0.0.1", port=settings.runtime.port,
                log_level="warning")  # fmt: skip


if __name__ == "__main__":
    main()
