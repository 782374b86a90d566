"""The package version, in a module of its own so that any module (the provider's open frame,
ConnectionMetaData) can read it without importing the package ``__init__``."""

__version__ = "0.1.0"
