"""The fake Kubernetes API server of ``bot.demo`` (the offline demo runs against it), with the controls only tests
use: ``forbid``, ``fail_next``/``drop_next`` (tests/fakes/injection.py) and ``reset``."""

from __future__ import annotations

from bot.demo import fake_kube
from bot.demo.fake_argocd import Obj, Response
from bot.demo.fake_kube import (  # noqa: F401  (the demo's names, re-exported)
    BUILTIN_TYPES,
    KUBERNETES_VERSION,
    KubeError,
    ResourceType,
    context_from_case,
    parse_field_selector,
    status,
)
from tests.fakes.injection import FailureInjection

#: The identity RBAC messages name: argo-why's service account, as installed by the Helm chart.
SERVICE_ACCOUNT_USER = "system:serviceaccount:argocd:argo-why"


class FakeKubernetes(FailureInjection, fake_kube.FakeKubernetes):
    def __init__(self) -> None:
        self._forbidden: set[tuple[str, str | None]] = set()  # (plural, group or None = any group)
        super().__init__()

    def forbid(self, resource: str) -> None:
        """Reads of ``resource`` ("horizontalpodautoscalers", or "scaledobjects.keda.sh" for one group only)
        answer 403 Forbidden, as for a service account without RBAC on it."""
        name, _, group = resource.partition(".")
        with self._lock:
            self._forbidden.add((name, group if group else None))

    def reset(self) -> None:
        super().reset()
        with self._lock:
            self._objects.clear()
            self._forbidden.clear()
            self._reset_types()

    def failure(self, status_code: int, message: str | None) -> Response:
        reason, default = {
            429: ("TooManyRequests", "Too many requests, please try again later."),
            500: ("InternalError", "Internal error occurred: etcdserver: request timed out"),
            503: ("ServiceUnavailable", "the server is currently unable to handle the request"),
        }[status_code]
        return self._json(status(status_code, reason, message or default, {}), status_code)

    def _check_forbidden(self, group: str, resource: str, verb: str, namespace: str | None, name: str | None) -> None:
        # RBAC runs before routing in kube-apiserver: a forbidden read is 403 even for a type that is not served.
        if (resource, None) not in self._forbidden and (resource, group) not in self._forbidden:
            return
        qualified = f"{resource}.{group}" if group else resource
        subject = f'{qualified} "{name}"' if name else qualified
        scope = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
        message = (
            f'{subject} is forbidden: User "{SERVICE_ACCOUNT_USER}" cannot {verb} resource "{resource}" '
            f'in API group "{group}" {scope}'
        )
        details: Obj = {"name": name} if name else {}
        if group:
            details["group"] = group
        details["kind"] = resource
        raise KubeError(status(403, "Forbidden", message, details))
