"""The Helm chart as a platform engineer installs it: rendered by real Helm (helm-python-sdk binds Helm's Go SDK;
no helm binary), every object validated against the Kubernetes OpenAPI schemas (kubernetes-validate, strict: an
unknown field fails), for the default install, the HA values and the external-Redis values of ``deploy/values/``.

Then what the issue behind the chart asked for: a default install brings the Redis it points at, a Redis URL or
password from a Secret is never shadowed by a literal, unknown values fail, Slack reaches only ``/slack/events``,
the webhook port admits Argo CD's notifications controller, ``/metrics`` has its own port, cluster-scoped names do
not collide between releases, and the environment the chart builds is one the bot itself accepts. The values of the
bot's runtime settings (``fleet.minApps``, ``schedule.*``, ``argocd.cmDefinition``) reach the variable the bot reads,
the schema refuses what the bot would refuse, and left unset they leave the bot's own defaults in force.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import helm_python as helm
import kubernetes_validate
import pytest
import yaml

from bot.config import ArgoCDSettings, ConfigError, Settings, load_settings
from tests.paths import ROOT

CHART = ROOT / "deploy" / "chart" / "argo-why"
VALUES = ROOT / "deploy" / "values"
# the channel, and Argo CD's public URL (the default argocd.url is in-cluster: no browser opens it)
REQUIRED: dict[str, Any] = {"slack": {"channel": "C0123456789"}, "argocd": {"publicUrl": "https://argocd.example.com"}}
KUBE_VERSIONS = ("1.25.0", "1.37.0")  # the chart's kubeVersion floor, and the newest schemas shipped
CM_DEFINITION = "https://github.com/acme/gitops/blob/main/argocd/values.yaml"
CASES: dict[str, dict[str, Any]] = {
    "default": REQUIRED,
    "ha": yaml.safe_load((VALUES / "ha.yaml").read_text()),
    "external-redis": yaml.safe_load((VALUES / "external-redis.yaml").read_text()),
    # every optional part at once, so that each is validated against the schemas too
    "all-options": {
        "slack": {"channel": "C0123456789", "channelRoutes": [{"project": "team-b-*", "channel": "#team-b"},
                                                              {"project": "*", "channel": "C0PLATFORM"}]},
        "approverRoutes": [{"project": "team-b-*", "approvers": ["U0BOB", "S0TEAMB"]},
                           {"project": "z", "approvers": []}],
        "image": {"digest": "sha256:" + "ab" * 32}, "imagePullSecrets": [{"name": "registry"}],
        "argocd": {"publicUrl": "https://argocd.example.com", "cmDefinition": CM_DEFINITION,
                   "tls": {"caSecret": "argocd-server-tls"}, "appNamespace": "team-a",
                   "clusterContexts": {"https://prod.example.com:6443": "prod"}},
        "kubeconfig": {"secret": "clusters"},
        "git": {"provider": "gitlab", "apiUrl": "https://gitlab.example.com/api/v4", "tokenSecret": "argo-why"},
        "approvers": ["U0ALICE", "S0PLATFORM"], "approvalsRequired": 2,
        "fleet": {"minApps": 5}, "schedule": {"dailySummaryAt": "off", "weeklyReportAt": "fri 17:30"},
        "env": {"WORKERS": 8, "DIGEST_THRESHOLD": "20"},
        "extraEnv": [{"name": "HTTPS_PROXY", "value": "http://proxy:3128"}],
        "redis": {"auth": {"existingSecret": "redis-auth"},
                  "persistence": {"enabled": True, "size": "2Gi", "storageClass": "fast"},
                  "nodeSelector": {"pool": "data"}},
        "serviceAccount": {"annotations": {"eks.amazonaws.com/role-arn": "arn:aws:iam::1:role/argo-why"}},
        "podAnnotations": {"a": "b"}, "podLabels": {"team": "platform"}, "priorityClassName": "tools",
        "nodeSelector": {"pool": "tools"}, "tolerations": [{"key": "tools", "operator": "Exists"}],
        "extraVolumes": [{"name": "extra", "configMap": {"name": "x"}}],
        "extraVolumeMounts": [{"name": "extra", "mountPath": "/etc/extra", "readOnly": True}],
        "networkPolicy": {"metricsFrom": [{"podSelector": {"matchLabels": {"app": "prometheus"}}}]},
        "serviceMonitor": {"enabled": True},
        "view": {"enabled": True, "linkTTL": 3600, "baseUrl": "https://argo-why.internal.example.com"},
    },
    # the drift page behind the Ingress, beside /slack/events
    "view": {**REQUIRED, "ingress": {"enabled": True, "host": "argo-why.example.com"}, "view": {"enabled": True}},
}  # fmt: skip
SECRETS = {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s", "SLACK_APP_TOKEN": "xapp-1",
           "ARGOCD_TOKEN": "t", "WEBHOOK_TOKEN": "w", "GIT_TOKEN": "g", "redis-password": "0123abcd",
           "REDIS_URL": "redis://:pw@redis.example:6379/0", "VIEW_LINK_KEY": "v" * 64}  # fmt: skip

Obj = dict[str, Any]


def render(values: dict[str, Any], *, name: str = "argo-why", namespace: str = "argo-why") -> dict[str, Any]:
    """``{"objects": [...], "notes": "..."}`` as ``helm install`` would create them."""
    with helm.Chart.load(CHART) as chart:
        files = chart.render(values, name=name, namespace=namespace, is_install=True)
    objects = [o for path, text in files.items() if path.endswith(".yaml") for o in yaml.safe_load_all(text) if o]
    notes = next((text for path, text in files.items() if path.endswith("NOTES.txt")), "")
    return {"objects": objects, "notes": notes}


def with_(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    values = copy.deepcopy(base)
    for key, value in changes.items():
        values[key] = {**values.get(key, {}), **value} if isinstance(value, dict) else value
    return values


def one(objects: list[Obj], kind: str, name: str | None = None) -> Obj:
    [found] = [o for o in objects if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]
    return found


def bot_container(objects: list[Obj]) -> Obj:
    container: Obj = one(objects, "Deployment")["spec"]["template"]["spec"]["containers"][0]
    return container


def env_of(container: Obj) -> dict[str, Obj]:
    entries: list[Obj] = container.get("env") or []
    names = [e["name"] for e in entries]
    assert len(names) == len(set(names)), f"duplicate env entries: {names}"
    return {e["name"]: e for e in entries}


def selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


@pytest.fixture(scope="module")
def rendered() -> dict[str, dict[str, Any]]:
    return {case: render(values) for case, values in CASES.items()}


# --- every object is a valid Kubernetes object -----------------------------------------------------------------


@pytest.mark.parametrize("version", KUBE_VERSIONS)
@pytest.mark.parametrize("case", list(CASES))
def test_every_object_is_valid_against_the_kubernetes_schemas(rendered: dict[str, Any], case: str,
                                                              version: str) -> None:  # fmt: skip
    problems = []
    for obj in rendered[case]["objects"]:
        if obj["apiVersion"].startswith("monitoring.coreos.com/"):
            continue  # a CRD (ServiceMonitor): no schema ships with kubernetes-validate; checked below
        try:
            kubernetes_validate.validate(obj, version, strict=True)
        except kubernetes_validate.ValidationError as e:
            where = "/".join(str(p) for p in e.absolute_path)
            problems.append(f"{obj['kind']}/{obj['metadata']['name']}: {where}: {e.message}")
    assert not problems, "\n".join(problems)


def test_helm_lint_finds_nothing_but_the_missing_icon() -> None:
    result = helm.lint(CHART, REQUIRED, strict=True, kube_version=KUBE_VERSIONS[0])
    assert result["errors"] == []
    assert [m["error"] for m in result["messages"]] == ["icon is recommended"]


# --- Redis: a default install becomes Ready ------------------------------------------------------------------


def test_the_default_install_brings_the_redis_it_points_at(rendered: dict[str, Any]) -> None:
    objects = rendered["default"]["objects"]
    redis_sts, redis_svc = one(objects, "StatefulSet", "argo-why-redis"), one(objects, "Service", "argo-why-redis")
    env = env_of(bot_container(objects))
    assert env["REDIS_URL"]["value"] == "redis://argo-why-redis:6379/0"
    redis_pod_labels = redis_sts["spec"]["template"]["metadata"]["labels"]
    bot_pod_labels = one(objects, "Deployment")["spec"]["template"]["metadata"]["labels"]
    assert selects(redis_svc["spec"]["selector"], redis_pod_labels)
    assert not selects(redis_svc["spec"]["selector"], bot_pod_labels)
    assert not selects(one(objects, "Service", "argo-why")["spec"]["selector"], redis_pod_labels)
    assert redis_svc["spec"]["ports"][0]["port"] == 6379


def test_a_redis_url_from_a_secret_is_the_only_one(rendered: dict[str, Any]) -> None:
    objects = rendered["ha"]["objects"]
    container = bot_container(objects)
    assert env_of(container)["REDIS_URL"] == {
        "name": "REDIS_URL", "valueFrom": {"secretKeyRef": {"name": "argo-why-redis", "key": "REDIS_URL"}},
    }  # fmt: skip
    assert "envFrom" not in container  # nothing imported wholesale that a literal could shadow, or vice versa
    assert not [o for o in objects if o["metadata"]["name"].endswith("-redis")]


def test_the_in_chart_redis_password_comes_from_its_secret_into_both_sides() -> None:
    objects = render(with_(REQUIRED, redis={"auth": {"existingSecret": "redis-auth"}}))["objects"]
    env = env_of(bot_container(objects))
    names = list(env)
    assert names.index("REDIS_PASSWORD") < names.index("REDIS_URL")  # Kubernetes expands $(VAR) defined before
    assert env["REDIS_URL"]["value"] == "redis://:$(REDIS_PASSWORD)@argo-why-redis:6379/0"
    redis = one(objects, "StatefulSet")["spec"]["template"]["spec"]["containers"][0]
    assert redis["args"][-2:] == ["--requirepass", "$(REDIS_PASSWORD)"]
    assert env_of(redis)["REDIS_PASSWORD"]["valueFrom"]["secretKeyRef"] == {"name": "redis-auth",
                                                                            "key": "redis-password"}  # fmt: skip


@pytest.mark.parametrize(
    ("values", "says"),
    [
        (with_(REQUIRED, env={"REDIS_URL": "redis://x:6379"}), "env.REDIS_URL: a literal here would silently win"),
        (with_(REQUIRED, env={"ARGOCD_TOKEN": "t"}), "env.ARGOCD_TOKEN: a literal here would silently win"),
        (with_(REQUIRED, env={"ARGOCD_URL": "https://x"}), "env.ARGOCD_URL is set by the chart"),
        (with_(REQUIRED, extraEnv=[{"name": "REDIS_URL", "value": "redis://x"}]), "env.REDIS_URL: a literal here"),
        (with_(REQUIRED, externalRedis={"url": "redis://r:6379/0"}), "set only one of redis.enabled"),
        (with_(REQUIRED, redis={"enabled": False}), "must run alone (replicaCount: 1)"),
        (with_(REQUIRED, slack={"socketMode": True}), "Socket Mode needs replicaCount: 1"),
        (with_(REQUIRED, argocd={"clusterContexts": {"prod": "prod"}}), "mount the kubeconfig"),
        ({}, "slack.channel is required"),
        (with_(REQUIRED, ingress={"enabled": True}), "ingress.host is required"),
        (with_(REQUIRED, view={"enabled": True}), "view.enabled: the links need the bot's public URL"),
        (with_(REQUIRED, env={"VIEW_LINK_KEY": "k" * 32}), "env.VIEW_LINK_KEY: a literal here would silently win"),
        (with_(REQUIRED, env={"VIEW_BASE_URL": "https://x"}), "env.VIEW_BASE_URL is set by the chart"),
        (with_(REQUIRED, env={"FLEET_MIN_APPS": 5}), "env.FLEET_MIN_APPS is set by the chart"),
        (
            with_(REQUIRED, extraEnv=[{"name": "WEEKLY_REPORT_AT", "value": "off"}]),
            "env.WEEKLY_REPORT_AT is set by the chart",
        ),
        (with_(REQUIRED, env={"DAILY_SUMMARY_AT": "off"}), "env.DAILY_SUMMARY_AT is set by the chart"),
        (with_(REQUIRED, terminationGracePeriodSeconds=24), "terminationGracePeriodSeconds (24) must be at least 5 s"),
        (with_(REQUIRED, env={"SHUTDOWN_GRACE_SECONDS": "26"}), "over SHUTDOWN_GRACE_SECONDS (26)"),
        (
            with_(
                REQUIRED,
                extraEnv=[{"name": "SHUTDOWN_GRACE_SECONDS", "value": "50.5"}],
                terminationGracePeriodSeconds=55,
            ),
            "over SHUTDOWN_GRACE_SECONDS (50.5)",
        ),
        (with_(REQUIRED, env={"ARGOCD_CM_DEFINITION": CM_DEFINITION}), "env.ARGOCD_CM_DEFINITION is set by the chart"),
    ],
)
def test_contradictory_values_fail_with_one_line_naming_them(values: dict[str, Any], says: str) -> None:
    with pytest.raises(helm.HelmRenderError, match=r".*") as err:
        render(values)
    assert says in str(err.value)


@pytest.mark.parametrize(
    "values",
    [with_(REQUIRED, replicas=3), with_(REQUIRED, redis={"enable": False}), with_(REQUIRED, slack={"chanel": "C1"}),
     with_(REQUIRED, slack={"channel": "#alerts"}), with_(REQUIRED, approvalsRequired=3),
     with_(REQUIRED, slack={"channel": "C1", "channelRoutes": [{"project": "a", "channel": "Team A"}]}),
     with_(REQUIRED, approverRoutes=[{"project": "a", "approvers": ["alice"]}]),
     with_(REQUIRED, view={"enabled": True, "baseUrl": "argo-why.example.com"}),
     with_(REQUIRED, view={"enabled": True, "baseUrl": "https://a.example", "linkTTL": "tomorrow"}),
     with_(REQUIRED, fleet={"min": 3}), with_(REQUIRED, schedule={"weekly": "mon 09:00"})],
)  # fmt: skip
def test_unknown_or_malformed_values_fail_the_install(values: dict[str, Any]) -> None:
    with pytest.raises(helm.HelmValuesError):
        render(values)


# --- the bot's runtime settings: fleet.minApps, schedule.*, argocd.cmDefinition ---------------------------------

RUNTIME_VALUES: dict[tuple[str, str], tuple[str, str, str]] = {
    ("fleet", "minApps"): ("FLEET_MIN_APPS", "runtime", "fleet_min_apps"),
    ("schedule", "dailySummaryAt"): ("DAILY_SUMMARY_AT", "runtime", "daily_summary_at"),
    ("schedule", "weeklyReportAt"): ("WEEKLY_REPORT_AT", "runtime", "weekly_report_at"),
    ("argocd", "cmDefinition"): ("ARGOCD_CM_DEFINITION", "git", "argocd_cm_definition"),
}
"""value (section, key) -> the variable it renders, and the settings group and field of the bot that read it."""

GITLAB_CM = "http://gitlab.internal/platform/gitops/-/blob/release/1.2/argocd-cm.yaml"
ACCEPTED: list[tuple[str, str, Any, Any]] = [
    ("fleet", "minApps", 2, 2), ("fleet", "minApps", 10000, 10000),
    ("schedule", "dailySummaryAt", "09:30", "09:30"), ("schedule", "dailySummaryAt", "7:05", "07:05"),
    ("schedule", "dailySummaryAt", "off", None),
    ("schedule", "weeklyReportAt", "fri 17:30", "fri 17:30"), ("schedule", "weeklyReportAt", "sun 0:00", "sun 00:00"),
    ("schedule", "weeklyReportAt", "off", None),
    ("argocd", "cmDefinition", CM_DEFINITION, CM_DEFINITION), ("argocd", "cmDefinition", GITLAB_CM, GITLAB_CM),
]  # fmt: skip
"""(section, key, chart value, what the bot reads from the variable it renders)."""
REFUSED: list[tuple[str, str, Any]] = [
    ("fleet", "minApps", 1), ("fleet", "minApps", 0), ("fleet", "minApps", 10001), ("fleet", "minApps", 2.5),
    ("schedule", "dailySummaryAt", "24:00"), ("schedule", "dailySummaryAt", "09:60"),
    ("schedule", "dailySummaryAt", "9"), ("schedule", "dailySummaryAt", "9am"),
    ("schedule", "dailySummaryAt", "09:00:00"), ("schedule", "dailySummaryAt", "mon 09:00"),
    ("schedule", "weeklyReportAt", "monday 09:00"), ("schedule", "weeklyReportAt", "mon"),
    ("schedule", "weeklyReportAt", "09:00"), ("schedule", "weeklyReportAt", "mon 24:00"),
    ("schedule", "weeklyReportAt", "mon 9am"), ("schedule", "weeklyReportAt", "daily 09:00"),
    ("argocd", "cmDefinition", "github.com/acme/gitops/blob/main/argocd/values.yaml"),
    ("argocd", "cmDefinition", "git@github.com:acme/gitops.git"),
    ("schedule", "weeklyReportAt", True),
]  # fmt: skip
"""Values that both the chart's schema and the bot refuse: the schema is no looser than the bot."""


