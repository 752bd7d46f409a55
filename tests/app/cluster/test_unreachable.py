"""Every cluster tool against an API server it cannot use: a closed port, a port that closes each
connection, one that speaks plain HTTP, one whose certificate is not trusted, a missing or broken
kubeconfig; and against a TLS server with ``insecure-skip-tls-verify``. Each run is the installed
command, so what is checked is exactly what a user sees: one line on stderr naming the server and the
cause, the exit status of the tools' common table, no traceback."""

from __future__ import annotations

import os
import socket
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

from app.cli.tool_args import EXIT_STATUSES
from app.cluster.inventory import EXIT_FINDINGS, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from certs import pki
from tests.fakekube.server import FakeKube

ROOT = Path(__file__).resolve().parents[3]
EXE = Path(sys.executable).parent / "dynamo-webhook"

#: Each tool, as run here: (its name in messages and its options to tell it apart, its arguments).
TOOLS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("audit", ("audit", "-A")),
    ("audit --upgrade-to", ("audit", "-A", "--upgrade-to", "1.5")),
    ("storage-migrate", ("storage-migrate", "--no-state")),
    ("certs status", ("certs", "status", "--namespace", "dynamo-system")),
    ("certs ensure", ("certs", "ensure", "--once", "--namespace", "dynamo-system")),
    ("crds release", ("crds", "release")),
)
#: What each tool was doing when the cluster failed it (before the cause).
DOING = {
    "audit": "cannot read the cluster: ",
    "audit --upgrade-to": "cannot read the cluster: ",
    "storage-migrate": "stopped: ",
    "certs status": "cannot read the cluster: ",
    "certs ensure": "Kubernetes API: ",
    "crds release": "",
}
AFTER = {"crds release": " (no CRD changed)"}


def kubeconfig(path: Path, server: str, **cluster: object) -> Path:
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": server, **cluster}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "c",
            }
        )
    )
    return path


def run_all(
    config: Path,
    tools: tuple[tuple[str, tuple[str, ...]], ...] = TOOLS,
) -> dict[str, subprocess.CompletedProcess[str]]:
    """Every tool of ``tools`` against ``config``, at the same time (most of each run is waiting for retries)."""
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST")}

    def one(args: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(EXE), *args, "--kubeconfig", str(config)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            env={**env, "XDG_STATE_HOME": str(config.parent)},
        )

    with ThreadPoolExecutor(len(tools)) as pool:
        return dict(zip((name for name, _ in tools), pool.map(one, (args for _, args in tools)), strict=True))


def assert_one_line(
    runs: dict[str, subprocess.CompletedProcess[str]],
    cause: str,
    *,
    doing: dict[str, str] = DOING,
    after: dict[str, str] = AFTER,
) -> None:
    for name, proc in runs.items():
        assert "Traceback" not in proc.stderr, proc.stderr
        said = name.split(" --")[0]  # the options that tell a run apart are not in its messages
        assert proc.stderr == f"dynamo-webhook {said}: {doing[name]}{cause}{after.get(name, '')}\n", (
            proc.stderr
        )
        assert proc.returncode == EXIT_USAGE, (name, proc.returncode)


class Listener:
    """A local TCP server that closes each connection at once (``mode="close"``) or answers it in plain
    HTTP (``mode="http"``)."""

    def __init__(self, mode: str) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.sock.getsockname()[1])
        self.mode = mode
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                if self.mode == "http":
                    conn.recv(65536)
                    conn.sendall(
                        b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    )

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def tls_fake(tmp_path: Path) -> Iterator[FakeKube]:
    """The fake API server over HTTPS, with a certificate for 127.0.0.1 from a CA nobody trusts."""
    ca = pki.generate_ca()
    leaf = pki.generate_serving_cert(ca, ["localhost"], ["127.0.0.1"])
    (tmp_path / "tls.crt").write_bytes(leaf.cert_pem)
    (tmp_path / "tls.key").write_bytes(leaf.key_pem)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "tls.crt", tmp_path / "tls.key")
    server = FakeKube().start(tls=context)
    try:
        yield server
    finally:
        server.stop()


def test_a_closed_port_is_refused(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]
    runs = run_all(kubeconfig(tmp_path / "kc", f"https://127.0.0.1:{port}"))
    assert_one_line(
        runs,
        f"the connection to the server 127.0.0.1:{port} was refused - did you specify the right "
        "host or port?",
    )


