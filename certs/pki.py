"""X.509 primitives for the webhook's serving certificates.

Certificates follow the operator's self-managed layout: an RSA-2048 CA (``CN=Dynamo-Webhook-CA``, ``O=NVIDIA``,
ten years, carrying its own name as a DNS SAN) signing RSA-2048 serving certificates (one year, serverAuth).
Keys are PEM-encoded PKCS#1 (``RSA PRIVATE KEY``). ``notBefore`` is backdated one hour against clock skew.
"""

from __future__ import annotations

import datetime as dt
import functools
import ipaddress
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, padding, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CA_COMMON_NAME = "Dynamo-Webhook-CA"
CA_ORGANIZATION = "NVIDIA"
CA_VALID_DAYS = 3650
LEAF_VALID_DAYS = 365
RSA_KEY_SIZE = 2048
BACKDATE = dt.timedelta(hours=1)
LOOKAHEAD = dt.timedelta(days=90)


@dataclass(frozen=True)
class KeyPair:
    """A PEM certificate and its PEM private key."""

    cert_pem: bytes
    key_pem: bytes


class CertError(ValueError):
    """A certificate or key could not be parsed or does not satisfy a check."""


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _new_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=RSA_KEY_SIZE)


def _key_pem(key: rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(
        encoding=serialization.Encoding.PEM,
        format=serialization.PrivateFormat.TraditionalOpenSSL,
        encryption_algorithm=serialization.NoEncryption(),
    )


def _serial() -> int:
    return secrets.randbits(127) | 1


def _key_usage(*, cert_sign: bool) -> x509.KeyUsage:
    """digitalSignature + keyEncipherment (+ keyCertSign for a CA), as cert-controller sets them."""
    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=True,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=cert_sign,
        crl_sign=False,
        encipher_only=False,
        decipher_only=False,
    )


def generate_ca(
    common_name: str = CA_COMMON_NAME,
    organization: str = CA_ORGANIZATION,
    valid_days: int = CA_VALID_DAYS,
    *,
    now: dt.datetime | None = None,
) -> KeyPair:
    """Create a self-signed CA. ``now`` fixes the issuance time (tests use it to age certificates)."""
    issued = now or _utcnow()
    key = _new_key()
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization),
        ]
    )
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(_serial())
        .not_valid_before(issued - BACKDATE)
        .not_valid_after(issued + dt.timedelta(days=valid_days))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(_key_usage(cert_sign=True), critical=True)
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(common_name)]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return KeyPair(cert.public_bytes(serialization.Encoding.PEM), _key_pem(key))


def generate_serving_cert(
    ca: KeyPair,
    dns_names: Sequence[str],
    ip_addresses: Sequence[str] = (),
    valid_days: int = LEAF_VALID_DAYS,
    *,
    now: dt.datetime | None = None,
) -> KeyPair:
    """Issue a serverAuth certificate signed by ``ca``; the first DNS name is also the common name."""
    if not dns_names and not ip_addresses:
        raise CertError("a serving certificate needs at least one DNS name or IP address")
    issued = now or _utcnow()
    ca_cert = load_cert(ca.cert_pem)
    ca_key = load_private_key(ca.key_pem)
    key = _new_key()
    common_name = dns_names[0] if dns_names else ip_addresses[0]
    sans: list[x509.GeneralName] = [x509.DNSName(d) for d in dns_names]
    sans += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ip_addresses]
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(_serial())
        .not_valid_before(issued - BACKDATE)
        .not_valid_after(issued + dt.timedelta(days=valid_days))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(cert_sign=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    return KeyPair(cert.public_bytes(serialization.Encoding.PEM), _key_pem(key))


def service_dns_names(service: str, namespace: str, cluster_domain: str = "cluster.local") -> list[str]:
    """The in-cluster names of a Service, ``<svc>.<ns>.svc`` first (it becomes the common name)."""
    return [
        f"{service}.{namespace}.svc",
        service,
        f"{service}.{namespace}",
        f"{service}.{namespace}.svc.{cluster_domain}",
    ]


# --- parsing -------------------------------------------------------------------------------------------


def load_cert(pem: bytes) -> x509.Certificate:
    """Parse the first certificate of a PEM blob."""
    certs = load_certs(pem)
    if not certs:
        raise CertError("no PEM certificate found")
    return certs[0]


def load_certs(pem: bytes) -> list[x509.Certificate]:
    """Parse every certificate of a PEM bundle (empty input → empty list)."""
    if not pem or not pem.strip():
        return []
    try:
        return x509.load_pem_x509_certificates(pem)
    except ValueError as exc:
        raise CertError(f"invalid PEM certificate: {exc}") from exc


def load_private_key(pem: bytes) -> rsa.RSAPrivateKey:
    """Parse an unencrypted PEM RSA private key (PKCS#1 or PKCS#8).

    RSA key loading validates the key, which is costly; the loop re-reads the same keys every pass, so
    parsed keys are memoised by their PEM bytes.
    """
    if not pem or not pem.strip():
        raise CertError("empty private key")
    return _load_private_key(bytes(pem))


@functools.lru_cache(maxsize=64)
def _load_private_key(pem: bytes) -> rsa.RSAPrivateKey:
    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError) as exc:
        raise CertError(f"invalid PEM private key: {exc}") from exc
    if not isinstance(key, rsa.RSAPrivateKey):
        raise CertError(f"unsupported private key type {type(key).__name__}; RSA expected")
    return key