def bot_reads(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> Settings:
    """The settings the bot reads from ``env`` (the variables of these values, and only them, set)."""
    for var, _, _ in RUNTIME_VALUES.values():
        monkeypatch.delenv(var, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return load_settings()


def test_each_value_names_a_variable_the_bot_reads() -> None:
    settings = Settings()
    for var, group, field in RUNTIME_VALUES.values():
        assert type(getattr(settings, group)).model_fields[field].validation_alias == var


@pytest.mark.parametrize(("section", "key", "value", "read"), ACCEPTED)
def test_a_runtime_value_reaches_the_variable_the_bot_reads(section: str, key: str, value: Any, read: Any,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    var, group, field = RUNTIME_VALUES[(section, key)]
    env = env_of(bot_container(render(with_(REQUIRED, **{section: {key: value}}))["objects"]))
    assert env[var] == {"name": var, "value": str(value)}  # as given: the bot normalizes and says what is wrong
    others = {v for v, _, _ in RUNTIME_VALUES.values()} - {var}
    assert not others & set(env)  # each value sets its own variable, and no other
    assert getattr(getattr(bot_reads(monkeypatch, {var: env[var]["value"]}), group), field) == read


@pytest.mark.parametrize("key", ["dailySummaryAt", "weeklyReportAt"])
def test_a_bare_off_in_a_values_file_turns_a_schedule_off(key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    values = yaml.safe_load(f"schedule: {{{key}: off}}")  # YAML 1.1, as Helm reads values files: off is false
    assert values == {"schedule": {key: False}}
    var, group, field = RUNTIME_VALUES[("schedule", key)]
    env = env_of(bot_container(render(with_(REQUIRED, **values))["objects"]))
    assert env[var] == {"name": var, "value": "off"}
    assert getattr(getattr(bot_reads(monkeypatch, {var: "off"}), group), field) is None


@pytest.mark.parametrize(("section", "key", "value"), REFUSED)
def test_a_value_the_bot_would_refuse_fails_the_install(section: str, key: str, value: Any,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    with pytest.raises(helm.HelmValuesError) as err:
        render(with_(REQUIRED, **{section: {key: value}}))
    assert f"/{section}/{key}" in str(err.value)  # the schema names the value
    var = RUNTIME_VALUES[(section, key)][0]
    with pytest.raises(ConfigError, match=var):  # and the bot, given it anyway, stops naming its variable
        bot_reads(monkeypatch, {var: str(value)})


@pytest.mark.parametrize("case", ["default", "ha", "external-redis"])
def test_unset_runtime_values_leave_the_bots_defaults_in_force(rendered: dict[str, Any], case: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    env = env_of(bot_container(rendered[case]["objects"]))
    assert not {var for var, _, _ in RUNTIME_VALUES.values()} & set(env)
    settings = bot_reads(monkeypatch, {})
    assert settings.runtime.fleet_min_apps == 3
    assert settings.runtime.daily_summary_at == "09:00" and settings.runtime.weekly_report_at == "mon 09:00"
    assert settings.git.argocd_cm_definition is None


def test_every_setting_of_the_bot_has_a_chart_value_or_is_named_for_env_in_the_deploy_readme(
    rendered: dict[str, Any],
) -> None:
    """A variable the bot reads (bot/config.py) that the chart never sets must be one deploy/README.md tells to set
    through ``env``; and none it tells to set there may be one the chart sets (the chart would refuse it)."""
    groups = [field.annotation for field in Settings.model_fields.values()]
    read = {str(f.validation_alias) for group in groups if group for f in group.model_fields.values()}
    lone_socket = render(with_(REQUIRED, replicaCount=1, redis={"enabled": False}, slack={"socketMode": True},
                               argocd={"insecure": True}))  # fmt: skip
    outputs = [*rendered.values(), lone_socket]
    given = {
        name
        for values in CASES.values()
        for name in [*values.get("env", {}), *(e["name"] for e in values.get("extraEnv", []))]
    }
    set_by_chart = {name for out in outputs for name in env_of(bot_container(out["objects"]))} - given
    readme = " ".join((ROOT / "deploy" / "README.md").read_text().split())  # line breaks are the editor's
    start = readme.index("The bot's tuning variables")
    paragraph = readme[start : readme.index("says what each one does", start)]
    through_env = set(re.findall(r"`([A-Z][A-Z0-9_]+)`", paragraph))
    assert read - set_by_chart == through_env
    assert not through_env & set_by_chart


# --- what runs, and how --------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", list(CASES))
def test_the_bot_runs_read_only_as_uid_10001(rendered: dict[str, Any], case: str) -> None:
    pod = one(rendered[case]["objects"], "Deployment")["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsUser"] == 10001 and pod["securityContext"]["runAsNonRoot"] is True
    container = pod["containers"][0]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert {"name": "tmp", "mountPath": "/tmp"} in container["volumeMounts"]


@pytest.mark.parametrize("case", list(CASES))
def test_the_environment_the_chart_builds_is_one_the_bot_accepts(rendered: dict[str, Any], case: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    for var in (
        "SLACK_BOT_TOKEN",
        "SLACK_SIGNING_SECRET",
        "SLACK_APP_TOKEN",
        "SLACK_CHANNEL",
        "ARGOCD_URL",
        "ARGOCD_TOKEN",
        "WEBHOOK_TOKEN",
        "REDIS_URL",
        "KUBECONFIG",
        "GIT_PROVIDER",
        "GIT_TOKEN",
        *(var for var, _, _ in RUNTIME_VALUES.values()),
    ):
        monkeypatch.delenv(var, raising=False)  # fmt: skip
    env: dict[str, str] = {}
    for name, entry in env_of(bot_container(rendered[case]["objects"])).items():
        if "valueFrom" in entry:
            env[name] = SECRETS[entry["valueFrom"]["secretKeyRef"]["key"]]
        else:
            value = str(entry["value"])
            for var, known in env.items():
                value = value.replace(f"$({var})", known)  # what the kubelet does
            env[name] = value
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings = load_settings()
    settings.check_serve()
    assert settings.runtime.metrics_port == 9090 and settings.redis.url
    if case == "all-options":  # the routes in the order given (first match wins), as the bot reads them
        assert list(settings.slack.channel_routes.items()) == [("team-b-*", "#team-b"), ("*", "C0PLATFORM")]
        assert settings.git.approver_routes == {"team-b-*": ["U0BOB", "S0TEAMB"], "z": []}
        assert settings.runtime.fleet_min_apps == 5 and settings.runtime.weekly_report_at == "fri 17:30"
        assert settings.runtime.daily_summary_at is None and settings.git.argocd_cm_definition == CM_DEFINITION


def test_the_default_argocd_url_is_the_in_cluster_https_service(rendered: dict[str, Any]) -> None:
    env = env_of(bot_container(rendered["default"]["objects"]))
    assert env["ARGOCD_URL"]["value"] == "https://argocd-server.argocd.svc"


def test_a_ca_bundle_and_a_kubeconfig_are_mounted_where_the_bot_looks(monkeypatch: pytest.MonkeyPatch) -> None:
    contexts = {"https://prod.example.com:6443": "prod", "staging": "stg"}
    values = with_(REQUIRED, argocd={"tls": {"caConfigMap": "argocd-ca", "caKey": "ca.crt"},
                                     "clusterContexts": contexts},
                   kubeconfig={"secret": "clusters", "key": "config"},
                   extraVolumes=[{"name": "extra", "configMap": {"name": "x"}}],
                   extraVolumeMounts=[{"name": "extra", "mountPath": "/etc/extra"}])  # fmt: skip
    objects = render(values)["objects"]
    pod = one(objects, "Deployment")["spec"]["template"]["spec"]
    container = pod["containers"][0]
    env = env_of(container)
    mounts = {m["name"]: m for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert env["ARGOCD_CA_FILE"]["value"] == mounts["argocd-ca"]["mountPath"] + "/ca.crt"
    assert volumes["argocd-ca"] == {"name": "argocd-ca", "configMap": {"name": "argocd-ca"}}
    assert env["KUBECONFIG"]["value"] == mounts["kubeconfig"]["mountPath"] + "/config"
    assert volumes["kubeconfig"]["secret"] == {"secretName": "clusters"}
    assert mounts["argocd-ca"]["readOnly"] and mounts["kubeconfig"]["readOnly"]
    assert "extra" in volumes and mounts["extra"]["mountPath"] == "/etc/extra"
    parsed = ArgoCDSettings(ARGOCD_CLUSTER_CONTEXTS=env["ARGOCD_CLUSTER_CONTEXTS"]["value"])
    assert parsed.cluster_contexts == contexts  # the bot reads back exactly the map of the values


@pytest.mark.parametrize(("env", "period"), [({}, None), ({"SHUTDOWN_GRACE_SECONDS": 55}, 60)])
def test_the_pod_outlasts_the_bots_own_grace_period(env: dict[str, Any], period: int | None,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    values = with_(REQUIRED, env=env, **({"terminationGracePeriodSeconds": period} if period else {}))
    objects = render(values)["objects"]
    rendered_period = one(objects, "Deployment")["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
    monkeypatch.delenv("SHUTDOWN_GRACE_SECONDS", raising=False)
    for name, entry in env_of(bot_container(objects)).items():
        if name == "SHUTDOWN_GRACE_SECONDS":
            monkeypatch.setenv(name, entry["value"])
    grace = load_settings().runtime.shutdown_grace_s  # the bot's default when env does not set it
    assert rendered_period == (period or 30) and rendered_period - grace >= 5


def test_an_image_digest_pins_the_image() -> None:
    digest = "sha256:" + "ab" * 32
    objects = render(with_(REQUIRED, image={"digest": digest}))["objects"]
    assert bot_container(objects)["image"] == f"ghcr.io/example/argo-why@{digest}"


# --- reachable from Slack, private elsewhere --------------------------------------------------------------------


def test_the_ingress_routes_only_slack_events_over_tls(rendered: dict[str, Any]) -> None:
    ingress = one(rendered["ha"]["objects"], "Ingress")
    [rule] = ingress["spec"]["rules"]
    paths = [(p["path"], p["pathType"], p["backend"]["service"]["port"]["name"]) for p in rule["http"]["paths"]]
    assert paths == [("/slack/events", "Exact", "http")]
    assert ingress["spec"]["tls"] == [{"hosts": ["argo-why.example.com"], "secretName": "argo-why-tls"}]
    assert not [o for o in rendered["default"]["objects"] if o["kind"] == "Ingress"]


def test_view_links_get_their_own_ingress_path_and_the_key_from_the_secret(rendered: dict[str, Any]) -> None:
    ingress = one(rendered["view"]["objects"], "Ingress")
    [rule] = ingress["spec"]["rules"]
    paths = [(p["path"], p["pathType"], p["backend"]["service"]["port"]["name"]) for p in rule["http"]["paths"]]
    assert paths == [("/slack/events", "Exact", "http"), ("/view/", "Prefix", "http")]  # never webhooks or metrics
    env = env_of(bot_container(rendered["view"]["objects"]))
    assert env["VIEW_LINK_KEY"]["valueFrom"]["secretKeyRef"] == {"name": "argo-why", "key": "VIEW_LINK_KEY"}
    assert env["VIEW_BASE_URL"]["value"] == "https://argo-why.example.com" and env["VIEW_LINK_TTL"]["value"] == "24h"
    assert "/view/<token>" in rendered["view"]["notes"] and "until it expires" in rendered["view"]["notes"]
    for case in ("default", "ha"):
        assert "VIEW_LINK_KEY" not in env_of(bot_container(rendered[case]["objects"]))
    all_options = env_of(bot_container(rendered["all-options"]["objects"]))
    assert all_options["VIEW_BASE_URL"]["value"] == "https://argo-why.internal.example.com"


def test_the_webhook_port_admits_the_notifications_controller_and_metrics_have_their_own(
    rendered: dict[str, Any],
) -> None:
    objects = rendered["default"]["objects"]
    policy = one(objects, "NetworkPolicy", "argo-why")
    http_rule, metrics_rule = policy["spec"]["ingress"]
    assert http_rule["ports"] == [{"port": "http", "protocol": "TCP"}]
    assert http_rule["from"] == [{
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "argocd"}},
        "podSelector": {"matchLabels": {"app.kubernetes.io/name": "argocd-notifications-controller"}},
    }]  # fmt: skip
    assert metrics_rule == {"ports": [{"port": "metrics", "protocol": "TCP"}]}
    container = bot_container(objects)
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert int(env_of(container)["METRICS_PORT"]["value"]) == ports["metrics"] != ports["http"]
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    redis_policy = one(objects, "NetworkPolicy", "argo-why-redis")
    bot_labels = one(objects, "Deployment")["spec"]["template"]["metadata"]["labels"]
    assert selects(redis_policy["spec"]["ingress"][0]["from"][0]["podSelector"]["matchLabels"], bot_labels)


def test_with_an_ingress_the_ingress_controller_may_reach_the_http_port(rendered: dict[str, Any]) -> None:
    http_rule = one(rendered["ha"]["objects"], "NetworkPolicy", "argo-why")["spec"]["ingress"][0]
    assert {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "ingress-nginx"}}} in http_rule["from"]


def test_prometheus_scrapes_the_metrics_port_of_the_bot_service(rendered: dict[str, Any]) -> None:
    objects = rendered["ha"]["objects"]
    monitor = one(objects, "ServiceMonitor")
    assert monitor["spec"]["endpoints"][0]["port"] == "metrics" and monitor["metadata"]["labels"]["release"]
    service = one(objects, "Service", "argo-why")
    assert selects(monitor["spec"]["selector"]["matchLabels"], service["metadata"]["labels"])
    assert "metrics" in {p["name"] for p in service["spec"]["ports"]}


def test_a_disruption_budget_only_where_there_is_more_than_one_replica(rendered: dict[str, Any]) -> None:
    assert one(rendered["ha"]["objects"], "PodDisruptionBudget")["spec"]["maxUnavailable"] == 1
    single = render(with_(REQUIRED, replicaCount=1))["objects"]
    assert not [o for o in single if o["kind"] == "PodDisruptionBudget"]


def test_cluster_scoped_names_do_not_collide_between_two_releases_of_the_same_name() -> None:
    def cluster_scoped(namespace: str) -> set[str]:
        objects = render(REQUIRED, namespace=namespace)["objects"]
        binding = one(objects, "ClusterRoleBinding")
        assert binding["roleRef"]["name"] == one(objects, "ClusterRole")["metadata"]["name"]
        assert binding["subjects"][0]["namespace"] == namespace
        return {o["metadata"]["name"] for o in objects if o["kind"].startswith("Cluster")}

    assert cluster_scoped("team-a").isdisjoint(cluster_scoped("team-b"))


def test_scheduling_and_pull_secrets_reach_the_pod() -> None:
    values = with_(REQUIRED, nodeSelector={"pool": "tools"}, tolerations=[{"key": "tools", "operator": "Exists"}],
                   affinity={"podAntiAffinity": {}}, imagePullSecrets=[{"name": "registry"}])  # fmt: skip
    pod = one(render(values)["objects"], "Deployment")["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"pool": "tools"} and pod["tolerations"][0]["key"] == "tools"
    assert pod["affinity"] == {"podAntiAffinity": {}} and pod["imagePullSecrets"] == [{"name": "registry"}]


def test_notes_give_the_verification_steps(rendered: dict[str, Any]) -> None:
    notes = rendered["ha"]["notes"]
    for step in (
        "rollout status deployment/argo-why",
        "/readyz",
        "slack_auth_ok",
        "/webhooks/argocd",
        "template notify argo-why-drift",
        "https://argo-why.example.com/slack/events",
        "/invite @argo-why",
    ):
        assert step in notes, step  # fmt: skip


def test_the_chart_reads_no_file_outside_itself() -> None:
    texts = "".join(p.read_text() for p in (CHART / "templates").iterdir())
    assert ".Files." not in texts and "lookup" not in texts  # renders the same in Argo CD, helm template, dry runs
    assert Path(CHART / "values.schema.json").exists()
