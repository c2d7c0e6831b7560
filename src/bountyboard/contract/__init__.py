"""The constants the service and its clients agree on, in plain Python (the standard library only).

Both sides import from here: the service (``accounts``, ``pagination``, ``market``, ``files``) and the
SDK (``bountyboard.client``), which therefore loads nothing of the service (no FastAPI, no SQLAlchemy).

- :mod:`.scopes`: the scopes an API key may carry and the sets of them the agent interface names;
- :mod:`.pages`: page sizes of the list routes;
- :mod:`.artifacts`: artifact types and what a media type is submitted as;
- :mod:`.ids`: the form of a prefixed id (``clm_01j...``).
"""
