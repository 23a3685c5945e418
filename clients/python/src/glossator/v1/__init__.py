"""Generated stubs of the glossator.v1 contracts, synced from protos/glossator/v1 by clients/python/sync.py.

Messages: `agent_pb2`, `retrieval_pb2`, `validation_pb2`, `common_pb2` (typed by their .pyi);
gRPC stubs: `agent_pb2_grpc.AgentServiceStub`, `retrieval_pb2_grpc.RetrievalServiceStub`,
`validation_pb2_grpc.ValidationServiceStub`. The .proto sources ship next to them.
"""
