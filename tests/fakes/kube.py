"""The fake Kubernetes API server lives in ``bot.demo`` (the offline demo uses it); re-exported for tests."""

from bot.demo.fake_kube import *  # noqa: F403
from bot.demo.fake_kube import SERVICE_ACCOUNT_USER, FakeKubernetes, context_from_case  # noqa: F401
