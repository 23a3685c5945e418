"""Envoy's bootstrap for the browser edge, made from `EdgeSettings`.

One listener, one route table: only the AgentService calls a reader's page needs reach the agent
(Ask, AskStream, GetSession, EndSession, SubmitFeedback); everything else is UNIMPLEMENTED there.
The HTTP filters, in order (requests go down the list, responses come back up):

0. health_check: GET /healthz is answered by Envoy itself (probes);
1. cors: answers preflights itself, and adds the CORS headers to every response (refusals too, so
   the page can read them) for an allowed origin only;
2. connect_grpc_bridge and grpc_web: Connect and gRPC-Web become gRPC, and the answers go back;
3. rbac: a request whose Origin is not allowed is refused PERMISSION_DENIED before it reaches the
   agent (a browser never sends one after its preflight failed; a script that forges one gets
   nothing);
4. buffer: a request body over `max_request_bytes` is refused (all these calls send one message);
5. local_ratelimit: token buckets per client address and per widget key, refused
   RESOURCE_EXHAUSTED with google.rpc.RetryInfo, `retry-after` and "try again in N s";
6. router, to the agent over HTTP/2, with `x-glossator-client-address` set to the client address
   (the one rate-limited above; a value the client sent is overwritten): every browser reaches the
   agent from Envoy's address, and the agent counts a widget reader's quotas by this one.

Filters 3 to 5 come after the bridges, so their refusals (written as gRPC statuses by the local
reply mappers) are turned by the bridges into each protocol's own error.
"""

from __future__ import annotations

import base64
import math
from typing import Any

import yaml
from google.protobuf import duration_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2

from glossator.v1 import agent_pb2
from services.common.auth import CLIENT_ADDRESS_HEADER, WIDGET_KEY_HEADER
from services.edge.config import EdgeSettings

AGENT_SERVICE = agent_pb2.DESCRIPTOR.services_by_name["AgentService"].full_name
# What a reader's page calls; ListSessions needs a named user (a widget's sessions are anonymous).
BROWSER_METHODS = ("Ask", "AskStream", "GetSession", "EndSession", "SubmitFeedback")
# Request headers a Connect or gRPC-Web client sends besides the simple ones.
ALLOWED_HEADERS = (
    WIDGET_KEY_HEADER,
    "authorization",
    "content-type",
    "connect-protocol-version",
    "connect-timeout-ms",
    "grpc-timeout",
    "x-grpc-web",
    "x-user-agent",
    "x-request-id",
)
# Response headers a page may read: gRPC-Web trailers-only statuses, the retry hint, the request id.
EXPOSED_HEADERS = (
    "grpc-status",
    "grpc-message",
    "grpc-status-details-bin",
    "retry-after",
    "trailer-retry-after",
    "x-request-id",
    "trailer-x-request-id",
)
_TYPES = "type.googleapis.com/envoy.extensions"
HEALTH_PATH = "/healthz"


def retry_seconds(settings: EdgeSettings) -> int:
    """How long a refused client waits for a token: one is added every 60/rate seconds per bucket."""
    slowest = min(settings.requests_per_minute_per_ip, settings.requests_per_minute_per_key)
    return max(1, math.ceil(60 / slowest))


def rate_limited_message(settings: EdgeSettings) -> str:
    return f"too many requests from this client: try again in {retry_seconds(settings)} s"


def _status_details(settings: EdgeSettings) -> str:
    """grpc-status-details-bin of a rate-limited call: google.rpc.Status with RetryInfo (base64)."""
    status = status_pb2.Status(code=code_pb2.RESOURCE_EXHAUSTED, message=rate_limited_message(settings))
    retry = error_details_pb2.RetryInfo(retry_delay=duration_pb2.Duration(seconds=retry_seconds(settings)))
    status.details.add().Pack(retry)
    return base64.b64encode(status.SerializeToString()).decode().rstrip("=")


def _seconds(value: float) -> str:
    return f"{value:g}s"


def _bucket(per_minute: int) -> dict[str, Any]:
    """A minute's worth of burst, refilled evenly: a token every 60/rate s (Envoy refills at most
    every 50 ms, so a higher rate adds several tokens a fill)."""
    tokens = math.ceil(per_minute * 0.05 / 60)  # per fill, so that a fill is 50 ms apart or more
    return {
        "max_tokens": per_minute,
        "tokens_per_fill": tokens,
        "fill_interval": _seconds(round(tokens * 60 / per_minute, 3)),
    }


