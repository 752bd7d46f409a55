"""A real Kubernetes control plane for the end-to-end suite, as controller-runtime's envtest builds one:
etcd and kube-apiserver on loopback (random ports, temporary directories), the serving and client
PKI and the service-account signing keys generated here with ``cryptography``, an admin kubeconfig
(client certificate in ``system:masters``), and the real ``kubectl`` to drive it.

The binaries come from ``scripts/kube-testenv``, which builds them from their Go modules once per
version into a cache outside the repository. ``scripts/test`` runs it before pytest; when it could
not (no Go, no module proxy) it leaves the reason in ``DYNAMO_WEBHOOK_TESTENV_ERROR`` and every
end-to-end test fails with it rather than being skipped.

Processes are started in their own process group with a parent-death signal, and always stopped
(group kill) at teardown, so no etcd or kube-apiserver outlives the test session.
"""

from __future__ import annotations

import base64
import contextlib
import ctypes
import datetime as dt
import ipaddress
import json
import os
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

ROOT = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = ROOT / "scripts" / "kube-testenv"
ENV_BIN = "DYNAMO_WEBHOOK_TESTENV_BIN"
ENV_ERROR = "DYNAMO_WEBHOOK_TESTENV_ERROR"
BINARIES = ("etcd", "kube-apiserver", "kubectl", "helm")


class Fatal(RuntimeError):
    """A condition that cannot come true any more (a process died): ends a wait at once."""


class TestenvUnavailable(RuntimeError):
    """The real binaries are missing; the message says what to do."""


def binaries() -> Path:
    """The directory with etcd, kube-apiserver, kubectl and helm: from ``$DYNAMO_WEBHOOK_TESTENV_BIN``, else the
    cache ``scripts/kube-testenv --check`` reports. Never builds (a cold build takes many minutes and
    belongs to ``scripts/test``/``scripts/kube-testenv``, not to a test's time budget)."""
    error = os.environ.get(ENV_ERROR)
    if error:
        raise TestenvUnavailable(f"the real Kubernetes binaries could not be built: {error}")
    given = os.environ.get(ENV_BIN)
    if given:
        path = Path(given)
    else:
        proc = subprocess.run(
            [str(BUILD_SCRIPT), "--check"], capture_output=True, text=True, timeout=30, check=False
        )
        if proc.returncode != 0:
            raise TestenvUnavailable(
                "kube-apiserver, etcd, kubectl and helm are not built on this machine: run scripts/kube-testenv "
                "(needs Go and the Go module proxy), or run the suite with scripts/test, which builds them"
            )
        path = Path(proc.stdout.strip())
    missing = [name for name in BINARIES if not os.access(path / name, os.X_OK)]
    if missing:
        raise TestenvUnavailable(
            f"{', '.join(missing)} missing from {path}: run scripts/kube-testenv --rebuild"
        )
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --- PKI -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pem:
    cert: bytes
    key: bytes


def _pem_key(key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _ca(common_name: str) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(key, hashes.SHA256())
    )
    return cert, key


def _leaf(
    ca: tuple[x509.Certificate, ec.EllipticCurvePrivateKey],
    common_name: str,
    *,
    organizations: Sequence[str] = (),
    server: bool = False,
) -> Pem:
    key = ec.generate_private_key(ec.SECP256R1())
    attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
    attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
    now = dt.datetime.now(dt.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name(attrs))
        .issuer_name(ca[0].subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH]
            ),
            critical=False,
        )
    )
    if server:
        builder = builder.add_extension(
            x509.SubjectAlternativeName(
                [
                    x509.DNSName("localhost"),
                    x509.DNSName("kubernetes.default.svc"),
                    x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                ]
            ),
            critical=False,
        )
    cert = builder.sign(ca[1], hashes.SHA256())
    return Pem(cert.public_bytes(serialization.Encoding.PEM), _pem_key(key))


@dataclass(frozen=True)
class Pki:
    serving_ca: bytes
    serving: Pem
    client_ca: bytes
    admin: Pem
    sa_key: bytes
    sa_pub: bytes

    @classmethod
    def generate(cls) -> Pki:
        serving_ca = _ca("dynamo-webhook-e2e-serving-ca")
        client_ca = _ca("dynamo-webhook-e2e-client-ca")
        sa = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        return cls(
            serving_ca=serving_ca[0].public_bytes(serialization.Encoding.PEM),
            serving=_leaf(serving_ca, "kube-apiserver", server=True),
            client_ca=client_ca[0].public_bytes(serialization.Encoding.PEM),
            admin=_leaf(client_ca, "e2e-admin", organizations=("system:masters",)),
            sa_key=_pem_key(sa),
            sa_pub=sa.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            ),
        )


