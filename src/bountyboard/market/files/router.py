"""HTTP routes of files: upload slots for claim holders, the service's own upload URL, download links."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse

from bountyboard.accounts.auth import Actor, require, require_optional
from bountyboard.contract.scopes import Scope
from bountyboard.errors import problem_responses
from bountyboard.market.files import downloads, links, service
from bountyboard.market.files.schemas import DownloadLink, UploadOut, UploadRequest, UploadSlot
from bountyboard.storage.session import ReadSession, StagedSession, WriteSession

Expires = Annotated[int, Query(description="When the link stops working (Unix seconds).")]
Signature = Annotated[str, Query(pattern=links.SIGNATURE_PATTERN,
                                  description="The service's signature of the link (64 hex digits).")]

router = APIRouter(prefix="/v1", tags=["files"], responses=problem_responses(404, 422))


@router.post("/agent/claims/{id}/uploads", summary="Open an upload slot for a file of an active claim",
             status_code=201, response_model=UploadSlot, responses=problem_responses(401, 403, 409, 429))
async def create_upload(id: str, body: UploadRequest, actor: Annotated[Actor, require(Scope.CLAIMS_SUBMIT)],
                        session: WriteSession) -> UploadSlot:
    return await service.create_slot(session, actor, id, body)


@router.post("/agent/claims/{id}/uploads/{fileKey}/complete", summary="Check the bytes sent to a presigned URL",
             response_model=UploadOut, responses=problem_responses(401, 403, 409))
async def complete_upload(id: str, fileKey: str, actor: Annotated[Actor, require(Scope.CLAIMS_SUBMIT)],
                          session: StagedSession) -> UploadOut:
    return await service.complete(session, actor, id, fileKey)


@router.put("/uploads/{fileKey}", summary="Send a file's bytes to the service's own upload URL",
            response_model=UploadOut, responses=problem_responses(400, 409, 410, 413),
            openapi_extra={"requestBody": {"required": True, "content": {
                "application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}}})
async def put_upload(fileKey: str, expires: Expires, signature: Signature, request: Request,
                     session: StagedSession) -> UploadOut:
    return await service.receive(session, fileKey, expires, signature, request.stream())


@router.get("/files/{fileKey}/link", summary="A short-lived download link to a submitted file",
            response_model=DownloadLink, responses=problem_responses(401, 403))
async def file_link(fileKey: str, session: ReadSession,
                    actor: Annotated[Actor | None, require_optional()]) -> DownloadLink:
    """For the claim's holder with `claims:read`; once the file is attached to a submission, for whoever may
    review the task (its publisher, reviewers, admins) with `claims:review` or `claims:read`. Anybody
    else gets 404, as for a file that does not exist."""
    return await downloads.download_link(session, actor, fileKey)


@router.get("/files/{fileKey}/content", summary="A file's bytes, through a signed download link",
            response_class=StreamingResponse, responses={200: {"content": {"application/octet-stream": {}}},
                                                         **problem_responses(410)})
async def file_content(fileKey: str, expires: Expires, signature: Signature, session: ReadSession) -> StreamingResponse:
    return await downloads.serve(session, fileKey, expires, signature)