def _cors(settings: EdgeSettings) -> dict[str, Any]:
    return {
        "@type": f"{_TYPES}.filters.http.cors.v3.CorsPolicy",
        "allow_origin_string_match": [{"exact": origin} for origin in settings.allowed_origins],
        "allow_methods": "POST, GET, OPTIONS",
        "allow_headers": ",".join(ALLOWED_HEADERS),
        "expose_headers": ",".join(EXPOSED_HEADERS),
        "max_age": "600",
        # A preflight from another origin is answered here, without CORS headers: the browser stops.
        "forward_not_matching_preflights": False,
    }


def _origin_guard(settings: EdgeSettings) -> dict[str, Any]:
    """RBAC: allow requests without an Origin (not from a page) or with an allowed one."""
    allowed_origin = [
        {"header": {"name": "origin", "string_match": {"exact": origin}}}
        for origin in settings.allowed_origins
    ]
    no_origin = {"header": {"name": "origin", "present_match": True, "invert_match": True}}
    return {
        "@type": f"{_TYPES}.filters.http.rbac.v3.RBAC",
        "rules": {
            "action": "ALLOW",
            "policies": {
                "allowed-origins": {
                    "permissions": [{"any": True}],
                    "principals": [no_origin, *allowed_origin],
                }
            },
        },
    }


def _rate_limit(settings: EdgeSettings) -> dict[str, Any]:
    return {
        "@type": f"{_TYPES}.filters.http.local_ratelimit.v3.LocalRateLimit",
        "stat_prefix": "edge_rate_limit",
        "token_bucket": _bucket(settings.requests_per_minute_per_ip),
        "filter_enabled": {"default_value": {"numerator": 100, "denominator": "HUNDRED"}},
        "filter_enforced": {"default_value": {"numerator": 100, "denominator": "HUNDRED"}},
        "rate_limited_as_resource_exhausted": True,
        "always_consume_default_token_bucket": False,
        "max_dynamic_descriptors": 10000,
        "descriptors": [
            # An empty value is a wildcard: one bucket per distinct client address, per token.
            {
                "entries": [{"key": "remote_address", "value": ""}],
                "token_bucket": _bucket(settings.requests_per_minute_per_ip),
            },
            {
                "entries": [{"key": "widget_key", "value": ""}],
                "token_bucket": _bucket(settings.requests_per_minute_per_key),
            },
        ],
        "rate_limits": [
            {"actions": [{"remote_address": {}}]},
            {
                "actions": [
                    {"request_headers": {"header_name": WIDGET_KEY_HEADER, "descriptor_key": "widget_key"}}
                ]
            },
        ],
        "response_headers_to_add": [
            {
                "append_action": "OVERWRITE_IF_EXISTS_OR_ADD",
                "header": {"key": "retry-after", "value": str(retry_seconds(settings))},
            },
            {
                "append_action": "OVERWRITE_IF_EXISTS_OR_ADD",
                "header": {"key": "grpc-status-details-bin", "value": _status_details(settings)},
            },
        ],
    }


def _routes(settings: EdgeSettings) -> list[dict[str, Any]]:
    to_agent = {
        "cluster": "agent",
        "timeout": "0s",  # answers stream: the stream limits below bound them instead
        "max_stream_duration": {
            "max_stream_duration": _seconds(settings.max_stream_seconds),
            "grpc_timeout_header_max": _seconds(settings.max_stream_seconds),
        },
    }
    routes = [
        {"match": {"path": f"/{AGENT_SERVICE}/{method}"}, "route": to_agent} for method in BROWSER_METHODS
    ]
    routes.append(
        {
            "match": {"prefix": "/"},
            "direct_response": {"status": 404, "body": {"inline_string": "not found\n"}},
        }
    )
    return routes


def _local_replies(settings: EdgeSettings) -> dict[str, Any]:
    """The edge's own refusals as gRPC statuses (trailers-only), so that each protocol's bridge
    turns them into its own error, as it does the agent's: a Connect client reads a code and a
    message, never a bare HTTP status. Envoy decides whether a local reply is gRPC from the request
    as it arrived (a Connect or gRPC-Web request is not), so the reply is written as gRPC here."""
    rate_limited = rate_limited_message(settings)
    refusals = [
        (
            429,
            code_pb2.RESOURCE_EXHAUSTED,
            rate_limited,
            {
                "retry-after": str(retry_seconds(settings)),
                "grpc-status-details-bin": _status_details(settings),
            },
        ),
        (
            413,
            code_pb2.RESOURCE_EXHAUSTED,
            f"request too large: at most {settings.max_request_bytes} bytes",
            {},
        ),
        (403, code_pb2.PERMISSION_DENIED, "this origin may not call the agent", {}),
        (408, code_pb2.DEADLINE_EXCEEDED, "the request did not arrive in time", {}),
        (404, code_pb2.UNIMPLEMENTED, "not served at the edge: " + ", ".join(BROWSER_METHODS), {}),
        (503, code_pb2.UNAVAILABLE, "the agent cannot be reached: try again later", {}),
    ]
    mappers = []
    for http_status, grpc_code, message, extra in refusals:
        headers = {
            "content-type": "application/grpc",
            "grpc-status": str(grpc_code),
            "grpc-message": message,
            **extra,
        }
        mappers.append(
            {
                "filter": {
                    "status_code_filter": {
                        "comparison": {
                            "op": "EQ",
                            "value": {
                                "default_value": http_status,
                                "runtime_key": f"edge.local_reply_{http_status}",
                            },
                        }
                    }
                },
                "status_code": 200,
                "body": {"inline_string": ""},
                "headers_to_add": [
                    {"append_action": "OVERWRITE_IF_EXISTS_OR_ADD", "header": {"key": key, "value": value}}
                    for key, value in headers.items()
                ],
            }
        )
    return {"mappers": mappers}


