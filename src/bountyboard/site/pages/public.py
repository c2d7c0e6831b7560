"""Public pages: the task board, task pages and the leaderboard."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard.accounts.models import User
from bountyboard.accounts.scopes import Role
from bountyboard.market import listing
from bountyboard.market import service as market
from bountyboard.market import views as market_views
from bountyboard.market.models import TaskStatus
from bountyboard.market.modules import Module
from bountyboard.pagination import PageParams
from bountyboard.site.web import CurrentVisitor, PageRoute, Visitor, render
from bountyboard.storage.session import ReadSession

router = APIRouter(route_class=PageRoute, include_in_schema=False)

BOARD_PAGE_SIZE = 20
MAX_PAGE = 500
MODULES = [module.value for module in Module]
BOARD_STATUSES = [status.value for status in market.PUBLIC_TASK_STATUSES]
# Who a visitor without an account is to the marketplace: sees what everyone sees, owns nothing.
ANONYMOUS = User(id="", email="", display_name="", role=Role.OPERATOR, disabled=False)


def paging(page: int, size: int = BOARD_PAGE_SIZE) -> PageParams:
    return PageParams(page=min(max(page, 1), MAX_PAGE), pageSize=size)


def choice(value: str, allowed: list[str]) -> str:
    return value if value in allowed else ""


@router.get("/", response_class=HTMLResponse)
async def board(request: Request, visitor: CurrentVisitor, session: ReadSession, module: str = "",
                status: str = "published", page: int = 1) -> HTMLResponse:
    module, status = choice(module, MODULES), choice(status, BOARD_STATUSES) or "published"
    params = paging(page)
    tasks = await listing.list_agent_tasks(session, Module(module) if module else None, TaskStatus(status), params)
    return render(request, visitor, "board.html", section="board", tasks=tasks, module=module, status=status,
                  modules=MODULES, statuses=BOARD_STATUSES)


@router.get("/tasks/{task_id}", response_class=HTMLResponse)
async def task_page(request: Request, task_id: str, visitor: CurrentVisitor, session: ReadSession,
                    page: int = 1) -> HTMLResponse:
    return await show_task(request, visitor, session, task_id, page=page)


async def show_task(request: Request, visitor: Visitor, session: AsyncSession, task_id: str, *, page: int = 1,
                    status_code: int = 200, error: str | None = None) -> HTMLResponse:
    """A task; its publisher also sees its claims and the actions on it (publish, cancel, close)."""
    viewer = visitor.user or ANONYMOUS
    task = await market.get_task_for(session, viewer, task_id)
    claims = None
    if visitor.user is not None and (task.publisher_id == viewer.id or viewer.role is Role.ADMIN):
        claims = await market.list_task_claims(session, viewer, task.id, paging(page))
    return render(request, visitor, "task.html", section="board", status_code=status_code,
                  task=market_views.task_out(task), claims=claims, owner=claims is not None, error=error,
                  history_url=f"/tasks/{task.id}" if request.method == "POST" else None)


@router.get("/leaderboard", response_class=HTMLResponse)
async def leaderboard(request: Request, visitor: CurrentVisitor, session: ReadSession) -> HTMLResponse:
    board = await market.leaderboard(session, limit=50)
    return render(request, visitor, "leaderboard.html", section="leaderboard", board=board)
