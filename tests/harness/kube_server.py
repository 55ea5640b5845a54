"""A real Kubernetes API server for the tests: ``kube-apiserver`` and its ``etcd``, built from Go modules.

The binaries come from ``scripts/build-go-tools.sh`` (tests/tools/go.mod pins k8s.io/kubernetes and etcd; built
once per machine into a cache folder outside the work tree). :class:`KubeServer` starts etcd and kube-apiserver on
free 127.0.0.1 ports, with a CA and serving certificate generated for the run, a service-account signing key, a
static token (user ``argo-why-admin`` in ``system:masters``), RBAC, and the admission plugins of a real cluster
(NamespaceLifecycle, LimitRanger, ServiceAccount, defaulting, MutatingAdmissionWebhook,
ValidatingAdmissionWebhook, ValidatingAdmissionPolicy, ResourceQuota, ...). It is ready when ``/readyz`` answers ok
and the ``default`` namespace has its ``default`` ServiceAccount.

What a real cluster adds and this one lacks: no kube-controller-manager (no Deployment creates ReplicaSets or Pods,
no HPA acts, no namespace is ever finalized after a delete, no ServiceAccount or its token is created for a new
namespace: :meth:`KubeServer.create_namespace` creates the ``default`` ServiceAccount as the controller would), no
scheduler, no kubelet (Pods stay Pending), no kube-proxy, DNS or CNI. Everything the API server does itself is real:
validation, defaulting, managedFields, server-side apply, dry-run, admission webhooks, CRDs and their schemas.

Fixtures (registered in tests/conftest.py):

* ``kube_server`` (session) -- the running :class:`KubeServer`: ``.kubeconfig`` (a file path), ``.url``,
  ``.token``, ``.ca_file``, ``.api_client()`` (a new ``kubernetes.client.ApiClient``), ``.create_namespace(name)``,
  ``.log_dir``;
* ``kube_api`` (session) -- one ``kubernetes.client.ApiClient`` on it, closed after the session;
* ``kube_namespace`` (function) -- a fresh namespace (``t-<random>``) with its ``default`` ServiceAccount; tests
  that write objects work in it so they never see each other's objects.

If the server cannot be built or started, the tests that use it fail (never skip) with the failing step and its
logs. When a test of the session failed, the logs of both servers are kept and their paths and tails printed.

``python -m tests.harness.kube_server`` (``make cluster``) starts one for a person: it prints ``KUBECONFIG=...`` and
runs until Ctrl-C, then stops both servers and removes its files.
"""

from __future__ import annotations

import contextlib
import ctypes
import datetime
import ipaddress
import secrets
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.harness.go_tools import GoToolsError, build_go_tools
from tests.harness.redis_server import free_port

SERVICE_CIDR = "10.96.0.0/16"
"""Service ClusterIPs come from here; the first address is the ``kubernetes`` Service's, in the certificate."""
ADMIN_USER = "argo-why-admin"
ADMISSION_PLUGINS = ",".join((
    "NamespaceLifecycle", "LimitRanger", "ServiceAccount", "DefaultStorageClass", "PersistentVolumeClaimResize",
    "DefaultTolerationSeconds", "MutatingAdmissionWebhook", "ValidatingAdmissionWebhook", "ResourceQuota",
    "StorageObjectInUseProtection", "Priority", "TaintNodesByCondition", "RuntimeClass", "CertificateApproval",
    "CertificateSigning", "ClusterTrustBundleAttest", "CertificateSubjectRestriction", "DefaultIngressClass",
    "PodSecurity", "PodTopologyLabels", "MutatingAdmissionPolicy", "ValidatingAdmissionPolicy", "NodeRestriction",
))  # fmt: skip
"""kube-apiserver 1.34's default-on admission plugins (pkg/kubeapiserver/options/plugins.go), named so that no
release changes them silently, plus NodeRestriction, which kubeadm clusters enable."""


class KubeServerError(GoToolsError):
    """etcd or kube-apiserver did not start (or the tools could not be built); the message holds the logs' tail."""


def _tail(path: Path, chars: int = 4000) -> str:
    try:
        return path.read_text(errors="replace")[-chars:]
    except OSError:
        return "(no log)"


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM it when the process that started it dies, even by SIGKILL (Linux
    prctl PR_SET_PDEATHSIG), so a killed test run leaves no server behind."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _certificate(subject: str, key: ec.EllipticCurvePrivateKey, issuer: str) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
        .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=7))
    )


