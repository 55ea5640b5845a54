"""The jobs of a running bot, one module per job, and the :class:`Runtime` that starts and stops them.

* :mod:`~bot.runtime.worker` takes jobs from the durable queue and does them: an app's parent message and thread
  (:mod:`~bot.runtime.alerts`), the burst digest (:mod:`~bot.runtime.digest`), Open PR and Approve clicks
  (:mod:`~bot.runtime.fixflow`), one job per app at a time (:mod:`~bot.runtime.serial`);
* :mod:`~bot.runtime.scheduler` runs the scheduled jobs on one replica: the sweep of Argo CD and the dead letters
  (:mod:`~bot.runtime.sweep`), mutes ended, reminders and the daily summary (:mod:`~bot.runtime.reminders`), the
  pull-request follow-up (:mod:`~bot.runtime.followup`);
* :class:`Services` is what every job is given, built once by the composition root (:mod:`bot.app`).

The runtime receives its settings and clients already validated: it never reads the environment and never calls
the configuration's helpers (an import contract in ``pyproject.toml`` keeps it so).
"""

from __future__ import annotations

from bot.runtime.runtime import Runtime
from bot.runtime.services import Services

__all__ = ["Runtime", "Services"]
