"""The basement: the database engine, the SQLite driver, sessions and their units of work, migrations.

- ``base``: the declarative base and the column types every model uses.
- ``sqlite_driver``: SQLite's statements on the event loop's thread, the connection set-up, the writers' queue.
- ``engine``: the engine of one process (``Database``) and its session factories.
- ``stamps``: names for the database's committed state, read once per request.
- ``unit_of_work``: the transaction policy, in one place: where a transaction begins and commits.
- ``session``: a route's read or write session (``ReadSession``, ``WriteSession``).
- ``migrations``: the Alembic history, applied and checked.

Domains import from here; nothing here imports a domain.
"""
