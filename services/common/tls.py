"""TLS and mTLS from mounted PEM files, for servers and for client channels.

One set of settings per process (env prefix GLOSSATOR_TLS_): the certificate and key it presents
(as a server, and as a client when servers require client certificates) and the CA bundle it
trusts (clients verify servers with it; servers with `client_auth` verify clients with it). The
files are read at start: a missing or unreadable file stops the process with a clear error.
"""

from __future__ import annotations

from pathlib import Path

import grpc
from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class TlsSettings(BaseSettings):
    """TLS of every server and client channel (env prefix GLOSSATOR_TLS_)."""

    model_config = SettingsConfigDict(env_prefix="GLOSSATOR_TLS_", env_file=".env", extra="ignore")

    cert_file: Path | None = Field(
        None, description="PEM certificate chain servers present (and clients, for mTLS); unset: plaintext."
    )
    key_file: Path | None = Field(None, description="PEM private key of cert_file.")
    ca_file: Path | None = Field(
        None,
        description="PEM CA bundle clients verify servers with (unset: the system's), and servers verify "
        "client certificates with under client_auth.",
    )
    client_auth: bool = Field(
        False, description="Servers require a client certificate signed by ca_file (mTLS)."
    )
    server_name: str = Field(
        "", description="Name clients expect in server certificates, when it is not the target's host."
    )

    @model_validator(mode="after")
    def _consistent(self) -> TlsSettings:
        if (self.cert_file is None) != (self.key_file is None):
            raise ValueError("GLOSSATOR_TLS_CERT_FILE and GLOSSATOR_TLS_KEY_FILE go together")
        if self.client_auth and (self.ca_file is None or self.cert_file is None):
            raise ValueError("GLOSSATOR_TLS_CLIENT_AUTH needs GLOSSATOR_TLS_CA_FILE and a certificate")
        return self

    @property
    def serves_tls(self) -> bool:
        return self.cert_file is not None

    @property
    def dials_tls(self) -> bool:
        """Clients use TLS as soon as a CA or a certificate is configured."""
        return self.cert_file is not None or self.ca_file is not None


def server_credentials(tls: TlsSettings) -> grpc.ServerCredentials:
    assert tls.cert_file is not None and tls.key_file is not None
    return grpc.ssl_server_credentials(
        [(_read("GLOSSATOR_TLS_KEY_FILE", tls.key_file), _read("GLOSSATOR_TLS_CERT_FILE", tls.cert_file))],
        root_certificates=_read("GLOSSATOR_TLS_CA_FILE", tls.ca_file) if tls.client_auth else None,
        require_client_auth=tls.client_auth,
    )


def channel_credentials(tls: TlsSettings) -> grpc.ChannelCredentials:
    """Verifies the server against ca_file and presents the certificate, if any, for mTLS."""
    has_cert = tls.cert_file is not None and tls.key_file is not None
    return grpc.ssl_channel_credentials(
        root_certificates=_read("GLOSSATOR_TLS_CA_FILE", tls.ca_file) if tls.ca_file else None,
        private_key=_read("GLOSSATOR_TLS_KEY_FILE", tls.key_file) if has_cert else None,
        certificate_chain=_read("GLOSSATOR_TLS_CERT_FILE", tls.cert_file) if has_cert else None,
    )


def _read(setting: str, path: Path | None) -> bytes:
    assert path is not None
    try:
        return path.read_bytes()
    except OSError as error:
        raise ValueError(f"{setting} {path}: {error.strerror or error}") from error
