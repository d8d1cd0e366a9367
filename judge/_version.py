"""The package version: one place, read by hatch at build time and by every signature."""

__version__ = "0.1.0"
