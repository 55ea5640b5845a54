"""The fake Argo CD API server lives in ``bot.demo`` (the offline demo uses it); re-exported for tests."""

from bot.demo.fake_argocd import *  # noqa: F403
from bot.demo.fake_argocd import (  # noqa: F401
    REVISION,
    Call,
    FakeArgoCD,
    app_from_case,
    build_application,
    hide_secret_data,
    load_manifests,
    predict_live,
    resource_diff,
)
