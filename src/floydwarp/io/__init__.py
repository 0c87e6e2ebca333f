"""File formats in and out."""
from .atomic import atomic_path

__all__ = ["atomic_path"]
