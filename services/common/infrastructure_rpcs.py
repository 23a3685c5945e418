"""The gRPC services every server runs beside its own: health and reflection.

They are never refused for load nor asked for a token (probes and tooling must get through to a
busy server), and never traced. Here on their own because both the interceptor and tracing ask.
"""

INFRASTRUCTURE_SERVICES = frozenset({"grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection"})
