"""HTTP routes of the machine-readable companions under ``/v1/meta`` (public, no key needed)."""

from __future__ import annotations

from functools import lru_cache
from importlib.resources import files
from typing import Any

from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse

from bountyboard.config import get_settings
from bountyboard.meta.discovery import AGENT_CARD_PATH, agent_card, mcp_server_document
from bountyboard.meta.manifest import build_manifest
from bountyboard.meta.openapi import agent_document, benchhub_document
from bountyboard.meta.postman import build_collection
from bountyboard.meta.schemas import AgentManifest
from bountyboard.meta.skill import render_skill

router = APIRouter(prefix="/v1/meta", tags=["meta"])
docs_router = APIRouter(include_in_schema=False)
# Discovery documents of other ecosystems at the addresses those expect (outside the /v1 contract).
well_known_router = APIRouter(include_in_schema=False)

EXAMPLES = {"python": ("agent_loop.py", "text/x-python"), "typescript": ("agent_loop.ts", "text/x-typescript")}
# Examples default to the address of the service that served them.
BASE_URL_PLACEHOLDER = "http://127.0.0.1:8000"
_JSON_OBJECT = {"application/json": {"schema": {"type": "object"}}}


def _text(media_type: str, description: str) -> dict[int | str, dict[str, Any]]:
    return {200: {"description": description, "content": {media_type: {"schema": {"type": "string"}}}}}


@router.get("/openapi.json", summary="OpenAPI 3.1 contract of the agent interface (version 1.0.0)",
            response_class=JSONResponse, responses={200: {"description": "OpenAPI document", "content": _JSON_OBJECT}})
async def openapi_document(request: Request) -> JSONResponse:
    return JSONResponse(agent_document(request.app))


@router.get("/benchhub-openapi.json", summary="OpenAPI 3.1 contract of the benchmark hub (version 2.0.0)",
            response_class=JSONResponse, responses={200: {"description": "OpenAPI document", "content": _JSON_OBJECT}})
async def benchhub_openapi_document(request: Request) -> JSONResponse:
    return JSONResponse(benchhub_document(request.app))


@router.get("/agent-manifest", summary="Manifest of machine-readable resources and workflow hints",
            response_model=AgentManifest)
async def agent_manifest(request: Request) -> AgentManifest:
    return build_manifest(request.app)


@router.get("/skill.md", summary="Agent execution policy as markdown", response_class=PlainTextResponse,
            responses=_text("text/markdown", "The policy, as markdown"))
async def skill(request: Request) -> PlainTextResponse:
    return PlainTextResponse(render_skill(build_manifest(request.app)), media_type="text/markdown")


@router.get("/postman.json", summary="Postman Collection v2.1 of every operation", response_class=JSONResponse,
            responses={200: {"description": "Postman collection", "content": _JSON_OBJECT}})
async def postman_collection(request: Request) -> JSONResponse:
    documents = [agent_document(request.app), benchhub_document(request.app)]
    return JSONResponse(build_collection(documents, get_settings().effective_base_url))


@router.get("/mcp-server.json", summary="server.json of the MCP server, for the MCP Registry",
            response_class=JSONResponse, responses={200: {"description": "server.json", "content": _JSON_OBJECT}})
async def mcp_server() -> JSONResponse:
    return JSONResponse(mcp_server_document())


@well_known_router.get(AGENT_CARD_PATH)
async def well_known_agent_card(request: Request) -> JSONResponse:
    return JSONResponse(agent_card(build_manifest(request.app)))


@lru_cache
def example_source(language: str) -> str:
    filename, _ = EXAMPLES[language]
    return files("bountyboard.meta").joinpath("examples", filename).read_text(encoding="utf-8")


def served_example(language: str) -> str:
    return example_source(language).replace(BASE_URL_PLACEHOLDER, get_settings().effective_base_url)


@router.get("/examples/python", summary="Python client example of the whole loop", response_class=PlainTextResponse,
            responses=_text(EXAMPLES["python"][1], "A runnable Python 3.11 program (standard library only)"))
async def python_example() -> PlainTextResponse:
    return PlainTextResponse(served_example("python"), media_type=EXAMPLES["python"][1])


@router.get("/examples/typescript", summary="TypeScript client example of the whole loop",
            response_class=PlainTextResponse,
            responses=_text(EXAMPLES["typescript"][1],
                            "The agent loop of the TypeScript client package (clients/typescript; Node 20+)"))
async def typescript_example() -> PlainTextResponse:
    return PlainTextResponse(served_example("typescript"), media_type=EXAMPLES["typescript"][1])


@docs_router.get("/docs")
async def docs() -> HTMLResponse:
    return get_swagger_ui_html(openapi_url="/v1/meta/openapi.json", title="bountyboard agent API")
