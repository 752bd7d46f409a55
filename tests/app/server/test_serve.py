"""A real ``dynamo-webhook serve`` subprocess: HTTPS with its generated CA, the printed curl
line, TLS/ALPN policy, metrics on the plain port, cert hot reload under traffic, and the
certificate gauges telling the certificate served (dev mode, and ``--workers 2`` in dev mode and
in auto mode against the in-process fake API)."""

from __future__ import annotations

import contextlib
import datetime as dt
import http.client
import json
import os
import shutil
import socket
import ssl
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path

import orjson
import pytest
from cryptography import x509
from prometheus_client.parser import text_string_to_metric_families

from certs import pki
from tests.app.server.serve_command import EXE, serve_argv
from tests.certs.conftest import NAMESPACE, SERVICE, secret_data, seed
from tests.fakekube.fixtures import fake_kube, kubeconfig_path
from tests.fakekube.server import FakeKube

__all__ = ["fake_kube", "kubeconfig_path"]

ROOT = Path(__file__).resolve().parents[3]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """``serve`` on free ports of 127.0.0.1, started and serving, in one process unless ``extra``
    says ``--workers``; ``exe``, ``cwd`` and ``env`` are the installed ``dynamo-webhook`` to run,
    where and with what (else this venv's, from the repository, with the test's environment)."""

    def __init__(
        self,
        cert_dir: Path,
        extra: tuple[str, ...] = (),
        *,
        exe: Path = EXE,
        cwd: Path = ROOT,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.cert_dir = cert_dir
        self.port = _free_port()
        self.metrics_port = _free_port()
        # Logs go to a file: an undrained pipe would fill up and block the server.
        self.log_path = cert_dir.parent / f"serve-{self.port}.log"
        self._log = self.log_path.open("w")
        self.proc = subprocess.Popen(
            serve_argv(
                exe, cert_dir, self.port, self.metrics_port, "--log-format", "text", "--workers", "1", *extra
            ),
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
            env={**(os.environ if env is None else env), "PYTHONUNBUFFERED": "1"},
        )
        self.stdout = ""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"serve exited: {self.log_path.read_text()}")
            # Serving, not only listening: the socket is bound (and takes connections into its
            # backlog) before the server answers and prints its curl line.
            try:
                with urllib.request.urlopen(
                    f"https://127.0.0.1:{self.port}/healthz", context=self.context(), timeout=2
                ):
                    break
            except (OSError, ssl.SSLError):
                time.sleep(0.1)
        else:
            raise RuntimeError("serve did not start serving")

    def context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.cert_dir / "ca.crt"))

    def wait_for_log(self, text: str, count: int = 1, within: float = 10) -> None:
        """Until ``text`` is in the log ``count`` times, at most ``within`` seconds: a line is
        written after what the client and the metrics can already see."""
        deadline = time.monotonic() + within
        while self.log_path.read_text().count(text) < count:
            assert time.monotonic() < deadline, self.log_path.read_text()[-3000:]
            time.sleep(0.05)

    def post(self, path: str, body: bytes, host: str = "127.0.0.1") -> tuple[int, dict[str, object]]:
        req = urllib.request.Request(
            f"https://{host}:{self.port}{path}",
            data=body,
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(req, context=self.context(), timeout=10) as resp:
            return resp.status, json.loads(resp.read())

    def peer_cert(self) -> bytes:
        with (
            socket.create_connection(("127.0.0.1", self.port), timeout=5) as raw,
            self.context().wrap_socket(raw, server_hostname="localhost") as tls,
        ):
            der = tls.getpeercert(binary_form=True)
            assert der is not None
            return der

    def stop(self) -> None:
        self.proc.terminate()
        try:
            out, _ = self.proc.communicate(timeout=15)
            self.stdout = out
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self._log.close()


@contextlib.contextmanager
def traffic(server: Server, threads: int = 3) -> Iterator[list[int]]:
    """Keep ``threads`` clients validating against ``server`` for the duration of the block; on
    exit assert that no request failed. Yields a one-item list counting the requests answered."""
    body = (ROOT / "examples/admission/dgd-v1beta1-create.json").read_bytes()
    failures: list[BaseException] = []
    answered = [0]
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            try:
                status, _ = server.post("/validate", body)
                assert status == 200
                answered[0] += 1
            except BaseException as exc:  # collected and asserted below
                failures.append(exc)

    workers = [threading.Thread(target=loop) for _ in range(threads)]
    for t in workers:
        t.start()
    try:
        yield answered
    finally:
        stop.set()
        for t in workers:
            t.join()
    assert not failures, failures[:3]
    assert answered[0] > 0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("certs") / "serving-certs")
    yield srv
    srv.stop()