def _listener(settings: EdgeSettings) -> dict[str, Any]:
    manager = {
        "@type": f"{_TYPES}.filters.network.http_connection_manager.v3.HttpConnectionManager",
        "stat_prefix": "edge",
        "codec_type": "AUTO",
        "use_remote_address": True,
        "xff_num_trusted_hops": settings.trusted_hops,
        "stream_idle_timeout": _seconds(settings.stream_idle_timeout_seconds),
        "request_headers_timeout": _seconds(settings.request_headers_timeout_seconds),
        "common_http_protocol_options": {
            "idle_timeout": "300s",
            "max_stream_duration": _seconds(settings.max_stream_seconds),
            "headers_with_underscores_action": "REJECT_REQUEST",
        },
        "http2_protocol_options": {"max_concurrent_streams": 100},
        "local_reply_config": _local_replies(settings),
        "route_config": {
            "name": "edge",
            "virtual_hosts": [
                {
                    "name": "agent",
                    "domains": ["*"],
                    "routes": _routes(settings),
                    "typed_per_filter_config": {"envoy.filters.http.cors": _cors(settings)},
                    # The trusted client address (use_remote_address, xff_num_trusted_hops).
                    "request_headers_to_add": [
                        {
                            "append_action": "OVERWRITE_IF_EXISTS_OR_ADD",
                            "header": {
                                "key": CLIENT_ADDRESS_HEADER,
                                "value": "%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%",
                            },
                        }
                    ],
                }
            ],
        },
        "http_filters": [
            {
                "name": "envoy.filters.http.cors",
                "typed_config": {"@type": f"{_TYPES}.filters.http.cors.v3.Cors"},
            },
            {
                "name": "envoy.filters.http.connect_grpc_bridge",
                "typed_config": {"@type": f"{_TYPES}.filters.http.connect_grpc_bridge.v3.FilterConfig"},
            },
            {
                "name": "envoy.filters.http.grpc_web",
                "typed_config": {"@type": f"{_TYPES}.filters.http.grpc_web.v3.GrpcWeb"},
            },
            {"name": "envoy.filters.http.rbac", "typed_config": _origin_guard(settings)},
            {
                "name": "envoy.filters.http.buffer",
                "typed_config": {
                    "@type": f"{_TYPES}.filters.http.buffer.v3.Buffer",
                    "max_request_bytes": settings.max_request_bytes,
                },
            },
            {"name": "envoy.filters.http.local_ratelimit", "typed_config": _rate_limit(settings)},
            {
                "name": "envoy.filters.http.router",
                "typed_config": {"@type": f"{_TYPES}.filters.http.router.v3.Router"},
            },
        ],
    }
    chain: dict[str, Any] = {
        "filters": [{"name": "envoy.filters.network.http_connection_manager", "typed_config": manager}]
    }
    if settings.tls_cert_file is not None:
        chain["transport_socket"] = {
            "name": "envoy.transport_sockets.tls",
            "typed_config": {
                "@type": f"{_TYPES}.transport_sockets.tls.v3.DownstreamTlsContext",
                "common_tls_context": {
                    "alpn_protocols": ["h2", "http/1.1"],
                    "tls_certificates": [
                        {
                            "certificate_chain": {"filename": str(settings.tls_cert_file)},
                            "private_key": {"filename": str(settings.tls_key_file)},
                        }
                    ],
                },
            },
        }
    return {
        "name": "edge",
        "address": {"socket_address": {"address": settings.host, "port_value": settings.port}},
        "per_connection_buffer_limit_bytes": max(settings.max_request_bytes * 2, 1024 * 1024),
        "filter_chains": [chain],
    }