def cert_to_pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def bundle(certs: Iterable[bytes]) -> bytes:
    """Concatenate PEM certificates into one bundle, dropping duplicates and keeping order."""
    seen: set[bytes] = set()
    out: list[bytes] = []
    for pem in certs:
        for cert in load_certs(pem):
            der = cert.public_bytes(serialization.Encoding.DER)
            if der not in seen:
                seen.add(der)
                out.append(cert_to_pem(cert))
    return b"".join(out)


def fingerprint(cert: x509.Certificate) -> str:
    """SHA-256 fingerprint, hex, shortened to 16 characters for display."""
    return cert.fingerprint(hashes.SHA256()).hex()[:16]


# --- inspection ----------------------------------------------------------------------------------------


def not_after(pem: bytes) -> dt.datetime:
    return load_cert(pem).not_valid_after_utc


def dns_sans(pem: bytes) -> list[str]:
    return _sans(load_cert(pem), x509.DNSName)


def ip_sans(pem: bytes) -> list[str]:
    return [str(ip) for ip in _sans(load_cert(pem), x509.IPAddress)]


def _sans(cert: x509.Certificate, kind: type[x509.DNSName] | type[x509.IPAddress]) -> list[str]:
    try:
        ext = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName)
    except x509.ExtensionNotFound:
        return []
    return [str(v) for v in ext.value.get_values_for_type(kind)]


def common_name(pem: bytes) -> str:
    attrs = load_cert(pem).subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    return str(attrs[0].value) if attrs else ""


def key_matches_cert(cert_pem: bytes, key_pem: bytes) -> bool:
    """True when ``key_pem`` is the private key of the (first) certificate in ``cert_pem``."""
    try:
        cert = load_cert(cert_pem)
        key = load_private_key(key_pem)
    except CertError:
        return False
    return bool(cert.public_key() == key.public_key())


def is_signed_by(cert: x509.Certificate, issuer: x509.Certificate) -> bool:
    """True when ``issuer`` names and signs ``cert``."""
    if cert.issuer != issuer.subject:
        return False
    pub = issuer.public_key()
    try:
        if isinstance(pub, rsa.RSAPublicKey):
            hash_alg = cert.signature_hash_algorithm
            if hash_alg is None:
                return False
            pub.verify(cert.signature, cert.tbs_certificate_bytes, padding.PKCS1v15(), hash_alg)
        elif isinstance(pub, ec.EllipticCurvePublicKey):
            hash_alg = cert.signature_hash_algorithm
            if hash_alg is None:
                return False
            pub.verify(cert.signature, cert.tbs_certificate_bytes, ec.ECDSA(hash_alg))
        elif isinstance(pub, ed25519.Ed25519PublicKey | ed448.Ed448PublicKey):
            pub.verify(cert.signature, cert.tbs_certificate_bytes)
        else:
            return False
    except InvalidSignature:
        return False
    return True


