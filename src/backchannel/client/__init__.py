"""The high-level client API: ``Client``, and the option groups it takes."""

from .client import Client
from .options import ClientOptions, InputOptions, LogOptions, RetryOptions, TimeoutOptions

__all__ = ["Client", "ClientOptions", "InputOptions", "LogOptions", "RetryOptions", "TimeoutOptions"]
