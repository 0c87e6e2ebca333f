"""Graph input: the `Graph` type and random graph generators."""
from .graph import MAX_VERTICES, Graph, check_vertex_count

__all__ = ["Graph", "MAX_VERTICES", "check_vertex_count"]