def chains_to(cert_pem: bytes, ca_pem: bytes) -> bool:
    """True when the (first) certificate of ``cert_pem`` is signed by any CA in the bundle ``ca_pem``."""
    try:
        cert = load_cert(cert_pem)
        cas = load_certs(ca_pem)
    except CertError:
        return False
    return any(is_signed_by(cert, ca) for ca in cas)


def _valid_at(cert: x509.Certificate, at: dt.datetime) -> bool:
    return cert.not_valid_before_utc <= at <= cert.not_valid_after_utc


def _has_server_auth(cert: x509.Certificate) -> bool:
    try:
        eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    except x509.ExtensionNotFound:
        return False
    return ExtendedKeyUsageOID.SERVER_AUTH in list(eku)


def _is_ca(cert: x509.Certificate) -> bool:
    try:
        bc = cert.extensions.get_extension_for_class(x509.BasicConstraints).value
    except x509.ExtensionNotFound:
        return False
    return bool(bc.ca)


def ca_problem(
    ca: KeyPair,
    *,
    now: dt.datetime | None = None,
    lookahead: dt.timedelta = LOOKAHEAD,
    common_name: str = CA_COMMON_NAME,
) -> str | None:
    """Why ``ca`` is unusable (``None`` when usable): pair, self-signature, CA flag, DNS SAN, and still valid
    at ``now + lookahead``. Only the first certificate of ``ca.cert_pem`` is the signing CA."""
    at = (now or _utcnow()) + lookahead
    try:
        cert = load_cert(ca.cert_pem)
    except CertError as exc:
        return f"CA certificate: {exc}"
    if not key_matches_cert(ca.cert_pem, ca.key_pem):
        return "CA key does not match the CA certificate"
    if not _is_ca(cert):
        return "CA certificate lacks basicConstraints CA:true"
    if not is_signed_by(cert, cert):
        return "CA certificate is not self-signed"
    if common_name not in _sans(cert, x509.DNSName):
        return f"CA certificate does not carry DNS name {common_name}"
    if not _valid_at(cert, at):
        return f"CA certificate expires {cert.not_valid_after_utc.isoformat()} (within the renewal window)"
    return None


def leaf_problem(
    leaf: KeyPair,
    ca_pem: bytes,
    dns_names: Sequence[str],
    *,
    now: dt.datetime | None = None,
    lookahead: dt.timedelta = LOOKAHEAD,
) -> str | None:
    """Why ``leaf`` is unusable (``None`` when usable): pair, signed by the first CA of ``ca_pem``,
    serverAuth, carries every name of ``dns_names``, and still valid at ``now + lookahead``."""
    at = (now or _utcnow()) + lookahead
    try:
        cert = load_cert(leaf.cert_pem)
        ca = load_cert(ca_pem)
    except CertError as exc:
        return str(exc)
    if not key_matches_cert(leaf.cert_pem, leaf.key_pem):
        return "serving key does not match the serving certificate"
    if not is_signed_by(cert, ca):
        return "serving certificate is not signed by the current CA"
    if not _has_server_auth(cert):
        return "serving certificate lacks extKeyUsage serverAuth"
    have = set(_sans(cert, x509.DNSName))
    missing = [d for d in dns_names if d not in have]
    if missing:
        return f"serving certificate lacks DNS names {', '.join(missing)}"
    if not _valid_at(cert, at):
        return (
            f"serving certificate expires {cert.not_valid_after_utc.isoformat()} (within the renewal window)"
        )
    return None


def valid_pair(cert_pem: bytes, key_pem: bytes, *, now: dt.datetime | None = None) -> bool:
    """True when the pair matches and the certificate is valid right now (no lookahead)."""
    if not key_matches_cert(cert_pem, key_pem):
        return False
    return _valid_at(load_cert(cert_pem), now or _utcnow())
