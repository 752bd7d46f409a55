"""The one line for a failed API request (certs/kubeerrors.py): the cause read out of urllib3's
exception chains and the API server's answers, the server named; the insecure warning said once."""

from __future__ import annotations

import logging
import socket
import ssl
from pathlib import Path

import pytest
import urllib3
from kubernetes.config.config_exception import ConfigException

from certs import kubeerrors
from certs.kube import Kube, load_api_client
from certs.kubeerrors import ApiError, describe, server_name, transport_failure
from tests.fakekube.api import ApiStatus
from tests.fakekube.server import FakeKube

SERVER = "10.0.0.1:6443"


def _retried(reason: Exception) -> urllib3.exceptions.MaxRetryError:
    return urllib3.exceptions.MaxRetryError(
        None, "/apis/nvidia.com/v1beta1/dynamographdeployments?limit=500", reason
    )  # type: ignore[arg-type]


def _caused(exc: Exception, cause: Exception) -> Exception:
    exc.__cause__ = cause
    return exc


@pytest.mark.parametrize(
    ("exc", "line"),
    [
        (
            _retried(
                _caused(
                    urllib3.exceptions.NewConnectionError(None, "Failed to establish a new connection"),  # type: ignore[arg-type]
                    OSError(101, "Network is unreachable"),
                )
            ),
            "unable to connect to the server 10.0.0.1:6443: network is unreachable",
        ),
        (
            _retried(urllib3.exceptions.LocationParseError("https://[::1")),
            "unable to connect to the server 10.0.0.1:6443: LocationParseError: Failed to parse: https://[::1",
        ),
        (
            _retried(urllib3.exceptions.ConnectTimeoutError(None, "timed out")),
            "unable to connect to the server 10.0.0.1:6443: timed out connecting",
        ),
        (
            urllib3.exceptions.ReadTimeoutError(None, "/x", "Read timed out. (read timeout=60)"),  # type: ignore[arg-type]
            "unable to connect to the server 10.0.0.1:6443: timed out waiting for an answer",
        ),
        (
            _retried(
                urllib3.exceptions.NameResolutionError(
                    "api.example", None, socket.gaierror(-2, "Name or service not known")
                )
            ),  # type: ignore[arg-type]
            "unable to connect to the server 10.0.0.1:6443: no such host (the name does not resolve)",
        ),
        (
            _retried(
                urllib3.exceptions.ProtocolError("Connection aborted.", ConnectionResetError(104, "reset"))
            ),
            "unable to connect to the server 10.0.0.1:6443: the server closed the connection without an answer (EOF)",
        ),
        (
            _retried(
                urllib3.exceptions.SSLError(
                    ssl.SSLError(1, "[SSL: WRONG_VERSION_NUMBER] wrong version number")
                )
            ),
            "unable to connect to the server 10.0.0.1:6443: TLS handshake failed: the server does not speak TLS "
            "(is it an http:// address?)",
        ),
    ],
)
def test_transport_failures_name_the_server_and_the_cause(exc: Exception, line: str) -> None:
    assert transport_failure(exc, SERVER) == line


def test_refused_is_worded_as_kubectl_words_it() -> None:
    refused = _caused(
        urllib3.exceptions.NewConnectionError(None, "Failed to establish a new connection"),  # type: ignore[arg-type]
        ConnectionRefusedError(111, "Connection refused"),
    )
    assert transport_failure(_retried(refused), "127.0.0.1:6443") == (
        "the connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?"
    )


@pytest.mark.parametrize(
    ("err", "line"),
    [
        (
            ApiError(401, "Unauthorized", "Unauthorized", server=SERVER),
            "you must be logged in to the server 10.0.0.1:6443 (401 Unauthorized): Unauthorized",
        ),
        (
            ApiError(403, "Forbidden", 'secrets "x" is forbidden:\n User "u" cannot get', server=SERVER),
            'the server 10.0.0.1:6443 refused the request (403 Forbidden): secrets "x" is forbidden: User "u" cannot get',
        ),
        (
            ApiError(500, "InternalError", "etcd timed out", server=SERVER),
            "the server 10.0.0.1:6443 answered 500 InternalError: etcd timed out",
        ),
        (ApiError(403, "Forbidden", "no"), "the server refused the request (403 Forbidden): no"),
        (
            ConfigException("Invalid kube-config file.\nNo configuration found."),
            "no Kubernetes API configuration: Invalid kube-config file. No configuration found.",
        ),
    ],
)
def test_answers_and_configuration(err: Exception, line: str) -> None:
    assert describe(err) == line


@pytest.mark.parametrize(
    ("url", "name"),
    [
        ("https://127.0.0.1:6443", "127.0.0.1:6443"),
        ("https://api.example", "api.example:443"),
        ("http://localhost", "localhost:80"),
        ("https://[::1]:6443/", "[::1]:6443"),
    ],
)
def test_server_name(url: str, name: str) -> None:
    assert server_name(url) == name


def test_an_answer_through_the_client_names_the_server(fake_kube: FakeKube, kubeconfig_path: Path) -> None:
    def forbid(verb: str, path: str, before: bool) -> None:
        raise ApiStatus(403, "Forbidden", 'secrets "webhook-server-cert" is forbidden')

    fake_kube._maybe_fault = forbid  # type: ignore[method-assign]
    api = load_api_client(str(kubeconfig_path))
    try:
        with pytest.raises(ApiError) as caught:
            Kube(api).request("GET", "/api/v1/namespaces/n/secrets/webhook-server-cert")
    finally:
        api.close()
    assert describe(caught.value) == (
        f"the server {fake_kube.url.removeprefix('http://')} refused the request "
        '(403 Forbidden): secrets "webhook-server-cert" is forbidden'
    )


def test_insecure_is_said_once_per_process(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(kubeerrors, "_insecure_warned", False)
    with caplog.at_level(logging.WARNING, logger="certs.kube"):
        kubeerrors.warn_insecure("127.0.0.1:6443")
        kubeerrors.warn_insecure("127.0.0.2:6443")
    assert [r.getMessage() for r in caplog.records] == [
        "warning: the API server 127.0.0.1:6443 is used without checking its certificate "
        "(insecure-skip-tls-verify in the kubeconfig)"
    ]