def write_certificates(folder: Path) -> None:
    """A CA, a serving certificate for 127.0.0.1/localhost/kubernetes.default.svc signed by it, and the
    service-account signing key pair: ``ca.crt``, ``server.crt``, ``server.key``, ``sa.key``, ``sa.pub``."""
    ca_key, server_key, sa_key = (ec.generate_private_key(ec.SECP256R1()) for _ in range(3))
    ca_name = "argo-why test CA"
    usage = {k: False for k in ("content_commitment", "key_encipherment", "data_encipherment", "key_agreement",
                                "encipher_only", "decipher_only")}  # fmt: skip
    ca = (
        _certificate(ca_name, ca_key, ca_name)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True, **usage), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    service_ip = next(ipaddress.IPv4Network(SERVICE_CIDR).hosts())
    dns = ("localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
           "kubernetes.default.svc.cluster.local")  # fmt: skip
    names = [x509.IPAddress(ipaddress.IPv4Address("127.0.0.1")), x509.IPAddress(service_ip), *map(x509.DNSName, dns)]
    server = (
        _certificate("kube-apiserver", server_key, ca_name)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    (folder / "ca.crt").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    (folder / "server.crt").write_bytes(server.public_bytes(serialization.Encoding.PEM))
    (folder / "server.key").write_bytes(_pem_key(server_key))
    (folder / "sa.key").write_bytes(_pem_key(sa_key))
    public = sa_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    (folder / "sa.pub").write_bytes(public)


class KubeServer:
    """etcd and kube-apiserver on free 127.0.0.1 ports, with their files (certificates, token, data, logs) in
    ``workdir``. ``start()`` returns when the server is ready; ``stop()`` stops both and is safe to call twice."""

    def __init__(self, bin_dir: Path, workdir: Path) -> None:
        self.bin_dir = bin_dir
        self.workdir = workdir
        self.log_dir = workdir / "logs"
        self.token = secrets.token_hex(16)
        self.port = 0
        self._procs: list[subprocess.Popen[bytes]] = []

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def ca_file(self) -> Path:
        return self.workdir / "ca.crt"

    @property
    def kubeconfig(self) -> Path:
        return self.workdir / "kubeconfig"

    def start(self, timeout_s: float = 180.0) -> None:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        write_certificates(self.workdir)
        (self.workdir / "tokens.csv").write_text(f'{self.token},{ADMIN_USER},{ADMIN_USER},"system:masters"\n')
        etcd_port, peer_port, self.port = free_port(), free_port(), free_port()
        etcd_url, peer_url = f"http://127.0.0.1:{etcd_port}", f"http://127.0.0.1:{peer_port}"
        # --unsafe-no-fsync: the data is thrown away after the run, durability buys nothing here.
        self._spawn("etcd", [
            str(self.bin_dir / "etcd"), "--name", "default", "--data-dir", str(self.workdir / "etcd"),
            "--listen-client-urls", etcd_url, "--advertise-client-urls", etcd_url,
            "--listen-peer-urls", peer_url, "--initial-advertise-peer-urls", peer_url,
            "--initial-cluster", f"default={peer_url}", "--unsafe-no-fsync", "--log-level", "warn",
        ])  # fmt: skip
        w = self.workdir
        self._spawn("kube-apiserver", [
            str(self.bin_dir / "kube-apiserver"), f"--etcd-servers={etcd_url}",
            "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", f"--secure-port={self.port}",
            f"--tls-cert-file={w / 'server.crt'}", f"--tls-private-key-file={w / 'server.key'}",
            f"--client-ca-file={w / 'ca.crt'}", f"--token-auth-file={w / 'tokens.csv'}", f"--cert-dir={w / 'certs'}",
            "--authorization-mode=RBAC", f"--enable-admission-plugins={ADMISSION_PLUGINS}",
            f"--service-cluster-ip-range={SERVICE_CIDR}", "--allow-privileged=true",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-account-key-file={w / 'sa.pub'}", f"--service-account-signing-key-file={w / 'sa.key'}",
            "--profiling=false", "--v=1",
        ])  # fmt: skip
        self.kubeconfig.write_text(self._kubeconfig_text())
        try:
            self._wait_ready(timeout_s)
            self.create_namespace("default", exist_ok=True)
        except BaseException:
            self.stop()
            raise

    def _spawn(self, name: str, argv: list[str]) -> None:
        with (self.log_dir / f"{name}.log").open("ab") as log:
            self._procs.append(subprocess.Popen(
                argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                # Own process group: a Ctrl-C meant for `make cluster` reaches us, and we stop the servers in order.
                start_new_session=True, preexec_fn=_die_with_parent,
            ))  # fmt: skip

    def _kubeconfig_text(self) -> str:
        return (
            "apiVersion: v1\nkind: Config\n"
            f"clusters:\n- name: argo-why-test\n  cluster:\n    server: {self.url}\n"
            f"    certificate-authority: {self.ca_file}\n"
            f"users:\n- name: {ADMIN_USER}\n  user:\n    token: {self.token}\n"
            f"contexts:\n- name: argo-why-test\n  context:\n    cluster: argo-why-test\n    user: {ADMIN_USER}\n"
            "current-context: argo-why-test\n"
        )

    def _wait_ready(self, timeout_s: float) -> None:
        ctx = ssl.create_default_context(cafile=str(self.ca_file))
        request = urllib.request.Request(f"{self.url}/readyz", headers={"Authorization": f"Bearer {self.token}"})
        deadline = time.monotonic() + timeout_s
        last = ""
        while time.monotonic() < deadline:
            for proc, name in zip(self._procs, ("etcd", "kube-apiserver"), strict=True):
                if proc.poll() is not None:
                    raise KubeServerError(f"{name} exited with {proc.returncode}:\n{self.logs_tail()}")
            try:
                with urllib.request.urlopen(request, context=ctx, timeout=5) as resp:
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, OSError) as e:  # not listening yet, or 500 while post-start hooks run
                last = str(e)
            time.sleep(0.25)
        raise KubeServerError(f"kube-apiserver not ready within {timeout_s}s ({last}):\n{self.logs_tail()}")

    def logs_tail(self) -> str:
        return "\n".join(f"----- {p} -----\n{_tail(p)}" for p in sorted(self.log_dir.glob("*.log")))

    def api_client(self) -> Any:
        """A new ``kubernetes.client.ApiClient`` for the admin user (the caller closes it)."""
        from kubernetes import client, config

        configuration = client.Configuration()
        config.load_kube_config(config_file=str(self.kubeconfig), client_configuration=configuration)
        return client.ApiClient(configuration)

    def create_namespace(self, name: str, *, exist_ok: bool = False) -> None:
        """The namespace and its ``default`` ServiceAccount (what kube-controller-manager would add), so that Pods
        pass the ServiceAccount admission plugin."""
        from kubernetes import client
        from kubernetes.client.exceptions import ApiException

        meta = client.V1ObjectMeta
        with self.api_client() as api:
            core = client.CoreV1Api(api)
            try:
                core.create_namespace(client.V1Namespace(metadata=meta(name=name)))
            except ApiException as e:
                if not (exist_ok and e.status == 409):
                    raise
            try:
                core.create_namespaced_service_account(name, client.V1ServiceAccount(metadata=meta(name="default")))
            except ApiException as e:
                if e.status != 409:
                    raise

    def stop(self) -> None:
        # The API server first (it needs etcd to shut down cleanly), then etcd.
        for proc in reversed(self._procs):
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        self._procs.clear()


