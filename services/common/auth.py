"""Who is calling: bearer tokens, roles, and the user a caller acts for.

Auth is on when a shared service token (GLOSSATOR_AUTH_TOKEN) or a JWKS file is configured; every
RPC but health and reflection then needs `authorization: Bearer <token>`:
- the service token makes the caller an admin: the suite's own services, the CLI, a trusted
  gateway. It acts for the user named in the user header (`x-glossator-user`), or for nobody
  (anonymous sessions, reachable only with their session token);
- a JWT signed by a key of the JWKS file, from the configured issuer (and audience), makes the
  caller its `sub` with the roles of its roles claim (`reader`, `admin`); only an admin may act
  for another user through the header;
- a widget key (in `x-glossator-widget-key`, no authorization header) is a reader credential
  meant to be public: it sits in a docs site's page. It acts for nobody (anonymous sessions, each
  reachable with its session token) and is bound to the origins of the sites that embed it: a
  call whose Origin header (a browser sets it; the edge passes it on) is not one of them is
  PERMISSION_DENIED. A script can forge an Origin, so the binding stops other sites' pages, not
  scripts: the edge's rate limits bound those.
The identity is verified once per call by the server interceptor and read by servicers through
`caller()`; with auth off `caller()` is None and servicers take the request's own fields, which is
the embedded default on loopback.
"""

from __future__ import annotations

import hmac
import json
import time
from collections.abc import Iterable
from contextvars import ContextVar
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import jwt
from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from services.common.errors import FieldViolation, InvalidArgument, PermissionDenied, Unauthenticated

AUTHORIZATION_KEY = "authorization"
ORIGIN_KEY = "origin"  # the browser's, passed on by the edge
# The metadata a page sends its widget key in (the edge allows it in CORS and rate-limits by it).
WIDGET_KEY_HEADER = "x-glossator-widget-key"
# The browser's address as the edge saw it (Envoy overwrites whatever the client sent): what a
# widget caller's quotas are counted by, since every browser reaches the agent from the edge's address.
CLIENT_ADDRESS_HEADER = "x-glossator-client-address"
MAX_USER_CHARS = 128
_MIN_TOKEN_CHARS = 16
_MAX_BEARER_CHARS = 8192


class Role(StrEnum):
    READER = "reader"  # ask, search, validate, its own sessions
    ADMIN = "admin"  # also Ingest, DeleteDocuments (so creating collections), acting for any user


