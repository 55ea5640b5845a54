"""A real Argo CD for the tests: its API server, repo server, application controller and notifications controller,
on the suite's real kube-apiserver (``tests.harness.kube_server``), all on 127.0.0.1.

The binary is Argo CD v3.2.12 built by ``scripts/build-go-tools.sh argocd`` (tests/tools/argocd: its own Go module,
once per machine, cached; the folder also holds the release's CRDs). :class:`ArgoCDStack` brings up, in order:

1. Argo CD's CRDs (server-side apply: the ApplicationSet CRD is too large for a last-applied annotation), the
   namespaces ``argocd`` and :data:`APPS_NAMESPACE` (apps in any namespace), and Argo CD's configuration objects as
   a stock install has them (argocd-cm, argocd-secret with a random admin password, argocd-rbac-cm, an empty
   argocd-notifications-cm and argocd-notifications-secret);
2. the bot's account and RBAC by running the commands of deploy/README.md ("Argo CD not managed by itself") as they
   are written there, and the notifications configuration by running deploy/argocd-notifications/install.sh
   (``WEBHOOK_TOKEN``, ``ARGO_WHY_URL``): what a user does, so the tests prove the docs are enough;
3. ``git daemon`` serving :attr:`ArgoCDStack.git` (``<workdir>/git``, see :mod:`tests.harness.git_daemon`), a
   Redis, the repo server, the application controller, the API server (``--insecure``: plain HTTP, as the bot's
   tests reach it) and the notifications controller, each with ``--application-namespaces`` :data:`APPS_NAMESPACE`;
   every listener binds 127.0.0.1 (the two metrics listeners that bind 0.0.0.0 upstream are patched in the build);
4. an admin session token (``POST /api/v1/session``) and the bot's API token, made with the README's own
   ``argocd account generate-token --account argo-why`` after ``argocd login``.

Git: the e2e tests publish the fake GitHub's bare repository in :attr:`ArgoCDStack.git` (``git.serve``) and point
Applications at its ``git://127.0.0.1:PORT/owner/name.git`` URL, which Argo CD clones and the bot maps to the fake
GitHub's repository (a ``file://`` URL the bot refuses, rightly): a merged pull request is what Argo CD reads next.

Every process gets SIGTERM when the test process dies (PR_SET_PDEATHSIG); ``stop()`` stops them in reverse order.
Logs: ``<workdir>/logs/<component>.log``; ``logs_tail()`` gives the end of each, which the fixture prints when a
test failed and ``start()`` puts in its error. ``python -m tests.harness.argocd_stack`` (``make argocd``) starts one
for a person.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.harness.git_daemon import NAME as GIT_DAEMON
from tests.harness.git_daemon import GitRepos
from tests.harness.go_tools import ROOT, GoToolsError, build_go_tools
from tests.harness.kube_server import KubeServer, _die_with_parent, _tail, start_kube_server
from tests.harness.redis_server import free_port

APPS_NAMESPACE = "apps"
"""The namespace outside ``argocd`` where Applications may live (argocd-server's ``--application-namespaces``)."""
IN_CLUSTER = "https://kubernetes.default.svc"
KUBE_CONTEXT = "argo-why-test"
"""The kube_server kubeconfig's context: what the bot maps :data:`IN_CLUSTER` to (``ARGOCD_CLUSTER_CONTEXTS``)."""
BINARY_NAMES = {
    "repo-server": "argocd-repo-server",
    "app-controller": "argocd-application-controller",
    "api-server": "argocd-server",
    "notifications": "argocd-notifications",
}
"""Component (and log file) name -> the ARGOCD_BINARY_NAME that makes the multi-call binary that component."""


class ArgoCDStackError(GoToolsError):
    """Argo CD could not be built, configured or started; the message says which step, with the logs' tails."""


def build_argocd() -> Path:
    """The folder holding ``argocd`` and ``crds/``, built once per machine (``scripts/build-go-tools.sh argocd``)."""
    proc = subprocess.run([str(ROOT / "scripts" / "build-go-tools.sh"), "argocd"], capture_output=True, text=True,
                          check=False)  # fmt: skip
    if proc.returncode != 0:
        raise ArgoCDStackError(f"scripts/build-go-tools.sh argocd failed (exit {proc.returncode}):\n"
                               f"{proc.stderr[-6000:]}")  # fmt: skip
    return Path(proc.stdout.strip().splitlines()[-1])


def kubectl_binary() -> str:
    """``$KUBECTL``, else ``kubectl`` beside the Go tools (when tests/tools builds one), else on PATH: the docs'
    commands use kubectl."""
    if os.environ.get("KUBECTL"):
        return os.environ["KUBECTL"]
    built = build_go_tools() / "kubectl"
    if built.exists():
        return str(built)
    found = shutil.which("kubectl")
    if found is None:
        raise ArgoCDStackError("kubectl is needed (deploy/README.md's commands and install.sh use it): put it on "
                               "PATH or set KUBECTL")  # fmt: skip
    return found


def readme_block(readme: Path, after: str) -> str:
    """The first ```sh block of ``readme`` after the line that contains ``after``: the commands as documented."""
    text = readme.read_text()
    start = text.find(after)
    match = re.search(r"```sh\n(.*?)```", text[start:], re.S) if start >= 0 else None
    if match is None:
        raise ArgoCDStackError(f"{readme.name}: no ```sh block after {after!r} (the docs changed: update the stack)")
    return match.group(1)


@dataclass
class ArgoCDStack:
    """A running Argo CD (see the module docstring). ``url`` is the API server (plain HTTP), ``admin_token`` an
    admin session, ``bot_token`` the token of the account deploy/README.md creates, ``webhook_token`` what the
    notifications webhook sends, ``bot_url`` where it sends it."""

    kube: KubeServer
    bin_dir: Path
    workdir: Path
    bot_url: str
    webhook_token: str = field(default_factory=lambda: secrets.token_hex(16))
    admin_password: str = field(default_factory=lambda: f"admin-{secrets.token_hex(8)}")
    timings: dict[str, float] = field(default_factory=dict)
    admin_token: str = ""
    bot_token: str = ""
    api_port: int = 0
    git: GitRepos = field(init=False)
    """The repositories ``git daemon`` serves to Argo CD (and the bot) over ``git://`` on loopback."""
    _procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.git = GitRepos(self.workdir / "git")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.api_port}"

    @property
    def log_dir(self) -> Path:
        return self.workdir / "logs"

    @property
    def argocd(self) -> Path:
        return self.bin_dir / "argocd"

    # -- bring-up ------------------------------------------------------------------------------------------------

    def start(self, timeout_s: float = 180.0) -> None:
        t0 = time.monotonic()
        for d in ("logs", "tmp", "home", "static", "tls", "ssh", "gpg/keys", "gpg/source", "plugins", "bin"):
            (self.workdir / d).mkdir(parents=True, exist_ok=True)
        cli = self.workdir / "bin" / "argocd"  # the multi-call binary is the CLI when called "argocd"
        if not cli.exists():
            cli.symlink_to(self.argocd)
        try:
            self._step("configure", self._configure)
            self.timings["configure_s"] = time.monotonic() - t0
            self._step("start the components", lambda: self._spawn_all(timeout_s))
            self.timings["components_s"] = time.monotonic() - t0 - self.timings["configure_s"]
            self._step("log in as admin", self._login)
            self._step("make the bot's token (deploy/README.md)", self._bot_token)
        except BaseException:
            self.stop()
            raise
        self.timings["start_s"] = time.monotonic() - t0

    def _step(self, name: str, run: Callable[[], None]) -> None:
        try:
            run()
        except ArgoCDStackError as e:
            raise ArgoCDStackError(f"Argo CD: {name}: {e}\n{self.logs_tail()}") from e
        except (OSError, subprocess.SubprocessError, ValueError, KeyError) as e:
            raise ArgoCDStackError(f"Argo CD: {name}: {type(e).__name__}: {e}\n{self.logs_tail()}") from e

    def env(self) -> dict[str, str]:
        """The environment of the docs' commands and of the components: kubectl and ``argocd`` on PATH, this
        server's KUBECONFIG, a HOME of its own (the CLI's login lives there)."""
        path = os.pathsep.join([str(self.workdir / "bin"), str(Path(kubectl_binary()).parent), os.environ["PATH"]])
        return {**os.environ, "PATH": path, "KUBECONFIG": str(self.kube.kubeconfig),
                "HOME": str(self.workdir / "home"), "TMPDIR": str(self.workdir / "tmp")}  # fmt: skip

    def run(self, argv: list[str], *, stdin: str | None = None, extra_env: dict[str, str] | None = None) -> str:
        done = subprocess.run(argv, input=stdin, capture_output=True, text=True, cwd=self.workdir / "tmp",
                              env={**self.env(), **(extra_env or {})}, timeout=120, check=False)  # fmt: skip
        if done.returncode != 0:
            raise ArgoCDStackError(f"{' '.join(argv)[:200]}: exit {done.returncode}: {done.stderr[-3000:]}")
        return done.stdout

    def kubectl(self, *args: str, stdin: str | None = None) -> str:
        return self.run([kubectl_binary(), *args], stdin=stdin)

    def _configure(self) -> None:
        crds = self.bin_dir / "crds"
        self.kubectl("apply", "--server-side", "--field-manager=argocd-install",
                     *[f"-f={crds / f}" for f in ("application-crd.yaml", "appproject-crd.yaml",
                                                  "applicationset-crd.yaml")])  # fmt: skip
        self.kube.create_namespace("argocd", exist_ok=True)
        self.kube.create_namespace(APPS_NAMESPACE, exist_ok=True)
        bcrypt = self.run([str(self.argocd), "account", "bcrypt", "--password", self.admin_password],
                          extra_env={"ARGOCD_BINARY_NAME": "argocd"}).strip()  # fmt: skip
        self.kubectl("apply", "-f", "-", stdin=json.dumps(_config_objects(bcrypt)))
        deadline = time.monotonic() + 60
        while not all(
            self.kubectl("get", "crd", name, "-o", "jsonpath={.status.conditions[?(@.type=='Established')].status}")
            == "True"
            for name in ("applications.argoproj.io", "appprojects.argoproj.io", "applicationsets.argoproj.io")
        ):
            if time.monotonic() > deadline:
                raise ArgoCDStackError("Argo CD's CRDs not Established within 60 s")
            time.sleep(0.2)
        # The bot's account and RBAC, as deploy/README.md says for an Argo CD not managed by itself.
        self.run(["bash", "-euo", "pipefail", "-c",
                  readme_block(ROOT / "deploy" / "README.md", "*Argo CD not managed by itself*")])  # fmt: skip
        # The notifications configuration, as deploy/argocd-notifications/install.sh installs it.
        self.run([str(ROOT / "deploy" / "argocd-notifications" / "install.sh")],
                 extra_env={"WEBHOOK_TOKEN": self.webhook_token, "ARGO_WHY_URL": self.bot_url})  # fmt: skip

    def _spawn_all(self, timeout_s: float) -> None:
        ports = {name: free_port() for name in ("redis", "repo", "repo_m", "ctrl_m", "api", "api_m", "notif_m")}
        self.api_port = ports["api"]
        redis_addr, repo_addr = f"127.0.0.1:{ports['redis']}", f"127.0.0.1:{ports['repo']}"
        kubeconfig = str(self.kube.kubeconfig)
        common = ["--loglevel", "info", "--logformat", "text"]
        apps_ns = ["--application-namespaces", APPS_NAMESPACE]
        self._spawn(GIT_DAEMON, self.git.argv())
        self._spawn("redis", ["redis-server", "--bind", "127.0.0.1", "--port", str(ports["redis"]), "--save", "",
                              "--appendonly", "no"])  # fmt: skip
        self._spawn("repo-server", [*common, "--address", "127.0.0.1", "--port", str(ports["repo"]),
                                    "--metrics-address", "127.0.0.1", "--metrics-port", str(ports["repo_m"]),
                                    "--redis", redis_addr, "--disable-tls"])  # fmt: skip
        self._spawn("app-controller", [*common, "--kubeconfig", kubeconfig, "--namespace", "argocd", *apps_ns,
                                       "--redis", redis_addr, "--repo-server", repo_addr, "--repo-server-plaintext",
                                       "--metrics-port", str(ports["ctrl_m"])])  # fmt: skip
        self._spawn("api-server", [*common, "--kubeconfig", kubeconfig, "--namespace", "argocd", *apps_ns,
                                   "--redis", redis_addr, "--repo-server", repo_addr, "--repo-server-plaintext",
                                   "--insecure", "--address", "127.0.0.1", "--port", str(ports["api"]),
                                   "--metrics-address", "127.0.0.1", "--metrics-port", str(ports["api_m"]),
                                   "--staticassets", str(self.workdir / "static"),
                                   "--dex-server", "http://127.0.0.1:1"])  # fmt: skip
        self._spawn("notifications", [*common, "--kubeconfig", kubeconfig, "--namespace", "argocd", *apps_ns,
                                      "--metrics-port", str(ports["notif_m"]), "--argocd-repo-server", repo_addr,
                                      "--argocd-repo-server-plaintext"])  # fmt: skip
        checks = {
            "repo-server": f"http://127.0.0.1:{ports['repo_m']}/healthz?full=true",
            "app-controller": f"http://127.0.0.1:{ports['ctrl_m']}/healthz",
            "api-server": f"http://127.0.0.1:{ports['api']}/healthz?full=true",
            "notifications": f"http://127.0.0.1:{ports['notif_m']}/metrics",
        }
        deadline = time.monotonic() + timeout_s
        while checks or not self.git.listening():
            for name, proc in self._procs.items():
                if proc.poll() is not None:
                    raise ArgoCDStackError(f"{name} exited with {proc.returncode}")
            for name, url in list(checks.items()):
                with contextlib.suppress(OSError, urllib.error.URLError), urllib.request.urlopen(url, timeout=2) as r:
                    if r.status == 200:
                        del checks[name]
            if time.monotonic() > deadline:
                waited = [*checks, *([] if self.git.listening() else [GIT_DAEMON])]
                raise ArgoCDStackError(f"not ready within {timeout_s:.0f} s: {', '.join(waited)}")
            time.sleep(0.1)

    def _spawn(self, name: str, args: list[str]) -> None:
        if name == "redis":
            argv, env = args, self.env()
        elif name == GIT_DAEMON:
            argv, env = args, {**self.env(), **self.git.env()}
        else:
            w = self.workdir
            argv = [str(self.argocd), *args]
            env = {**self.env(), "ARGOCD_BINARY_NAME": BINARY_NAMES[name],
                   # the in-cluster destination (https://kubernetes.default.svc) is $KUBECONFIG's server
                   "ARGOCD_FAKE_IN_CLUSTER": "true", "ARGOCD_TLS_DATA_PATH": str(w / "tls"),
                   "ARGOCD_SSH_DATA_PATH": str(w / "ssh"), "ARGOCD_GPG_ENABLED": "false",
                   "ARGOCD_GNUPGHOME": str(w / "gpg/keys"), "ARGOCD_GPG_DATA_PATH": str(w / "gpg/source"),
                   "ARGOCD_PLUGINSOCKFILEPATH": str(w / "plugins")}  # fmt: skip
        with (self.log_dir / f"{name}.log").open("ab") as log:
            self._procs[name] = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                                 env=env, cwd=self.workdir / "tmp", start_new_session=True,
                                                 preexec_fn=_die_with_parent)  # fmt: skip

    def _login(self) -> None:
        body = self.api("POST", "/api/v1/session", {"username": "admin", "password": self.admin_password},
                        token=None)  # fmt: skip
        self.admin_token = str(body["token"])
        self.run(["argocd", "login", f"127.0.0.1:{self.api_port}", "--plaintext", "--username", "admin",
                  "--password", self.admin_password])  # fmt: skip

    def _bot_token(self) -> None:
        deadline = time.monotonic() + 30
        while "argo-why" not in self.run(["argocd", "account", "list"]):  # "once Argo CD has the account"
            if time.monotonic() > deadline:
                raise ArgoCDStackError("`argocd account list` does not show argo-why within 30 s")
            time.sleep(0.2)
        script = readme_block(ROOT / "deploy" / "README.md", "Then, once Argo CD has the account")
        self.bot_token = self.run(["bash", "-euo", "pipefail", "-c", f'{script}\nprintf %s "$ARGOCD_TOKEN"']).strip()
        if not self.bot_token:
            raise ArgoCDStackError("the README's generate-token command printed no token")

    # -- use -----------------------------------------------------------------------------------------------------

    def api(self, method: str, path: str, body: Any = None, *, token: str | bool | None = True) -> Any:
        """One request to the API server as admin (``token=True``), with ``token``, or without one (None); the
        JSON answer. An HTTP error raises ``urllib.error.HTTPError`` (its body says why)."""
        bearer = self.admin_token if token is True else token
        headers = {"Content-Type": "application/json"} | ({"Authorization": f"Bearer {bearer}"} if bearer else {})
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        with urllib.request.urlopen(request, timeout=30) as resp:
            raw = resp.read()
        return json.loads(raw) if raw else None

    def memory_mib(self) -> dict[str, int]:
        """Resident memory of each component, in MiB (VmRSS)."""
        out: dict[str, int] = {}
        for name, proc in self._procs.items():
            with contextlib.suppress(OSError):
                for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        out[name] = int(line.split()[1]) // 1024
        return out

    def logs_tail(self, chars: int = 3000) -> str:
        return "\n".join(f"----- {p} -----\n{_tail(p, chars)}" for p in sorted(self.log_dir.glob("*.log")))

    def stop(self) -> None:
        for name in reversed(list(self._procs)):
            proc = self._procs[name]
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        self._procs.clear()