# --- processes ---------------------------------------------------------------------------------------

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:  # runs in the child between fork and exec
    os.setsid()
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


@dataclass
class Proc:
    name: str
    argv: list[str]
    log_path: Path
    popen: subprocess.Popen[bytes] | None = None

    def start(self, env: dict[str, str] | None = None) -> None:
        log = self.log_path.open("ab")
        self.popen = subprocess.Popen(
            self.argv,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            preexec_fn=_die_with_parent,
            env=env,
        )
        log.close()

    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self, grace: float = 10.0) -> None:
        """SIGTERM the process group, then SIGKILL what is left after ``grace`` seconds."""
        if self.popen is None:
            return
        pgid = self.popen.pid
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=grace)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=5)


def wait_until(condition: Any, timeout: float, what: str, interval: float = 0.1) -> Any:
    """Poll ``condition()`` until it returns something truthy; fail naming ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            value = condition()
            if value:
                return value
        except Fatal:
            raise
        except Exception as err:
            last = err
        time.sleep(interval)
    raise TimeoutError(
        f"timed out after {timeout:g} s waiting for {what}" + (f" (last error: {last})" if last else "")
    )


# --- the control plane -------------------------------------------------------------------------------


@dataclass
class ControlPlane:
    """etcd + kube-apiserver on loopback. ``start()`` returns once ``/readyz`` answers ok."""

    bin_dir: Path
    workdir: Path
    pki: Pki = field(default_factory=Pki.generate)
    etcd_port: int = field(default_factory=free_port)
    peer_port: int = field(default_factory=free_port)
    port: int = field(default_factory=free_port)
    procs: list[Proc] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def kubeconfig(self) -> Path:
        return self.workdir / "admin.kubeconfig"

    def _write(self, name: str, data: bytes, mode: int = 0o600) -> Path:
        path = self.workdir / "pki" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        path.chmod(mode)
        return path

    def start(self, timeout: float = 120.0) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        etcd = Proc(
            "etcd",
            [
                str(self.bin_dir / "etcd"),
                "--name",
                "e2e",
                "--data-dir",
                str(self.workdir / "etcd"),
                "--listen-client-urls",
                f"http://127.0.0.1:{self.etcd_port}",
                "--advertise-client-urls",
                f"http://127.0.0.1:{self.etcd_port}",
                "--listen-peer-urls",
                f"http://127.0.0.1:{self.peer_port}",
                "--initial-advertise-peer-urls",
                f"http://127.0.0.1:{self.peer_port}",
                "--initial-cluster",
                f"e2e=http://127.0.0.1:{self.peer_port}",
                "--unsafe-no-fsync",
                "--log-level",
                "warn",
            ],
            self.workdir / "etcd.log",
        )
        self.procs.append(etcd)
        etcd.start()
        wait_until(lambda: self._etcd_healthy(etcd), 30, "etcd health")

        p = self.pki
        apiserver = Proc(
            "kube-apiserver",
            [
                str(self.bin_dir / "kube-apiserver"),
                "--etcd-servers",
                f"http://127.0.0.1:{self.etcd_port}",
                "--bind-address",
                "127.0.0.1",
                "--advertise-address",
                "127.0.0.1",
                "--secure-port",
                str(self.port),
                "--tls-cert-file",
                str(self._write("serving.crt", p.serving.cert)),
                "--tls-private-key-file",
                str(self._write("serving.key", p.serving.key)),
                "--client-ca-file",
                str(self._write("client-ca.crt", p.client_ca)),
                "--service-account-issuer",
                "https://kubernetes.default.svc.cluster.local",
                "--service-account-key-file",
                str(self._write("sa.pub", p.sa_pub)),
                "--service-account-signing-key-file",
                str(self._write("sa.key", p.sa_key)),
                "--service-cluster-ip-range",
                "10.0.0.0/24",
                "--authorization-mode",
                "RBAC",
                "--allow-privileged=true",
                "--disable-admission-plugins",
                "ServiceAccount",
                "--cert-dir",
                str(self.workdir / "apiserver-certs"),
                "--v",
                "1",
            ],
            self.workdir / "kube-apiserver.log",
        )
        self.procs.append(apiserver)
        apiserver.start()
        self._write_kubeconfig()
        wait_until(lambda: self._ready(apiserver), timeout, "kube-apiserver /readyz", interval=0.25)

    def restart_apiserver(self, timeout: float = 120.0) -> None:
        """Stop kube-apiserver and start it again on the same etcd, flags and port: its caches
        (the watch cache among them) and its metrics start empty. Returns once ``/readyz`` is ok."""
        apiserver = next(proc for proc in self.procs if proc.name == "kube-apiserver")
        apiserver.stop()
        apiserver.start()
        wait_until(
            lambda: self._ready(apiserver), timeout, "kube-apiserver /readyz after a restart", interval=0.25
        )

    def _etcd_healthy(self, proc: Proc) -> bool:
        if not proc.alive():
            raise Fatal(f"etcd exited:\n{proc.log_tail()}")
        with urllib.request.urlopen(f"http://127.0.0.1:{self.etcd_port}/health", timeout=2) as resp:
            return bool(json.loads(resp.read()).get("health") == "true")

    def _ready(self, proc: Proc) -> bool:
        if not proc.alive():
            raise Fatal(f"kube-apiserver exited:\n{proc.log_tail()}")
        try:
            status, body = self.raw("GET", "/readyz")
        except (urllib.error.URLError, OSError):
            return False
        return status == 200 and body.strip() == b"ok"

    def ssl_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cadata=self.pki.serving_ca.decode())
        ctx.load_cert_chain(self.workdir / "pki" / "admin.crt", self.workdir / "pki" / "admin.key")
        return ctx

    def raw(
        self,
        method: str,
        path: str,
        body: Any = None,
        content_type: str = "application/json",
        timeout: float = 30,
    ) -> tuple[int, bytes]:
        """One admin request straight to the API server (status, body); HTTP errors are returned, not raised."""
        data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        req = urllib.request.Request(
            self.url + path, data=data, method=method, headers={"Content-Type": content_type}
        )
        try:
            with urllib.request.urlopen(req, context=self.ssl_context(), timeout=timeout) as resp:
                return resp.status, resp.read()
        except urllib.error.HTTPError as err:
            return err.code, err.read()

    def _write_kubeconfig(self) -> None:
        self._write("admin.crt", self.pki.admin.cert)
        self._write("admin.key", self.pki.admin.key)
        self.kubeconfig.write_text(
            kubeconfig_yaml(
                self.url,
                self.pki.serving_ca,
                user={
                    "client-certificate-data": base64.b64encode(self.pki.admin.cert).decode(),
                    "client-key-data": base64.b64encode(self.pki.admin.key).decode(),
                },
            )
        )
        self.kubeconfig.chmod(0o600)

    def stop(self) -> None:
        for proc in reversed(self.procs):
            proc.stop()
        self.procs.clear()

    def logs(self) -> str:
        return "\n".join(f"--- {p.name} ({p.log_path})\n{p.log_tail()}" for p in self.procs)


def kubeconfig_yaml(server: str, ca_pem: bytes, user: dict[str, str], name: str = "e2e") -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": name,
                    "cluster": {
                        "server": server,
                        "certificate-authority-data": base64.b64encode(ca_pem).decode(),
                    },
                }
            ],
            "users": [{"name": name, "user": user}],
            "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
            "current-context": name,
        }
    )


@dataclass(frozen=True)
class Result:
    returncode: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


@dataclass(frozen=True)
class Kubectl:
    """The real kubectl against one kubeconfig."""

    exe: Path
    kubeconfig: Path

    def __call__(
        self, *args: str, input: str | bytes | None = None, check: bool = True, timeout: float = 120
    ) -> Result:
        data = input.encode() if isinstance(input, str) else input
        proc = subprocess.run(
            [str(self.exe), "--kubeconfig", str(self.kubeconfig), *args],
            input=data,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
        result = Result(
            proc.returncode, proc.stdout.decode(errors="replace"), proc.stderr.decode(errors="replace")
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                f"kubectl {' '.join(args)} failed ({proc.returncode}):\n{result.stderr}{result.stdout}"
            )
        return result

    def apply(self, obj: dict[str, Any] | list[dict[str, Any]], *extra: str, check: bool = True) -> Result:
        docs = obj if isinstance(obj, list) else [obj]
        return self("apply", "-f", "-", *extra, input=yaml.safe_dump_all(docs), check=check)

    def get(self, resource: str, name: str, namespace: str | None = None) -> dict[str, Any]:
        ns = ("-n", namespace) if namespace else ()
        out: dict[str, Any] = self("get", resource, name, *ns, "-o", "json").json()
        return out


@contextlib.contextmanager
def control_plane(tmp: Path | None = None) -> Iterator[ControlPlane]:
    """A started control plane, always stopped on exit."""
    bin_dir = binaries()
    with tempfile.TemporaryDirectory(prefix="dynamo-webhook-e2e-", dir=tmp) as workdir:
        cp = ControlPlane(bin_dir, Path(workdir))
        try:
            cp.start()
            yield cp
        except BaseException:
            print(cp.logs())
            raise
        finally:
            cp.stop()