def _agent_cluster(settings: EdgeSettings) -> dict[str, Any]:
    host, _, port = settings.agent_target.rpartition(":")
    cluster: dict[str, Any] = {
        "name": "agent",
        "type": "STRICT_DNS",
        "connect_timeout": "2s",
        "lb_policy": "ROUND_ROBIN",
        "typed_extension_protocol_options": {
            "envoy.extensions.upstreams.http.v3.HttpProtocolOptions": {
                "@type": f"{_TYPES}.upstreams.http.v3.HttpProtocolOptions",
                "explicit_http_config": {"http2_protocol_options": {}},
            }
        },
        "load_assignment": {
            "cluster_name": "agent",
            "endpoints": [
                {
                    "lb_endpoints": [
                        {
                            "endpoint": {
                                "address": {"socket_address": {"address": host, "port_value": int(port)}}
                            }
                        }
                    ]
                }
            ],
        },
    }
    if settings.agent_tls_ca_file is not None:
        name = settings.agent_tls_server_name or host
        cluster["transport_socket"] = {
            "name": "envoy.transport_sockets.tls",
            "typed_config": {
                "@type": f"{_TYPES}.transport_sockets.tls.v3.UpstreamTlsContext",
                "sni": name,
                "common_tls_context": {
                    "alpn_protocols": ["h2"],
                    "validation_context": {
                        "trusted_ca": {"filename": str(settings.agent_tls_ca_file)},
                        "match_typed_subject_alt_names": [{"san_type": "DNS", "matcher": {"exact": name}}],
                    },
                },
            },
        }
    return cluster


def _metrics(settings: EdgeSettings) -> tuple[dict[str, Any], dict[str, Any]]:
    """A listener serving GET /metrics from the admin API's /stats/prometheus, and nothing else of
    it (the admin API can stop Envoy), with the cluster that reaches the admin port on loopback."""
    manager = {
        "@type": f"{_TYPES}.filters.network.http_connection_manager.v3.HttpConnectionManager",
        "stat_prefix": "metrics",
        "route_config": {
            "virtual_hosts": [
                {
                    "name": "metrics",
                    "domains": ["*"],
                    "routes": [
                        {
                            "match": {
                                "path": "/metrics",
                                "headers": [{"name": ":method", "string_match": {"exact": "GET"}}],
                            },
                            "route": {"cluster": "admin", "prefix_rewrite": "/stats/prometheus"},
                        },
                        {"match": {"prefix": "/"}, "direct_response": {"status": 404}},
                    ],
                }
            ]
        },
        "http_filters": [
            {
                "name": "envoy.filters.http.router",
                "typed_config": {"@type": f"{_TYPES}.filters.http.router.v3.Router"},
            }
        ],
    }
    listener = {
        "name": "metrics",
        "address": {"socket_address": {"address": settings.host, "port_value": settings.metrics_port}},
        "filter_chains": [
            {"filters": [{"name": "envoy.filters.network.http_connection_manager", "typed_config": manager}]}
        ],
    }
    admin = {
        "name": "admin",
        "type": "STATIC",
        "connect_timeout": "1s",
        "load_assignment": {
            "cluster_name": "admin",
            "endpoints": [
                {
                    "lb_endpoints": [
                        {
                            "endpoint": {
                                "address": {
                                    "socket_address": {
                                        "address": "127.0.0.1",
                                        "port_value": settings.admin_port,
                                    }
                                }
                            }
                        }
                    ]
                }
            ],
        },
    }
    return listener, admin


def render(settings: EdgeSettings) -> dict[str, Any]:
    """Envoy's bootstrap (v3) as a mapping."""
    listeners, clusters = [_listener(settings)], [_agent_cluster(settings)]
    if settings.metrics_port is not None:
        listener, admin = _metrics(settings)
        listeners.append(listener)
        clusters.append(admin)
    return {
        "admin": {"address": {"socket_address": {"address": "127.0.0.1", "port_value": settings.admin_port}}},
        "static_resources": {"listeners": listeners, "clusters": clusters},
        "overload_manager": {
            "resource_monitors": [
                {
                    "name": "envoy.resource_monitors.global_downstream_max_connections",
                    "typed_config": {
                        "@type": f"{_TYPES}.resource_monitors.downstream_connections.v3.DownstreamConnectionsConfig",
                        "max_active_downstream_connections": settings.max_connections,
                    },
                }
            ]
        },
    }


def render_yaml(settings: EdgeSettings) -> str:
    header = "# Envoy bootstrap of the Glossator browser edge, written by `glossator web` (services/edge).\n"
    return header + yaml.safe_dump(render(settings), sort_keys=False)