def start_kube_server(workdir: Path) -> KubeServer:
    """Build (or reuse) the binaries and start a server whose files live in ``workdir``."""
    server = KubeServer(build_go_tools(), workdir)
    server.start()
    return server


@pytest.fixture(scope="session")
def kube_server(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[KubeServer]:
    try:
        server = start_kube_server(tmp_path_factory.mktemp("kube"))
    except GoToolsError as e:
        pytest.fail(f"the real API server could not be started: {e}", pytrace=False)
    try:
        yield server
    finally:
        server.stop()
        if request.session.testsfailed:
            sys.stderr.write(f"\nkube-apiserver and etcd logs kept in {server.log_dir}\n{server.logs_tail()}\n")


@pytest.fixture(scope="session")
def kube_api(kube_server: KubeServer) -> Iterator[Any]:
    api = kube_server.api_client()
    try:
        yield api
    finally:
        api.close()


@pytest.fixture
def kube_namespace(kube_server: KubeServer) -> str:
    name = f"t-{secrets.token_hex(4)}"
    kube_server.create_namespace(name)
    return name


def main() -> int:
    """``make cluster``: a server for a person, until Ctrl-C (or SIGTERM); prints the KUBECONFIG line."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    # SIGINT explicitly too: a shell starts a background job with SIGINT ignored, and Python then keeps it ignored.
    signal.signal(signal.SIGTERM, interrupt)
    signal.signal(signal.SIGINT, interrupt)
    workdir = Path(tempfile.mkdtemp(prefix="argo-why-cluster-"))
    server: KubeServer | None = None
    try:
        print("building or reusing the Go tools (scripts/build-go-tools.sh)...", file=sys.stderr, flush=True)
        server = KubeServer(build_go_tools(), workdir)
        server.start()
        print(f"kube-apiserver {server.url} ready (logs in {server.log_dir}); Ctrl-C stops it.", flush=True)
        print(f"KUBECONFIG={server.kubeconfig}", flush=True)
        while True:
            time.sleep(3600)
    except GoToolsError as e:
        print(f"make cluster: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        if server is not None:
            server.stop()
        with contextlib.suppress(OSError):
            shutil.rmtree(workdir)
        print("stopped: nothing left running.", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
