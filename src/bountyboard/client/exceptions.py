"""The root of every exception the SDK, the worker and the benchmark runner raise.

Catch :class:`BountyboardError` to handle any of them; the subclasses live beside the code that
raises them and say what went wrong:

- ``bountyboard.client``: ``ApiError`` (a problem+json answer), ``MissingScopeError`` (the key
  lacks a needed scope), ``InvalidIdError`` (an argument is not an id of the resource it names;
  nothing was sent), ``CommandFailed`` (the worker's command failed);
- ``bountyboard.runner``: ``RegistryError``, ``PullError``, ``JobError``, ``AgentError``,
  ``PushError`` and its ``QuotaExceeded``.
"""

from __future__ import annotations


class BountyboardError(Exception):
    """Any error raised by the bountyboard client or runner."""