def _config_objects(admin_bcrypt: str) -> dict[str, Any]:
    """Argo CD's configuration objects as a stock install creates them (labels its informers select on)."""

    def meta(name: str) -> dict[str, Any]:
        return {"name": name, "namespace": "argocd",
                "labels": {"app.kubernetes.io/part-of": "argocd", "app.kubernetes.io/name": name}}  # fmt: skip

    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return {"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta("argocd-cm"),
         "data": {"admin.enabled": "true", "url": "http://127.0.0.1"}},
        {"apiVersion": "v1", "kind": "Secret", "metadata": meta("argocd-secret"), "type": "Opaque",
         "stringData": {"admin.password": admin_bcrypt, "admin.passwordMtime": now,
                        "server.secretkey": secrets.token_urlsafe(32)}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta("argocd-rbac-cm"), "data": {"policy.default": ""}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta("argocd-notifications-cm")},
        {"apiVersion": "v1", "kind": "Secret", "metadata": meta("argocd-notifications-secret"), "type": "Opaque"},
    ]}  # fmt: skip


def start_argocd_stack(kube: KubeServer, workdir: Path, *, bot_url: str) -> ArgoCDStack:
    """Build (or reuse) Argo CD and start it on ``kube``, its notifications webhook pointing at ``bot_url``."""
    stack = ArgoCDStack(kube, build_argocd(), workdir, bot_url=bot_url)
    stack.start()
    return stack


