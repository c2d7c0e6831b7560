"""Webhook delivery, in four parts passed to one another explicitly:

- ``queue``: lease due rows, record attempts and the rows' and endpoints' new state;
- ``send``: one attempt (vet the destination, sign, POST);
- ``policy``: the retry schedule, ``Retry-After``, when an endpoint is disabled (pure rules);
- ``wakeup``: the doorbell, ``LISTEN``/``NOTIFY`` on PostgreSQL, ``data_version`` on SQLite;

tied by ``dispatcher.Dispatcher``, made once per process and run by ``bountyboard.worker``.

Nothing is imported here: ``events.service`` imports ``wakeup``, which must not pull in the rest.
"""
