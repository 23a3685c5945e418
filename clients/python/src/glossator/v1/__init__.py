"""Generated stubs of the glossator.v1 contracts (protos/glossator/v1), written by `make protos`.

Messages: `agent_pb2`, `retrieval_pb2`, `validation_pb2`, `common_pb2` (typed by their .pyi);
gRPC stubs: `agent_pb2_grpc.AgentServiceStub`, `retrieval_pb2_grpc.RetrievalServiceStub`,
`validation_pb2_grpc.ValidationServiceStub`. Each message module embeds its file's descriptor.
"""