def main() -> int:
    """``make argocd``: kube-apiserver, etcd and Argo CD for a person, until Ctrl-C (or SIGTERM); prints
    ``ARGOCD_URL=``, ``ARGOCD_ADMIN_TOKEN=``, ``ARGOCD_TOKEN=`` (the bot's account), ``WEBHOOK_TOKEN=`` and
    ``KUBECONFIG=``, and ``GIT_REPOS=``, the folder whose bare repositories ``git daemon`` serves at ``GIT_URL=``
    (``git init --bare $GIT_REPOS/acme/gitops.git`` is ``$GIT_URL/acme/gitops.git`` to Argo CD). The notifications
    webhook goes to ``$ARGO_WHY_URL`` (default http://127.0.0.1:8080, where ``argo-why serve`` listens by default)."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)
    signal.signal(signal.SIGINT, interrupt)
    workdir = Path(tempfile.mkdtemp(prefix="argo-why-argocd-"))
    kube: KubeServer | None = None
    stack: ArgoCDStack | None = None
    try:
        print("building or reusing the Go tools and Argo CD (scripts/build-go-tools.sh)...", file=sys.stderr,
              flush=True)  # fmt: skip
        kube = start_kube_server(workdir / "kube")
        stack = ArgoCDStack(kube, build_argocd(), workdir / "argocd",
                            bot_url=os.environ.get("ARGO_WHY_URL", "http://127.0.0.1:8080"))  # fmt: skip
        stack.start()
        print(f"Argo CD {stack.url} ready in {stack.timings['start_s']:.1f} s (logs in {stack.log_dir}); "
              f"memory MiB {stack.memory_mib()}; Ctrl-C stops everything.", file=sys.stderr, flush=True)  # fmt: skip
        print(f"ARGOCD_URL={stack.url}\nARGOCD_ADMIN_TOKEN={stack.admin_token}\nARGOCD_TOKEN={stack.bot_token}\n"
              f"WEBHOOK_TOKEN={stack.webhook_token}\nKUBECONFIG={kube.kubeconfig}", flush=True)  # fmt: skip
        print(f"ARGOCD_CLUSTER_CONTEXTS={IN_CLUSTER}={KUBE_CONTEXT}", flush=True)
        print(f"GIT_REPOS={stack.git.root}\nGIT_URL={stack.git.base_url}", flush=True)
        while True:
            time.sleep(3600)
    except GoToolsError as e:
        print(f"make argocd: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        if stack is not None:
            stack.stop()
        if kube is not None:
            kube.stop()
        with contextlib.suppress(OSError):
            shutil.rmtree(workdir)
        print("stopped: nothing left running.", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