def test_serves_https_with_generated_ca(server: Server) -> None:
    for name in ("tls.crt", "tls.key", "ca.crt"):
        assert (server.cert_dir / name).exists()
    sans = pki.dns_sans((server.cert_dir / "tls.crt").read_bytes())
    for name in (
        "localhost",
        "dynamo-operator-webhook-service",
        "dynamo-operator-webhook-service.dynamo-system",
        "dynamo-operator-webhook-service.dynamo-system.svc",
        "dynamo-operator-webhook-service.dynamo-system.svc.cluster.local",
    ):
        assert name in sans
    assert "127.0.0.1" in pki.ip_sans((server.cert_dir / "tls.crt").read_bytes())
    body = (ROOT / "examples/admission/dgd-v1beta1-create.json").read_bytes()
    status, doc = server.post("/validate", body)
    assert status == 200
    assert doc["kind"] == "AdmissionReview"
    status, _ = server.post("/validate", body, host="localhost")
    assert status == 200


@pytest.mark.filterwarnings("ignore:ssl.TLSVersion.TLSv1:DeprecationWarning")
def test_tls_policy(server: Server) -> None:
    ctx = server.context()
    ctx.maximum_version = ssl.TLSVersion.TLSv1_1
    ctx.minimum_version = ssl.TLSVersion.TLSv1
    with (
        pytest.raises((ssl.SSLError, ConnectionError)),
        socket.create_connection(("127.0.0.1", server.port)) as raw,
        ctx.wrap_socket(raw, server_hostname="localhost"),
    ):
        pass
    ctx = server.context()
    ctx.set_alpn_protocols(["h2", "http/1.1"])
    with (
        socket.create_connection(("127.0.0.1", server.port)) as raw,
        ctx.wrap_socket(raw, server_hostname="localhost") as tls,
    ):
        assert tls.selected_alpn_protocol() == "http/1.1"
        assert tls.version() in ("TLSv1.2", "TLSv1.3")


def test_health_and_plain_http_metrics(server: Server) -> None:
    with urllib.request.urlopen(f"https://127.0.0.1:{server.port}/readyz", context=server.context()) as resp:
        assert json.loads(resp.read()) == {"status": "ready"}
    with urllib.request.urlopen(f"http://127.0.0.1:{server.metrics_port}/metrics", timeout=5) as resp:
        assert b"controller_runtime_webhook_requests_total" in resp.read()


@pytest.mark.parametrize(
    ("method", "path", "status", "allow"),
    [
        ("GET", "/validate", 405, "POST"),
        ("OPTIONS", "/convert", 405, "POST"),
        ("HEAD", "/mutate", 405, "POST"),
        ("GET", "/nope", 404, None),
        ("HEAD", "/healthz", 200, None),
    ],
)
def test_routing_refusals_over_https(
    server: Server, method: str, path: str, status: int, allow: str | None
) -> None:
    with (
        socket.create_connection(("127.0.0.1", server.port), timeout=5) as raw,
        server.context().wrap_socket(raw, server_hostname="localhost") as tls,
    ):
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        conn.sock = tls
        conn.request(method, path)
        resp = conn.getresponse()
        body = resp.read()
    assert (resp.status, resp.getheader("Allow")) == (status, allow)
    if method == "HEAD":  # the headers of the answer, no body
        assert body == b"" and int(resp.getheader("Content-Length") or 0) > 0
    elif status != 200:
        assert orjson.loads(body)["code"] == status


def test_hot_reload_under_traffic(server: Server) -> None:
    before = server.peer_cert()
    ca = pki.KeyPair((server.cert_dir / "ca.crt").read_bytes(), (server.cert_dir / "ca.key").read_bytes())
    fresh = pki.generate_serving_cert(ca, ["localhost"], ["127.0.0.1"])
    with traffic(server):
        # A half-written pair first (new cert, old key): must be ignored.
        staging = server.cert_dir.parent / "staging"
        staging.mkdir(exist_ok=True)
        (staging / "tls.crt").write_bytes(fresh.cert_pem)
        os.replace(staging / "tls.crt", server.cert_dir / "tls.crt")
        time.sleep(1.5)
        assert server.peer_cert() == before
        # Then the key: the complete pair is served within 10 s.
        (staging / "tls.key").write_bytes(fresh.key_pem)
        os.replace(staging / "tls.key", server.cert_dir / "tls.key")
        deadline = time.monotonic() + 10
        while server.peer_cert() == before:
            assert time.monotonic() < deadline, "new certificate not served within 10 s"
            time.sleep(0.2)
        shutil.rmtree(staging)
    assert pki.load_cert(fresh.cert_pem).public_bytes(pki.serialization.Encoding.DER) == server.peer_cert()