@pytest.mark.parametrize(
    ("mode", "cause"),
    [
        ("close", "the server closed the connection during the TLS handshake (EOF)"),
        ("http", "TLS handshake failed: the server does not speak TLS (is it an http:// address?)"),
    ],
)
def test_a_server_that_hangs_up_or_speaks_plain_http(tmp_path: Path, mode: str, cause: str) -> None:
    listener = Listener(mode)
    try:
        runs = run_all(kubeconfig(tmp_path / "kc", f"https://127.0.0.1:{listener.port}"))
    finally:
        listener.close()
    assert_one_line(runs, f"unable to connect to the server 127.0.0.1:{listener.port}: {cause}")


def test_an_untrusted_certificate(tmp_path: Path, tls_fake: FakeKube) -> None:
    runs = run_all(tls_fake.kubeconfig(tmp_path / "kc"))
    server = tls_fake.url.removeprefix("https://")
    assert_one_line(
        runs,
        f"unable to connect to the server {server}: TLS certificate verification failed: unable "
        "to get local issuer certificate (the kubeconfig's certificate-authority does not sign the "
        "server's certificate, or the certificate does not name the server)",
    )
    assert tls_fake.calls == []


def test_a_missing_or_broken_kubeconfig(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    runs = run_all(missing)
    assert_one_line(
        runs,
        f"no Kubernetes API configuration: kubeconfig {missing}: no such file",
        doing=dict.fromkeys(DOING, ""),
        after={},
    )
    broken = tmp_path / "broken"
    broken.write_text("clusters: [unclosed\n")
    runs = run_all(broken)
    assert_one_line(
        runs,
        f"no Kubernetes API configuration: kubeconfig {broken}: not valid YAML: expected ',' or "
        "']', but got '<stream end>' (line 2, column 1)",
        doing=dict.fromkeys(DOING, ""),
        after={},
    )


def test_insecure_skip_tls_verify_warns_once(tmp_path: Path, tls_fake: FakeKube) -> None:
    config = tls_fake.kubeconfig(tmp_path / "kc", **{"insecure-skip-tls-verify": True})
    # the readers first, then the writer: `certs status` reads what `certs ensure` would make
    runs = run_all(config, tuple(tool for tool in TOOLS if tool[0] != "certs ensure"))
    runs |= run_all(config, tuple(tool for tool in TOOLS if tool[0] == "certs ensure"))
    server = tls_fake.url.removeprefix("https://")
    warning = (
        f"warning: the API server {server} is used without checking its certificate "
        "(insecure-skip-tls-verify in the kubeconfig)\n"
    )
    expected = {
        "audit": EXIT_OK,
        "audit --upgrade-to": EXIT_USAGE,  # the fake API serves no Pods, which the preflight reads
        "storage-migrate": EXIT_OK,
        "certs status": EXIT_FINDINGS,
        "certs ensure": EXIT_OK,
        "crds release": EXIT_OK,
    }
    for name, proc in runs.items():
        assert proc.stderr.startswith(warning), (name, proc.stderr)
        assert proc.stderr.count("warning") == 1 and "InsecureRequestWarning" not in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr, proc.stderr
        assert proc.returncode == expected[name], (name, proc.returncode, proc.stderr)
    assert len({c.path for c in tls_fake.calls}) > 3, "the tools did talk to the server"


@pytest.mark.parametrize("args", dict.fromkeys(args[:2] for _, args in TOOLS))
def test_every_tool_help_ends_with_the_common_exit_table(
    args: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    from app.cli.main import main

    with pytest.raises(SystemExit):
        main([*(args[:2] if args[0] in ("certs", "crds") else args[:1]), "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert help_text.endswith(" ".join(EXIT_STATUSES.split()))


def test_the_exit_table_is_the_tools_and_the_docs() -> None:
    statuses = {
        EXIT_OK: "0 done",
        EXIT_FINDINGS: "1 findings",
        EXIT_USAGE: "2 a usage error",
        EXIT_INTERRUPTED: "130 interrupted",
    }
    assert all(text in EXIT_STATUSES for text in statuses.values())
    docs = (ROOT / "docs" / "operations.md").read_text()
    table = docs[docs.index("### Exit status and errors of the cluster tools") :]
    rows = [
        line.split("|")[1].strip()
        for line in table.splitlines()
        if line.startswith("| ") and "Exit" not in line
    ]
    assert rows[:4] == [str(code) for code in statuses]
