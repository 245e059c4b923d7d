"""benchtape's version: one place, read by pyproject, the store and the CLI."""

VERSION = "0.1.0"