class AuthSettings(BaseSettings):
    """Authentication of every service and client command (env prefix GLOSSATOR_AUTH_)."""

    model_config = SettingsConfigDict(env_prefix="GLOSSATOR_AUTH_", env_file=".env", extra="ignore")

    token: SecretStr | None = Field(
        None,
        description="Shared service token (16+ characters): every server accepts it as an admin and "
        "every client (the agent's channels, the CLI) sends it. Unset with no JWKS file: auth off.",
    )
    jwks_file: Path | None = Field(
        None, description="JWKS (JSON) file whose keys sign the JWTs callers present; needs the issuer."
    )
    issuer: str = Field("", description="Required `iss` of JWTs.")
    audience: str = Field("", description="Required `aud` of JWTs; empty: not checked.")
    algorithms: list[str] = Field(
        ["RS256", "ES256", "EdDSA"], description="Accepted JWT algorithms (JSON list)."
    )
    roles_claim: str = Field("roles", description="JWT claim listing the caller's roles (reader, admin).")
    leeway_seconds: float = Field(30, ge=0, description="Clock skew allowed on JWT exp/nbf/iat.")
    max_lifetime_seconds: float = Field(
        86400,
        gt=0,
        description="Longest a JWT may still be valid: a token whose `exp` lies further ahead is refused "
        "(a leaked long-lived token would otherwise stay usable for years).",
    )
    user_header: str = Field(
        "x-glossator-user",
        description="Metadata an admin caller (a gateway) sets to the end user it acts for.",
    )
    widget_keys: dict[str, list[str]] = Field(
        {},
        description="Widget keys (16+ characters, public: they sit in a docs page) with the origins each "
        'may be used from, as JSON: {"<key>": ["https://docs.example.org"]}. Reader role, anonymous '
        "sessions; needs the service token (the agent calls retrieval and validation with it).",
    )

    @field_validator("token")
    @classmethod
    def _long_enough(cls, token: SecretStr | None) -> SecretStr | None:
        if token is not None and len(token.get_secret_value()) < _MIN_TOKEN_CHARS:
            raise ValueError(f"must be at least {_MIN_TOKEN_CHARS} characters")
        return token

    @field_validator("widget_keys")
    @classmethod
    def _widget_keys_bound_to_origins(cls, keys: dict[str, list[str]]) -> dict[str, list[str]]:
        for key, origins in keys.items():
            if len(key) < _MIN_TOKEN_CHARS:
                raise ValueError(f"a widget key must be at least {_MIN_TOKEN_CHARS} characters")
            if not origins:
                raise ValueError("every widget key needs the origins it may be used from")
            for origin in origins:
                scheme, sep, rest = origin.partition("://")
                if scheme not in ("http", "https") or not sep or not rest or "/" in rest:
                    raise ValueError(f"{origin!r} is not an origin such as https://docs.example.org")
        return keys

    @model_validator(mode="after")
    def _jwt_needs_issuer(self) -> AuthSettings:
        if self.jwks_file is not None and not self.issuer:
            raise ValueError("GLOSSATOR_AUTH_ISSUER is required with GLOSSATOR_AUTH_JWKS_FILE")
        if self.widget_keys and self.token is None:
            raise ValueError(
                "GLOSSATOR_AUTH_WIDGET_KEYS needs GLOSSATOR_AUTH_TOKEN: the agent calls retrieval and "
                "validation with the service token for widget callers"
            )
        return self

    @property
    def enabled(self) -> bool:
        return self.token is not None or self.jwks_file is not None


@dataclass(frozen=True)
class Identity:
    """A verified caller: `user` owns the sessions it makes ("" for nobody: anonymous)."""

    subject: str
    roles: frozenset[Role]
    user: str
    # The caller's own bearer token, which the agent forwards when it has no service token.
    bearer: str
    # A widget key's reader: a browser's, through the edge (which names its address).
    via_widget_key: bool = False

    @property
    def is_admin(self) -> bool:
        return Role.ADMIN in self.roles


_caller: ContextVar[Identity | None] = ContextVar("glossator_caller", default=None)


def caller() -> Identity | None:
    """The verified identity of the RPC being served; None when auth is off."""
    return _caller.get()