def test_prints_a_ready_to_paste_curl_line(tmp_path: Path) -> None:
    srv = Server(tmp_path / "certs")
    srv.stop()
    line = next(ln.strip() for ln in srv.stdout.splitlines() if ln.strip().startswith("curl "))
    assert f"--cacert {tmp_path / 'certs' / 'ca.crt'}" in line
    assert f"https://127.0.0.1:{srv.port}/validate" in line
    assert "-H 'Content-Type: application/json'" in line
    example = line.split("@", 1)[1].split()[0]
    assert (ROOT / example).exists() or Path(example).exists()


# ------------------------------------------------------------------ certificate gauges

CERT_GAUGES = ("ready", "leaf_expiry_seconds", "ca_expiry_seconds")


def _cert_gauges(srv: Server) -> dict[str, float]:
    """The certificate gauges on the plain metrics port (those present)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{srv.metrics_port}/metrics", timeout=5) as resp:
        text = resp.read().decode()
    names = {f"dynamo_webhook_cert_{name}": name for name in CERT_GAUGES}
    return {
        names[sample.name]: sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name in names
    }


def _seconds_left(when: dt.datetime) -> float:
    return (when - dt.datetime.now(dt.UTC)).total_seconds()


def _served_not_after(srv: Server) -> dt.datetime:
    return x509.load_der_x509_certificate(srv.peer_cert()).not_valid_after_utc


def _wait_for_gauges(
    srv: Server, leaf: dt.datetime, ca: dt.datetime, timeout: float = 60
) -> dict[str, float]:
    """The gauges once they tell a ready pair whose leaf and CA expire at ``leaf`` and ``ca``."""
    deadline = time.monotonic() + timeout
    while True:
        gauges = _cert_gauges(srv)
        if (
            gauges.get("ready") == 1
            and abs(gauges.get("leaf_expiry_seconds", 0) - _seconds_left(leaf)) < 10
            and abs(gauges.get("ca_expiry_seconds", 0) - _seconds_left(ca)) < 10
        ):
            return gauges
        assert time.monotonic() < deadline, (gauges, srv.log_path.read_text()[-3000:])
        time.sleep(0.2)


def test_dev_mode_gauges_tell_the_served_certificate(server: Server) -> None:
    ca = pki.not_after((server.cert_dir / "ca.crt").read_bytes())
    gauges = _wait_for_gauges(server, _served_not_after(server), ca, timeout=5)
    assert gauges["leaf_expiry_seconds"] > 300 * 86400  # a fresh certificate, not 0
    # A shorter-lived pair written into the cert dir: once served, it is the one told.
    signing = pki.KeyPair(
        (server.cert_dir / "ca.crt").read_bytes(), (server.cert_dir / "ca.key").read_bytes()
    )
    short = pki.generate_serving_cert(signing, ["localhost"], ["127.0.0.1"], valid_days=20)
    staging = server.cert_dir.parent / "staging-gauges"
    staging.mkdir(exist_ok=True)
    for name, pem in (("tls.key", short.key_pem), ("tls.crt", short.cert_pem)):
        (staging / name).write_bytes(pem)
        os.replace(staging / name, server.cert_dir / name)
    _wait_for_gauges(server, pki.not_after(short.cert_pem), ca, timeout=10)
    assert _served_not_after(server) == pki.not_after(short.cert_pem)


def _wait_for_served(srv: Server) -> dt.datetime:
    """The served certificate's notAfter, once a worker answers (the supervisor listens first)."""
    deadline = time.monotonic() + 60
    while True:
        with contextlib.suppress(OSError, ssl.SSLError):
            return _served_not_after(srv)
        assert time.monotonic() < deadline, srv.log_path.read_text()[-3000:]
        time.sleep(0.2)


def test_workers_gauges_tell_the_served_certificate(tmp_path: Path) -> None:
    srv = Server(tmp_path / "certs", ("--workers", "2"))
    try:
        leaf = _wait_for_served(srv)
        _wait_for_gauges(srv, leaf, pki.not_after((srv.cert_dir / "ca.crt").read_bytes()))
    finally:
        srv.stop()


