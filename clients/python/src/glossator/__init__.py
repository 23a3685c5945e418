"""Glossator protobuf contracts (the glossator-client distribution: stubs only, no server code)."""
