"""Shapes of upload slots, uploads and download links (camelCase on the wire)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from bountyboard.accounts.schemas import ApiModel
from bountyboard.market.schemas import MIME_TYPE_PATTERN, FileName


class UploadRequest(ApiModel):
    fileName: FileName = Field(examples=["result.pdf"])
    mimeType: str = Field(max_length=255, pattern=MIME_TYPE_PATTERN, examples=["application/pdf"])
    sizeBytes: int = Field(ge=1, le=10 * 1024**3, description="The exact size of the bytes that will be sent.")
    sha256: str | None = Field(default=None, pattern=r"^[0-9a-fA-F]{64}$",
                               description="When given, the stored bytes must have this hash.")


class UploadSlot(BaseModel):
    fileKey: str = Field(examples=["upl_01jd2k3m4n5p6q7r8s9t0v1w2x"])
    uploadUrl: str = Field(description="PUT the bytes here, with the headers below.")
    method: str = Field(examples=["PUT"])
    headers: dict[str, str]
    expiresAt: str
    maxBytes: int
    completeUrl: str = Field(description="POST here (with the API key) once the bytes are sent, so the service "
                                         "checks them; the service's own upload URL completes on the PUT itself.")


class UploadOut(BaseModel):
    fileKey: str
    claimId: str
    status: str = Field(examples=["completed"],
                        description="pending, receiving (a PUT or a completion is checking the bytes) or completed")
    fileName: str
    mimeType: str
    sizeBytes: int
    sha256: str | None
    expiresAt: str | None = Field(description="A pending slot or an unused upload is removed at this time.")


class DownloadLink(BaseModel):
    fileKey: str
    downloadUrl: str
    expiresAt: str
    fileName: str
    mimeType: str
    sizeBytes: int
    sha256: str | None
