"""Generated stubs of the glossator.v1 contracts (see services/common/protos.py)."""
