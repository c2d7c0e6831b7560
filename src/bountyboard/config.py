"""Settings, read once from the environment (prefix ``BOUNTYBOARD_``).

Every setting is documented in docs/configuration.md.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from functools import cached_property, lru_cache
from pathlib import Path

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="BOUNTYBOARD_", extra="ignore")

    data_dir: Path = Path(".bountyboard")
    database_url: str | None = None
    # A PostgreSQL streaming standby of database_url: GET routes read from it (storage.replica), except
    # for a caller that wrote within the last read_your_writes_seconds.
    database_read_url: str | None = None
    read_your_writes_seconds: float = Field(default=5.0, ge=0)
    base_url: str = "http://127.0.0.1:8000"
    site_url: str | None = None
    # Secrets as SecretStr: shown as ********** in reprs, logs and tracebacks of the settings.
    secret_key: SecretStr | None = None
    # During a rotation of secret_key: the replaced secret, still accepted to read what was encrypted under it.
    previous_secret_key: SecretStr | None = None

    # The first admin, created by the first start on an empty database (unset password: one is generated).
    admin_email: str | None = None
    admin_password: SecretStr | None = None

    # Marketplace
    default_claim_ttl_seconds: int = 3600
    appeal_window_seconds: int = 72 * 3600
    sweep_interval_seconds: float = 5.0
    # Track records: an outcome this many days old counts half (docs/lifecycle.md, "Reputation").
    reputation_half_life_days: float = Field(default=90.0, gt=0)
    # Review deadlines (docs/lifecycle.md, "Review deadlines"): the bounds a task's reviewWithinHours
    # must keep, how long before the deadline review.due is emitted (at most half the window), and how
    # long an appeal may wait for a resolution before it goes to the admins.
    review_within_hours_min: float = Field(default=1.0, gt=0)
    review_within_hours_max: float = Field(default=720.0, gt=0)
    review_due_warning_seconds: int = Field(default=12 * 3600, ge=0)
    appeal_resolve_window_seconds: int = Field(default=72 * 3600, ge=1)

    # Probation (docs/lifecycle.md, "Eligibility"): a claimant with fewer decided outcomes than this holds at
    # most probation_max_claims active claims and claims only tasks whose bounty is at most probation_max_bounty.
    probation_outcomes: int = Field(default=3, ge=0)
    probation_max_claims: int = Field(default=1, ge=1)
    probation_max_bounty: float = Field(default=25.0, ge=0)

    # Checks before review (docs/checks.md): check runs at once per process, how long a run's lease
    # lasts (it must outlast a verifier's trials times its time limit), how often an idle runner looks.
    check_concurrency: int = Field(default=2, ge=1, le=64)
    check_lease_seconds: float = Field(default=1900.0, gt=0)
    check_poll_seconds: float = Field(default=1.0, gt=0)

    # Events and webhooks
    event_retention_days: int = 30
    webhook_allow_private: bool = False
    webhook_timeout_seconds: float = 15.0
    webhook_time_scale: float = 1.0
    run_dispatcher: bool = True
    # How often an idle dispatcher looks for due deliveries, how many it takes at once, and how many
    # endpoints it sends to in parallel.
    webhook_poll_interval_seconds: float = Field(default=1.0, gt=0)
    webhook_batch_size: int = Field(default=100, ge=1, le=1000)
    webhook_concurrency: int = Field(default=32, ge=1, le=512)

    # Mounts the test-only routes of bountyboard.testing, for an admin: move the service clock forward,
    # hold a request in flight, emit events (POST /v1/admin/clock, /test/hold, /events). Never in production.
    enable_test_clock: bool = False
    # With the test clock only: a JSON file of scripted DNS answers (bountyboard.events.testdns).
    test_hosts_file: Path | None = None

    # Files (uploads): where they are stored, and how big and how long-lived they may be.
    # ``s3://bucket/prefix`` for S3-compatible storage (credentials from the usual AWS_* variables);
    # unset: a local directory under data_dir.
    storage_url: str | None = None
    storage_endpoint_url: str | None = None  # an S3-compatible server instead of AWS
    upload_max_file_bytes: int = Field(default=25 * 1024**2, ge=1)
    # A draft's verifier archive (.tar.gz, as sent; PUT /v1/tasks/{id}/verifier-archive), kept in the database.
    verifier_archive_max_bytes: int = Field(default=10 * 1024**2, ge=1)
    upload_max_claim_bytes: int = Field(default=100 * 1024**2, ge=1)
    upload_url_ttl_seconds: int = Field(default=900, ge=10)
    upload_unused_ttl_seconds: int = Field(default=24 * 3600, ge=60)
    download_link_ttl_seconds: int = Field(default=300, ge=10)
    # Open (pending) upload slots at once: per claim, and per API key across its claims.
    upload_max_pending_per_claim: int = Field(default=20, ge=1)
    upload_max_pending_per_key: int = Field(default=50, ge=1)
    # The files of a claim whose rejection stands are deleted this many days after it stood.
    rejected_file_retention_days: float = Field(default=30, ge=0)

    log_level: str = "INFO"
    runs_per_ip_per_day: int = Field(default=30, ge=1)
    runs_per_user_per_day: int = Field(default=200, ge=1)
    # Rate limits: counters in Redis, shared by every replica (unset: each process counts in memory), under
    # this prefix (lets several deployments share one Redis).
    redis_url: str | None = None
    ratelimit_key_prefix: str = "bountyboard-ratelimit"
    # How long a Redis command may take (to connect, then to answer) before the limit's outage policy applies.
    redis_timeout_seconds: float = Field(default=1.0, gt=0)
    # Every API key's requests to the agent and publisher routes, per window (like Stripe's and GitHub's).
    key_rate_limit: int = Field(default=6000, ge=1)
    key_rate_window_seconds: int = Field(default=60, ge=1)

    # Request bodies: the most bytes a route accepts; run uploads carry whole trial lists.
    max_body_bytes: int = Field(default=1024 * 1024, ge=1024)
    max_run_upload_bytes: int = Field(default=32 * 1024 * 1024, ge=1024)

    # Addresses of reverse proxies whose X-Forwarded-For / X-Forwarded-Proto are believed (comma-separated
    # IPs or networks, or "*"). None by default: the peer address is the client.
    trusted_proxies: str = ""
    # Strict-Transport-Security on answers served over HTTPS (or when base_url is https); 0 leaves it out.
    hsts_max_age_seconds: int = Field(default=365 * 86400, ge=0)
    # Browser origins, besides base_url's, whose requests /mcp accepts (comma-separated scheme://host[:port]).
    mcp_allowed_origins: str = ""
    # OAuth for /mcp (bountyboard.oauth): how long an access token lives (the client signs in again after).
    oauth_access_token_ttl_seconds: int = Field(default=3600, ge=60)
    # Client registrations (POST /register, open to anybody) per client address per hour.
    oauth_registrations_per_hour: int = Field(default=20, ge=1)
    # The largest file the MCP tool upload_file takes inline (base64 in the call; /mcp bodies grow to fit).
    mcp_upload_max_bytes: int = Field(default=512 * 1024, ge=1024)

    @property
    def effective_site_url(self) -> str:
        return (self.site_url or self.base_url).rstrip("/")

    @property
    def effective_base_url(self) -> str:
        return self.base_url.rstrip("/")

    @property
    def effective_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite+aiosqlite:///{(self.data_dir / 'bountyboard.db').resolve()}"

    @property
    def is_sqlite(self) -> bool:
        return self.effective_database_url.startswith("sqlite")

    @cached_property
    def effective_secret_key(self) -> str:
        """The server secret (keyed hashes of API keys, session signing).

        On the embedded default it is generated once and kept in the data directory, so
        restarting the service does not invalidate every key.
        """
        if self.secret_key:
            return self.secret_key.get_secret_value()
        path = self.data_dir / "secret_key"
        if not path.exists():
            self.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            # Created readable by the owner only; a process starting at the same moment reads the winner's.
            with contextlib.suppress(FileExistsError), \
                    os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as file:
                file.write(secrets.token_urlsafe(48))
        return path.read_text().strip()


@lru_cache
def get_settings() -> Settings:
    return Settings()