def auto_mode_workers(fake_kube: FakeKube, kubeconfig_path: Path, cert_dir: Path) -> Server:
    """``serve --workers 2 --cert-mode auto`` against the fake API, its Secret and Service seeded."""
    seed(fake_kube)
    return Server(
        cert_dir,
        (
            "--cert-mode",
            "auto",
            "--kubeconfig",
            str(kubeconfig_path),
            "--namespace",
            NAMESPACE,
            "--service-name",
            SERVICE,
            "--workers",
            "2",
        ),
    )


def test_auto_mode_workers_gauges_tell_the_served_certificate(
    fake_kube: FakeKube, kubeconfig_path: Path, tmp_path: Path
) -> None:
    """The loop runs in the supervisor, which serves nothing; the workers tell what they serve."""
    srv = auto_mode_workers(fake_kube, kubeconfig_path, tmp_path / "certs")
    try:
        leaf = _wait_for_served(srv)
        _wait_for_gauges(srv, leaf, pki.not_after(secret_data(fake_kube)["ca.crt"]))
        assert srv.peer_cert() == pki.load_cert(secret_data(fake_kube)["tls.crt"]).public_bytes(
            pki.serialization.Encoding.DER
        )
    finally:
        srv.stop()


# ------------------------------------------------------------------ ports and the curl line


def _serve(cert_dir: Path, *args: str) -> subprocess.Popen[str]:
    """``serve`` started (in one process unless ``args`` says ``--workers``), not waited for."""
    return subprocess.Popen(
        [
            str(EXE),
            "serve",
            "--host",
            "127.0.0.1",
            "--metrics-host",
            "127.0.0.1",
            "--cert-dir",
            str(cert_dir),
            "--log-format",
            "text",
            "--workers",
            "1",
            *args,
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return True
    except OSError:
        return False


@pytest.mark.parametrize("workers", ["1", "2"])
def test_curl_line_comes_once_both_ports_listen(tmp_path: Path, workers: str) -> None:
    """The curl line names the port bound (``--port 0``: the one the system chose), and when it
    is printed both that port and the metrics port take connections."""
    metrics_port = _free_port()
    proc = _serve(
        tmp_path / "certs", "--port", "0", "--metrics-port", str(metrics_port), "--workers", workers
    )
    try:
        assert proc.stdout is not None
        line = ""
        timer = threading.Timer(60, proc.kill)
        timer.start()
        try:
            while not line.strip().startswith("curl "):
                line = proc.stdout.readline()
                assert line, f"serve exited without a curl line: {proc.communicate()[1][-3000:]}"
        finally:
            timer.cancel()
        port = int(line.split("https://127.0.0.1:", 1)[1].split("/", 1)[0])
        assert port != 0
        assert _accepts(port) and _accepts(metrics_port)
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


@pytest.mark.parametrize("workers", ["1", "2"])
@pytest.mark.parametrize(
    ("taken", "what", "flags"),
    [("https", "HTTPS", ("--port", "--host")), ("metrics", "metrics", ("--metrics-port", "--metrics-host"))],
)
def test_a_port_in_use_is_one_line_naming_it_and_the_flag(
    tmp_path: Path, workers: str, taken: str, what: str, flags: tuple[str, str]
) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        busy = holder.getsockname()[1]
        ports = {"https": _free_port(), "metrics": _free_port(), taken: busy}
        proc = _serve(
            tmp_path / "certs",
            "--port",
            str(ports["https"]),
            "--metrics-port",
            str(ports["metrics"]),
            "--workers",
            workers,
        )
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err
    assert "curl " not in out and "Traceback" not in err
    (line,) = [ln for ln in err.splitlines() if ln.startswith("dynamo-webhook:")]
    assert line.startswith(
        f"dynamo-webhook: cannot listen on 127.0.0.1:{busy} ({what}): address already in use;"
    )
    assert all(flag in line for flag in flags)


def test_the_event_loop_waits_for_the_gil_at_most_the_switch_interval() -> None:
    # serve and each worker call it once ready (bench.bench_hostile shows what it is for)
    import sys

    from app.server.runtime import SWITCH_INTERVAL, prefer_the_event_loop

    before = sys.getswitchinterval()
    try:
        prefer_the_event_loop()
        assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL) and before > SWITCH_INTERVAL
    finally:
        sys.setswitchinterval(before)
