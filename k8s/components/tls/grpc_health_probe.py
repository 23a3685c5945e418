"""Kubelet probe for a Glossator server that serves TLS: grpc.health.v1 Check over TLS.

The kubelet's own gRPC probes speak plaintext only, so with the tls component each probe runs
    python /etc/glossator/probe/grpc_health_probe.py PORT [SERVICE]
in the container instead. It dials 127.0.0.1:PORT with the process's own GLOSSATOR_TLS_* settings
(CA, and its certificate for mTLS; GLOSSATOR_TLS_SERVER_NAME as the name to verify) and exits 0
only when SERVICE ("" for the whole server) is SERVING, 1 otherwise, saying why on stderr.
"""

from __future__ import annotations

import sys

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.common.tls import TlsSettings, channel_credentials

TIMEOUT_SECONDS = 4.0


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3) or not argv[1].isdigit():
        print("usage: grpc_health_probe.py PORT [SERVICE]", file=sys.stderr)
        return 2
    port, service = int(argv[1]), argv[2] if len(argv) == 3 else ""
    tls = TlsSettings()
    options = [("grpc.ssl_target_name_override", tls.server_name)] if tls.server_name else []
    with grpc.secure_channel(f"127.0.0.1:{port}", channel_credentials(tls), options=options) as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=service), timeout=TIMEOUT_SECONDS
            )
        except grpc.RpcError as error:
            print(
                f"health check of {service!r} on port {port} failed: {error.code().name}: {error.details()}",
                file=sys.stderr,
            )
            return 1
    status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
    if reply.status != health_pb2.HealthCheckResponse.SERVING:
        print(f"{service!r} on port {port} is {status}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
