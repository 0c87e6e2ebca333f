"""Graph input: the `Graph` type and random graph generators."""
from .graph import Graph

__all__ = ["Graph"]