class Authenticator:
    """Verifies the bearer token of a call against the settings (keys loaded once, at start)."""

    def __init__(self, settings: AuthSettings) -> None:
        self._settings = settings
        self._token = settings.token.get_secret_value().encode() if settings.token else None
        self._keys = _load_jwks(settings.jwks_file) if settings.jwks_file else None

    def authorize(self, metadata: Iterable[tuple[str, str | bytes]], role: Role) -> Identity:
        """The caller's identity, bound for this call; Unauthenticated or PermissionDenied if it may not."""
        headers = {key: value for key, value in metadata if isinstance(value, str)}
        identity = self._identify(headers)
        if role not in identity.roles and not identity.is_admin:
            raise PermissionDenied(
                f"this call needs the {role} role; the caller has {', '.join(sorted(identity.roles)) or 'none'}",
                retryable=False,
            )
        _caller.set(identity)
        return identity

    def _identify(self, headers: dict[str, str]) -> Identity:
        widget_key = headers.get(WIDGET_KEY_HEADER)
        if widget_key is not None and AUTHORIZATION_KEY not in headers:
            return self._widget(widget_key, headers.get(ORIGIN_KEY, ""))
        bearer = _bearer(headers.get(AUTHORIZATION_KEY))
        if self._token is not None and hmac.compare_digest(bearer.encode(), self._token):
            return Identity("service", frozenset(Role), self._acted_for(headers, ""), bearer)
        if self._keys is None:
            raise Unauthenticated("the bearer token is not valid", retryable=False)
        claims = self._verified_claims(bearer)
        roles = _roles(claims.get(self._settings.roles_claim))
        subject = str(claims["sub"])
        user = self._acted_for(headers, subject) if Role.ADMIN in roles else subject
        return Identity(subject, roles, user, bearer)

    def _widget(self, key: str, origin: str) -> Identity:
        """A reader acting for nobody, if the key is known and used from one of its origins."""
        for known, origins in self._settings.widget_keys.items():
            if hmac.compare_digest(key.encode(), known.encode()):
                if origin not in origins:
                    where = f"origin {origin[:200]!r}" if origin else "a request without an Origin header"
                    raise PermissionDenied(f"this widget key may not be used from {where}", retryable=False)
                return Identity(f"widget:{known[:6]}", frozenset({Role.READER}), "", "", via_widget_key=True)
        raise Unauthenticated("the widget key is not valid", retryable=False)

    def _acted_for(self, headers: dict[str, str], default: str) -> str:
        user = headers.get(self._settings.user_header, "").strip()
        if len(user) > MAX_USER_CHARS:
            raise InvalidArgument(
                [FieldViolation(self._settings.user_header, f"at most {MAX_USER_CHARS} characters")]
            )
        return user or default

    def _verified_claims(self, bearer: str) -> dict[str, Any]:
        s = self._settings
        try:
            claims = jwt.decode(
                bearer,
                self._signing_key(bearer),
                algorithms=s.algorithms,
                issuer=s.issuer,
                audience=s.audience or None,
                leeway=s.leeway_seconds,
                options={"require": ["exp", "iss", "sub"], "verify_aud": bool(s.audience)},
            )
        except jwt.ExpiredSignatureError as error:
            raise Unauthenticated("the token has expired", retryable=False) from error
        except jwt.PyJWTError as error:
            raise Unauthenticated(f"the token is not valid: {str(error)[:200]}", retryable=False) from error
        # decode() has checked that exp is a number; a comparison never overflows, even on 10**400.
        if claims["exp"] > time.time() + s.max_lifetime_seconds + s.leeway_seconds:
            raise Unauthenticated(
                f"the token is valid for longer than the {s.max_lifetime_seconds:g} s allowed",
                retryable=False,
            )
        return claims

    def _signing_key(self, bearer: str) -> jwt.PyJWK:
        """The JWKS key of the token's kid (any, without one) made for the token's algorithm.

        The PyJWK itself goes to decode(), which then verifies with the key's own algorithm: a
        header naming another one (ES256 on an RSA key) is refused, never handed to the wrong
        algorithm's key loader (a TypeError, which was INTERNAL).
        """
        header = jwt.get_unverified_header(bearer)
        kid, algorithm = header.get("kid"), header.get("alg")
        assert self._keys is not None
        for key in self._keys.keys:
            if (kid is None or key.key_id == kid) and key.algorithm_name == algorithm:
                return key
        raise jwt.InvalidKeyError("no key of the JWKS file has the token's key id and algorithm")


def role_for(method: str, admin_methods: frozenset[str]) -> Role:
    return Role.ADMIN if method in admin_methods else Role.READER


def _bearer(value: str | None) -> str:
    if not value:
        raise Unauthenticated(
            "authentication required: send `authorization: Bearer <token>`", retryable=False
        )
    scheme, _, token = value.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or len(token) > _MAX_BEARER_CHARS:
        raise Unauthenticated("the authorization metadata must be `Bearer <token>`", retryable=False)
    return token


def _roles(claim: object) -> frozenset[Role]:
    """Known roles of a claim that is a list or a space-separated string; others are ignored."""
    names = claim.split() if isinstance(claim, str) else claim if isinstance(claim, list) else []
    known = {role.value for role in Role}
    return frozenset(Role(name) for name in names if isinstance(name, str) and name in known)


def _load_jwks(path: Path) -> jwt.PyJWKSet:
    """The key set, or a start-up error that says what is wrong with the file."""
    try:
        return jwt.PyJWKSet.from_dict(json.loads(path.read_text()))
    except (OSError, ValueError, jwt.PyJWTError) as error:
        raise ValueError(f"GLOSSATOR_AUTH_JWKS_FILE {path}: {error}") from error
