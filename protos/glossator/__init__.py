"""Glossator protobuf contracts."""
