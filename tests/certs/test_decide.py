"""Property: from any Secret content, one renewal decision leads to a valid state that needs no further
change, keeps a still-usable CA, and never keeps an expired CA."""

from __future__ import annotations

import datetime as dt
import itertools
from functools import cache
from unittest import mock

from cryptography.hazmat.primitives.asymmetric import rsa
from hypothesis import given
from hypothesis import strategies as st
from kubernetes import client as k8s_client

from certs import pki
from certs.config import CertConfig
from certs.loop import Reconciler

NOW = dt.datetime(2026, 11, 22, 3, 0, tzinfo=dt.UTC)
NAMES = pki.service_dns_names("svc", "ns")


@cache
def key_pool() -> list[rsa.RSAPrivateKey]:
    return [rsa.generate_private_key(public_exponent=65537, key_size=1024) for _ in range(16)]


def pooled_keys() -> mock._patch[object]:
    cycle = itertools.cycle(key_pool())
    return mock.patch.object(pki, "_new_key", lambda: next(cycle))


@cache
def material() -> dict[str, bytes]:
    with pooled_keys():
        valid = pki.generate_ca(now=NOW)
        near = pki.generate_ca(now=NOW - dt.timedelta(days=3600))
        expired = pki.generate_ca(valid_days=30, now=NOW - dt.timedelta(days=40))
        leaf_valid = pki.generate_serving_cert(valid, NAMES, now=NOW)
        leaf_near = pki.generate_serving_cert(valid, NAMES, now=NOW - dt.timedelta(days=300))
        leaf_from_near = pki.generate_serving_cert(near, NAMES, now=NOW)
        leaf_short = pki.generate_serving_cert(valid, NAMES[:1], now=NOW)
    return {
        "ca_valid": valid.cert_pem,
        "ca_valid_key": valid.key_pem,
        "ca_near": near.cert_pem,
        "ca_near_key": near.key_pem,
        "ca_expired": expired.cert_pem,
        "ca_expired_key": expired.key_pem,
        "leaf_valid": leaf_valid.cert_pem,
        "leaf_valid_key": leaf_valid.key_pem,
        "leaf_near": leaf_near.cert_pem,
        "leaf_near_key": leaf_near.key_pem,
        "leaf_from_near": leaf_from_near.cert_pem,
        "leaf_from_near_key": leaf_from_near.key_pem,
        "leaf_short": leaf_short.cert_pem,
        "leaf_short_key": leaf_short.key_pem,
    }


def pick(*names: str) -> st.SearchStrategy[bytes | None]:
    return st.sampled_from([None, b"", b"garbage", *names]).map(
        lambda n: n if n is None or isinstance(n, bytes) else b"".join(material()[p] for p in n.split("+"))
    )


CA_CRT = pick(
    "ca_valid", "ca_near", "ca_expired", "ca_valid+ca_near", "ca_valid+ca_expired", "ca_near+ca_valid"
)
CA_KEY = pick("ca_valid_key", "ca_near_key", "ca_expired_key", "leaf_valid_key")
TLS_CRT = pick("leaf_valid", "leaf_near", "leaf_from_near", "leaf_short", "ca_valid")
TLS_KEY = pick("leaf_valid_key", "leaf_near_key", "leaf_from_near_key", "leaf_short_key", "ca_valid_key")


def reconciler() -> Reconciler:
    return Reconciler(
        CertConfig(mode="auto", namespace="ns", service_name="svc"), k8s_client.ApiClient(), clock=lambda: NOW
    )


@given(ca_crt=CA_CRT, ca_key=CA_KEY, tls_crt=TLS_CRT, tls_key=TLS_KEY)
def test_one_decision_reaches_a_fixed_point(
    ca_crt: bytes | None, ca_key: bytes | None, tls_crt: bytes | None, tls_key: bytes | None
) -> None:
    state = {
        k: v
        for k, v in {"ca.crt": ca_crt, "ca.key": ca_key, "tls.crt": tls_crt, "tls.key": tls_key}.items()
        if v is not None
    }
    rec = reconciler()
    with pooled_keys():
        decision = rec._decide(state)
        after = {**state, **decision[0]} if decision else dict(state)
        assert rec._decide(after) is None
    ca_certs = pki.load_certs(after["ca.crt"])
    signing = pki.KeyPair(pki.cert_to_pem(ca_certs[0]), after["ca.key"])
    assert pki.ca_problem(signing, now=NOW) is None
    assert (
        pki.leaf_problem(pki.KeyPair(after["tls.crt"], after["tls.key"]), signing.cert_pem, NAMES, now=NOW)
        is None
    )
    assert all(c.not_valid_after_utc > NOW for c in ca_certs)
    m = material()
    first_ok = ca_crt is not None and ca_crt.startswith(m["ca_valid"]) and ca_key == m["ca_valid_key"]
    if first_ok:
        assert after["ca.key"] == m["ca_valid_key"], "a usable CA is kept"
    rolled_from_near = ca_crt is not None and ca_crt.startswith(m["ca_near"])
    if rolled_from_near:
        assert after["ca.key"] != m["ca_near_key"]
        assert m["ca_near"] in after["ca.crt"], "the outgoing CA stays trusted until it expires"
    if decision is None:
        assert after == state
