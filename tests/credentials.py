"""Real certificates and JWTs made in the test: a CA with server and client certificates, a second
CA nobody trusts, an RSA signing key with its JWKS file."""

from __future__ import annotations

import base64
import datetime
import ipaddress
import json
import time
from dataclasses import dataclass
from pathlib import Path

import jwt
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

ISSUER = "https://id.example.test"
AUDIENCE = "glossator"


@dataclass(frozen=True)
class CertificatePair:
    cert_file: Path
    key_file: Path


@dataclass(frozen=True)
class Authority:
    """A CA that issues certificates for 127.0.0.1 / localhost into a folder."""

    name: str
    key: ec.EllipticCurvePrivateKey
    cert: x509.Certificate
    folder: Path

    @classmethod
    def create(cls, folder: Path, name: str) -> Authority:
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        cert = (
            _builder(subject, subject, key.public_key())
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256())
        )
        folder.mkdir(parents=True, exist_ok=True)
        authority = cls(name, key, cert, folder)
        authority.ca_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        return authority

    @property
    def ca_file(self) -> Path:
        return self.folder / f"{self.name}-ca.pem"

    def issue(self, common_name: str) -> CertificatePair:
        key = ec.generate_private_key(ec.SECP256R1())
        names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
        cert = (
            _builder(
                x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]),
                self.cert.subject,
                key.public_key(),
            )
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .sign(self.key, hashes.SHA256())
        )
        pair = CertificatePair(
            self.folder / f"{self.name}-{common_name}.pem", self.folder / f"{self.name}-{common_name}.key"
        )
        pair.cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        pair.key_file.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        return pair


def _builder(subject: x509.Name, issuer: x509.Name, public_key) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
    )


@dataclass(frozen=True)
class TokenIssuer:
    """Signs JWTs with an RSA key published (with its kid) in a JWKS file, which also publishes an
    EC key (kid `{kid}-ec`, ES256): a key set of two types, as identity providers rotating
    algorithms serve."""

    key: rsa.RSAPrivateKey
    kid: str
    ec_key: ec.EllipticCurvePrivateKey
    jwks_file: Path

    @classmethod
    def create(cls, folder: Path, kid: str = "test-key") -> TokenIssuer:
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        ec_key = ec.generate_private_key(ec.SECP256R1())
        rsa_jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
        ec_jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(ec_key.public_key()))
        jwks_file = folder / f"{kid}.jwks.json"
        folder.mkdir(parents=True, exist_ok=True)
        keys = [
            {**rsa_jwk, "kid": kid, "use": "sig", "alg": "RS256"},
            {**ec_jwk, "kid": f"{kid}-ec", "use": "sig", "alg": "ES256"},
        ]
        jwks_file.write_text(json.dumps({"keys": keys}))
        return cls(key, kid, ec_key, jwks_file)

    @property
    def ec_kid(self) -> str:
        return f"{self.kid}-ec"

    def claims(self, subject: str, roles: list[str], *, expires_in: float = 300, **claims) -> dict:
        now = int(time.time())
        return {
            "iss": ISSUER,
            "aud": AUDIENCE,
            "sub": subject,
            "roles": roles,
            "iat": now,
            "exp": now + int(expires_in),
            **claims,
        }

    def token(self, subject: str, roles: list[str], *, expires_in: float = 300, **claims) -> str:
        payload = self.claims(subject, roles, expires_in=expires_in, **claims)
        return jwt.encode(payload, self.key, algorithm="RS256", headers={"kid": self.kid})

    def ec_token(self, subject: str, roles: list[str]) -> str:
        payload = self.claims(subject, roles)
        return jwt.encode(payload, self.ec_key, algorithm="ES256", headers={"kid": self.ec_kid})


def forged_token(header: dict, payload: dict) -> str:
    """A JWT with any header and a signature of junk: what an attacker sends without a key."""

    def part(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    return ".".join((part(json.dumps(header).encode()), part(json.dumps(payload).encode()), part(b"x" * 64)))
