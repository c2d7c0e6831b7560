"""Tables of the OAuth authorization server: registered clients and authorization codes not yet exchanged."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from bountyboard.clock import now
from bountyboard.crypto import OAUTH_CLIENT_SECRET, Encrypted
from bountyboard.storage.base import Base, JSONType, UTCDateTime


class OAuthClient(Base):
    """A client registered by RFC 7591 dynamic registration. Its secret is kept encrypted (the token endpoint
    compares it); the rest of its metadata as registered."""

    __tablename__ = "oauth_clients"

    client_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    client_secret: Mapped[str | None] = mapped_column(Encrypted(OAUTH_CLIENT_SECRET, 255))
    information: Mapped[dict[str, Any]] = mapped_column(JSONType)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=now)


class OAuthAuthorizationCode(Base):
    """A code the consent page issued, until the client exchanges it (once) or it expires. Only a keyed hash of
    the code is stored, as for API keys."""

    __tablename__ = "oauth_authorization_codes"

    code_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    client_id: Mapped[str] = mapped_column(ForeignKey("oauth_clients.client_id", ondelete="CASCADE"), index=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    bot_id: Mapped[str] = mapped_column(ForeignKey("bots.id", ondelete="CASCADE"))
    scopes: Mapped[list[str]] = mapped_column(JSONType)
    redirect_uri: Mapped[str] = mapped_column(String(2000))
    redirect_uri_provided_explicitly: Mapped[bool] = mapped_column(Boolean)
    code_challenge: Mapped[str] = mapped_column(String(128))
    resource: Mapped[str | None] = mapped_column(String(2000))
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
