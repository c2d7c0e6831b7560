"""oauth: registered clients, authorization codes, and the client an API key was issued to

The MCP endpoint's authorization server (bountyboard.oauth) keeps its registered clients (the secret
encrypted) and its authorization codes (a keyed hash) until they are exchanged; the access token it issues
is an API key, marked with the client it went to.

Revision ID: 0014_oauth_authorization_server
Revises: 0009_accounts_version
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0014_oauth_authorization_server"
down_revision = "0009_accounts_version"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "oauth_clients",
        sa.Column("client_id", sa.String(length=64), nullable=False),
        sa.Column("client_secret", sa.String(length=255), nullable=True),
        sa.Column("information", JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("client_id", name=op.f("pk_oauth_clients")),
    )
    op.create_table(
        "oauth_authorization_codes",
        sa.Column("code_hash", sa.String(length=64), nullable=False),
        sa.Column("client_id", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.String(length=40), nullable=False),
        sa.Column("bot_id", sa.String(length=40), nullable=False),
        sa.Column("scopes", JSON, nullable=False),
        sa.Column("redirect_uri", sa.String(length=2000), nullable=False),
        sa.Column("redirect_uri_provided_explicitly", sa.Boolean(), nullable=False),
        sa.Column("code_challenge", sa.String(length=128), nullable=False),
        sa.Column("resource", sa.String(length=2000), nullable=True),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["client_id"], ["oauth_clients.client_id"],
                                name=op.f("fk_oauth_authorization_codes_client_id_oauth_clients"), ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_oauth_authorization_codes_user_id_users"),
                                ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["bot_id"], ["bots.id"], name=op.f("fk_oauth_authorization_codes_bot_id_bots"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("code_hash", name=op.f("pk_oauth_authorization_codes")),
    )
    with op.batch_alter_table("oauth_authorization_codes", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_oauth_authorization_codes_client_id"), ["client_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_oauth_authorization_codes_expires_at"), ["expires_at"], unique=False)
    with op.batch_alter_table("api_keys", schema=None) as batch_op:
        batch_op.add_column(sa.Column("oauth_client_id", sa.String(length=64), nullable=True))
        batch_op.create_index(batch_op.f("ix_api_keys_oauth_client_id"), ["oauth_client_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_api_keys_oauth_client_id"), table_name="api_keys")
    # A plain DROP COLUMN (SQLite 3.35+ has it), not batch mode: rebuilding api_keys on SQLite would drop
    # the triggers 0009_accounts_version put on it, and revoked keys would then stay in other processes' caches.
    op.drop_column("api_keys", "oauth_client_id")
    with op.batch_alter_table("oauth_authorization_codes", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_oauth_authorization_codes_expires_at"))
        batch_op.drop_index(batch_op.f("ix_oauth_authorization_codes_client_id"))
    op.drop_table("oauth_authorization_codes")
    op.drop_table("oauth_clients")
