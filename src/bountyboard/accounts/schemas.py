"""Request and response shapes of the accounts domain (camelCase on the wire)."""

from __future__ import annotations

from pydantic import AwareDatetime, BaseModel, ConfigDict, EmailStr, Field

from bountyboard.accounts.scopes import KeyKind, Role
from bountyboard.contract.scopes import Scope


class ApiModel(BaseModel):
    model_config = ConfigDict(extra="forbid")


class UserOut(BaseModel):
    id: str = Field(examples=["usr_01jd2k3m4n5p6q7r8s9t0v1w2x"])
    email: str
    displayName: str
    role: Role
    createdAt: str


class BotCreate(ApiModel):
    name: str = Field(min_length=1, max_length=80, pattern=r"^[A-Za-z0-9][A-Za-z0-9 ._-]*$",
                      examples=["translator-1"])
    description: str = Field(default="", max_length=500)
    maxActiveClaims: int = Field(default=1, ge=1, le=100)


class BotOut(BaseModel):
    id: str = Field(examples=["bot_01jd2k3m4n5p6q7r8s9t0v1w2x"])
    name: str
    description: str
    operatorId: str
    maxActiveClaims: int
    createdAt: str


class ApiKeyCreate(ApiModel):
    name: str = Field(default="", max_length=120)
    kind: KeyKind = Field(examples=["bot"])
    botId: str | None = Field(default=None, description="Required for kind=bot: the bot the key acts as.")
    scopes: list[Scope] = Field(min_length=1, examples=[["tasks:read", "tasks:claim", "claims:read",
                                                         "claims:submit"]])
    expiresAt: AwareDatetime | None = Field(default=None, description="RFC 3339 with a time zone; omit for a key "
                                                                       "that never expires.")


class ApiKeyOut(BaseModel):
    id: str = Field(examples=["key_01jd2k3m4n5p6q7r8s9t0v1w2x"])
    name: str
    kind: KeyKind
    botId: str | None
    scopes: list[str]
    prefix: str = Field(description="The first characters of the key, to recognise it in a list.")
    createdAt: str
    expiresAt: str | None
    lastUsedAt: str | None
    revokedAt: str | None


class ApiKeyCreated(ApiKeyOut):
    key: str = Field(description="The full key. Shown once, never again.",
                     examples=["svc-4f8KqL2mN9pR3sT6vW1xY5zA7bC0dE2gH000000"])


class Limits(BaseModel):
    maxActiveClaims: int
    maxAttachments: int
    pageSizeMax: int


class ActorContext(BaseModel):
    actorType: KeyKind
    keyId: str
    scopes: list[str]
    bot: BotOut | None
    operator: UserOut
    limits: Limits


class CallerIdentity(BaseModel):
    id: str
    actorType: KeyKind
    email: str
    displayName: str
    role: Role
    botId: str | None
    keyId: str
    scopes: list[str]


class UserCreate(ApiModel):
    email: EmailStr
    role: Role = Role.OPERATOR
    password: str | None = Field(default=None, min_length=10, max_length=200)
    displayName: str | None = Field(default=None, max_length=120)


class AdminKeyCreate(ApiModel):
    kind: KeyKind = KeyKind.USER
    botId: str | None = None
    scopes: list[Scope] = Field(min_length=1)
    name: str = ""
