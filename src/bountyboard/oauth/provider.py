"""The state behind the SDK's authorization-server routes: clients, consent requests, codes and tokens.

The SDK's handlers check what the protocol asks (client id, redirect URI exact-match against the registered
ones, ``code_challenge_method=S256``, scope within the client's, the PKCE verifier and the redirect URI at the
token endpoint, the client secret); this provider stores and issues. The flow:

1. ``/authorize`` (SDK) calls :meth:`Provider.authorize`, which sends the browser to the consent page with the
   checked request sealed in its URL (:func:`seal_request`: encrypted and authenticated under the server
   secret, valid for :data:`CONSENT_LIFETIME`), so the page needs no table and cannot be fed another request.
2. The signed-in operator picks a bot and scopes (``bountyboard.site.pages.oauth``); :func:`issue_code` keeps
   a keyed hash of a new code and the page redirects to the client's redirect URI with it and ``state``.
3. ``/token`` (SDK) verifies PKCE, then :meth:`Provider.exchange_authorization_code` deletes the code (a code
   is good once) and issues an API key of that bot with those scopes, expiring after
   ``oauth_access_token_ttl_seconds``: the access token. No refresh token is issued; the client runs the
   flow again (the operator's browser session usually makes that one click).
"""

from __future__ import annotations

import secrets
from datetime import timedelta

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    OAuthAuthorizationServerProvider,
    RefreshToken,
    TokenError,
)
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import BaseModel
from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard.accounts import service as accounts
from bountyboard.accounts.keys import hash_key
from bountyboard.accounts.models import ApiKey, User
from bountyboard.accounts.scopes import KeyKind
from bountyboard.clock import now
from bountyboard.config import get_settings
from bountyboard.crypto import OAUTH_AUTHORIZATION_REQUEST, InvalidToken, decrypt, encrypt
from bountyboard.errors import Problem
from bountyboard.oauth.models import OAuthAuthorizationCode, OAuthClient
from bountyboard.storage.engine import get_database

CONSENT_PATH = "/oauth/consent"
CONSENT_LIFETIME = timedelta(minutes=10)
CODE_LIFETIME = timedelta(minutes=5)


def _hash(secret: str) -> str:
    return hash_key(secret, get_settings().effective_secret_key)


class PendingAuthorization(BaseModel):
    """An authorization request the SDK's handler has checked, waiting for the operator's consent."""

    client_id: str
    params: AuthorizationParams


def seal_request(pending: PendingAuthorization) -> str:
    return encrypt(OAUTH_AUTHORIZATION_REQUEST, pending.model_dump_json().encode()).decode("ascii")


def open_request(sealed: str) -> PendingAuthorization | None:
    """The request sealed by :func:`seal_request` within :data:`CONSENT_LIFETIME`; None otherwise."""
    try:
        data = decrypt(OAUTH_AUTHORIZATION_REQUEST, sealed.encode("ascii"),
                       ttl=int(CONSENT_LIFETIME.total_seconds()))
        return PendingAuthorization.model_validate_json(data)
    except (InvalidToken, UnicodeEncodeError, ValueError):
        return None


async def issue_code(session: AsyncSession, pending: PendingAuthorization, user: User, bot_id: str,
                     scopes: list[str]) -> str:
    """A new authorization code for ``pending``, granted by ``user`` for ``bot_id`` with ``scopes``."""
    code = secrets.token_urlsafe(32)  # 256 bits
    params = pending.params
    session.add(OAuthAuthorizationCode(
        code_hash=_hash(code), client_id=pending.client_id, user_id=user.id, bot_id=bot_id, scopes=scopes,
        redirect_uri=str(params.redirect_uri), redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
        code_challenge=params.code_challenge, resource=params.resource, expires_at=now() + CODE_LIFETIME))
    await session.flush()
    return code


class GrantedCode(AuthorizationCode):
    """A stored code, with what the operator granted."""

    code_hash: str
    user_id: str
    bot_id: str


async def load_client(session: AsyncSession, client_id: str) -> OAuthClientInformationFull | None:
    row = await session.get(OAuthClient, client_id[:64])
    if row is None:
        return None
    return OAuthClientInformationFull.model_validate({**row.information, "client_secret": row.client_secret})


