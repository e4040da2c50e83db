"""The package version, in a module of its own so every layer can read it (the package imports the layers)."""

__version__ = "0.1.0"
