"""Electric drive blocks (the hydraulics/electric issue grows this package)."""

from .dc_motor import DCMotor

__all__ = ["DCMotor"]