class Provider(OAuthAuthorizationServerProvider[GrantedCode, RefreshToken, AccessToken]):
    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        async with get_database().sessionmaker() as session:
            return await load_client(session, client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        information = client_info.model_dump(mode="json", exclude={"client_secret"}, exclude_none=True)
        async with get_database().sessionmaker() as session:
            session.add(OAuthClient(client_id=client_info.client_id, client_secret=client_info.client_secret,
                                    information=information, created_at=now()))
            await session.commit()

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        sealed = seal_request(PendingAuthorization(client_id=str(client.client_id), params=params))
        return f"{get_settings().effective_site_url}{CONSENT_PATH}?request={sealed}"

    async def load_authorization_code(self, client: OAuthClientInformationFull,
                                      authorization_code: str) -> GrantedCode | None:
        code_hash = _hash(authorization_code)
        async with get_database().sessionmaker() as session:
            row = await session.get(OAuthAuthorizationCode, code_hash)
        if row is None or row.client_id != client.client_id:
            return None
        return GrantedCode(
            code=authorization_code, code_hash=code_hash, scopes=list(row.scopes), client_id=row.client_id,
            expires_at=row.expires_at.timestamp(), code_challenge=row.code_challenge,
            redirect_uri=row.redirect_uri, redirect_uri_provided_explicitly=row.redirect_uri_provided_explicitly,
            resource=row.resource, subject=row.user_id, user_id=row.user_id, bot_id=row.bot_id)

    async def exchange_authorization_code(self, client: OAuthClientInformationFull,
                                          authorization_code: GrantedCode) -> OAuthToken:
        ttl = get_settings().oauth_access_token_ttl_seconds
        async with get_database().sessionmaker() as session:
            # Deleted first, in the key's transaction: of two exchanges of one code, only one deletes it.
            spent = await session.execute(delete(OAuthAuthorizationCode).where(
                OAuthAuthorizationCode.code_hash == authorization_code.code_hash))
            if getattr(spent, "rowcount", 0) != 1:
                raise TokenError("invalid_grant", "The authorization code was already used.")
            user = await session.get(User, authorization_code.user_id)
            if user is None or user.disabled:
                raise TokenError("invalid_grant", "The account that granted this code is disabled.")
            name = f"OAuth: {client.client_name or client.client_id}"[:120]
            try:
                issued = await accounts.issue_key(
                    session, user, KeyKind.BOT, authorization_code.scopes, bot_id=authorization_code.bot_id,
                    name=name, expires_at=now() + timedelta(seconds=ttl), oauth_client_id=client.client_id)
            except Problem as refused:  # the grant no longer holds (the operator's role changed, say)
                raise TokenError("invalid_grant", refused.detail) from refused
            await session.commit()  # each call from the SDK's handlers is its own unit of work
        return OAuthToken(access_token=issued.key, expires_in=ttl, scope=" ".join(issued.scopes))

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        return None  # none are issued

    async def exchange_refresh_token(self, client: OAuthClientInformationFull, refresh_token: RefreshToken,
                                     scopes: list[str]) -> OAuthToken:
        raise TokenError("invalid_grant", "This server issues no refresh tokens; authorize again.")

    async def load_access_token(self, token: str) -> AccessToken | None:
        """The live access token ``token`` (for RFC 7009 revocation by its client)."""
        async with get_database().sessionmaker() as session:
            key = (await session.execute(select(ApiKey).where(ApiKey.key_hash == _hash(token)))).scalar_one_or_none()
        if key is None or key.oauth_client_id is None or key.revoked_at is not None:
            return None
        if key.expires_at is not None and key.expires_at <= now():
            return None
        return AccessToken(token=token, client_id=key.oauth_client_id, scopes=list(key.scopes),
                           expires_at=int(key.expires_at.timestamp()) if key.expires_at else None, subject=key.user_id)

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        async with get_database().sessionmaker() as session:
            key = (await session.execute(select(ApiKey).where(ApiKey.key_hash == _hash(token.token)))).scalar_one()
            await accounts.revoke_key(session, key.user_id, key.id)
            await session.commit()
