"""The write-ahead log copied back into the SQLite database on a thread of its own.

Left to SQLite, the commit that takes the log past 1,000 pages copies it into the database file and
syncs it (an automatic checkpoint), inside that commit: on the event loop's thread, which every request
of the process shares. The service's connections turn that off (``PRAGMA wal_autocheckpoint=0``,
``sqlite_driver.configure_sqlite``) and each process's :class:`Checkpointer` runs a ``PASSIVE``
checkpoint on its own connection and thread instead: it waits for no writer and no reader, copies what
no reader still needs, and SQLite leaves the GIL while it writes. In process, a claim + submit's two
commits took 160-175 us each with automatic checkpoints and 125 us without (docs/performance.md).

A passive checkpoint copies the log but never starts it over: SQLite rewinds the log only for a writer
that begins once every frame is copied, and under steady writes one always appends first. The log then
grew without end (past 100 MB in two minutes of the claim + submit cycle, and every read searched its
growing index). So once the log holds more than ``RESTART_FRAMES`` frames, the checkpointer also runs a
``RESTART`` checkpoint: it takes the write lock, copies the few frames written since the passive one,
syncs the database file and waits for readers to leave the log, waiting at most
``RESTART_PATIENCE_SECONDS`` for the lock and the readers (then it is as passive, and the next turn tries
again); the next writer then writes from the log's start. Meanwhile this process's writers wait for the
lock as they wait for another process's (``sqlite_driver._patiently``, asleep on the loop). Not
``TRUNCATE``, which also cuts the file to nothing and syncs it: writers waited 3 to 4 times as long for
it, and each commit after it grew the file again, where a rewound file is overwritten in place
(docs/performance.md). A file that grew past ``LOG_SIZE_LIMIT_BYTES`` (a reader held the log while
writes went on) is cut back to it when it is rewound (``PRAGMA journal_size_limit`` of the service's
connections, ``sqlite_driver.configure_sqlite``).

A checkpoint only copies what is committed, so it never changes what any connection reads. Several
processes may each run one: SQLite lets one checkpoint run at a time and answers the others busy,
which they ignore until their next turn.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
from pathlib import Path

log = logging.getLogger("bountyboard")

# How often the log is copied back. At the cycle's peak write rate (docs/performance.md) the log grows
# by about 1,500 pages in this time: the size SQLite's own automatic checkpoint lets it reach.
INTERVAL_SECONDS = 0.2
# Frames (pages) in the log past which it is rewound: 16 MB of 4 KiB pages, several turns at that rate.
RESTART_FRAMES = 4000
# The size a rewound log's file is cut back to when it grew past it: well above its steady size (the restart's
# frames plus a turn's), so that a rewind in the steady state never truncates.
LOG_SIZE_LIMIT_BYTES = 64 * 2**20
# The longest a restart holds back this database's writers: the lock's wait plus the readers'.
RESTART_PATIENCE_SECONDS = 0.1


class Checkpointer:
    """A daemon thread that checkpoints one database file every ``interval`` seconds until stopped, and
    rewinds its log once it holds more than ``restart_frames`` frames."""

    def __init__(self, path: Path, interval: float = INTERVAL_SECONDS, restart_frames: int = RESTART_FRAMES) -> None:
        self.path = path
        self.interval = interval
        self.restart_frames = restart_frames
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=f"wal-checkpoint {self.path.name}", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop after the checkpoint in progress, if any (the last connection's close copies the rest)."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _run(self) -> None:
        # The timeout is a restart's wait for the write lock and for readers; a passive checkpoint never waits.
        with contextlib.closing(sqlite3.connect(self.path, timeout=RESTART_PATIENCE_SECONDS,
                                                check_same_thread=False)) as connection:
            while not self._stopping.wait(self.interval):
                try:
                    _, frames, _ = connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                    if frames > self.restart_frames:
                        connection.execute("PRAGMA wal_checkpoint(RESTART)").fetchall()
                except sqlite3.OperationalError as error:  # busy, or the file is gone (a test's tmp dir)
                    log.debug("WAL checkpoint of %s skipped: %s", self.path, error)
