"""The fake Kubernetes API server lives in ``bot.devtools`` (the offline demo uses it); re-exported for tests."""

from bot.devtools.fake_kube import *  # noqa: F403
from bot.devtools.fake_kube import SERVICE_ACCOUNT_USER, FakeKubernetes, context_from_case  # noqa: F401
