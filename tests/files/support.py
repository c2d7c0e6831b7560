"""Helpers of the file tests: uploading over real HTTP, and looking into the store and the table."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import httpx

from tests.files.samples import sha256
from tests.support.server import LiveServer, psycopg_dsn


@dataclass
class FileServer:
    live: LiveServer
    storage: str  # "local" or "s3"
    bucket: str
    prefix: str
    endpoint: str | None

    @property
    def base_url(self) -> str:
        return self.live.base_url

    def stored(self) -> set[str]:
        """Every object key in this server's store (relative to its root)."""
        if self.storage == "local":
            root = self.live.data_dir / "files"
            return {str(path.relative_to(root)) for path in root.rglob("*") if path.is_file()}
        s3 = boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id="testing",
                          aws_secret_access_key="testing", region_name="us-east-1")
        keys: set[str] = set()
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=self.prefix + "/"):
            keys |= {item["Key"][len(self.prefix) + 1:] for item in page.get("Contents", [])}
        return keys

    def upload_rows(self, claim_id: str) -> list[dict[str, Any]]:
        query = "SELECT id, status, mime_type, size_bytes, sha256, attached_at FROM uploads WHERE claim_id = "
        if self.live.backend == "sqlite":
            connection = sqlite3.connect(f"file:{Path(self.live.db_url.split(':///', 1)[1])}?mode=ro", uri=True)
            try:
                cursor = connection.execute(query + "?", (claim_id,))
                return [dict(zip([c[0] for c in cursor.description], row, strict=True)) for row in cursor]
            finally:
                connection.close()
        import psycopg2

        pg = psycopg2.connect(psycopg_dsn(self.live.db_url))
        try:
            with pg.cursor() as cursor:
                cursor.execute(query + "%s", (claim_id,))
                names = [c[0] for c in cursor.description]
                return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        finally:
            pg.close()


def open_slot(http: httpx.Client, claim_id: str, name: str, mime: str, data: bytes, *,
              with_hash: bool = True) -> httpx.Response:
    body: dict[str, Any] = {"fileName": name, "mimeType": mime, "sizeBytes": len(data)}
    if with_hash:
        body["sha256"] = sha256(data)
    return http.post(f"/v1/agent/claims/{claim_id}/uploads", json=body)


def ok_slot(response: httpx.Response) -> dict[str, Any]:
    """The slot of a 201 answer, checked for its shape."""
    assert response.status_code == 201, response.text
    slot: dict[str, Any] = response.json()
    assert set(slot) == {"fileKey", "uploadUrl", "method", "headers", "expiresAt", "maxBytes", "completeUrl"}
    assert slot["method"] == "PUT"
    return slot


def send(http: httpx.Client, slot: dict[str, Any], data: bytes) -> httpx.Response:
    """PUT the bytes where the slot says, then (as every client does) ask the service to complete it."""
    put = httpx.put(slot["uploadUrl"], content=data, headers=slot["headers"], timeout=30)
    if put.status_code >= 300:
        return put
    return http.post(slot["completeUrl"])


def upload(http: httpx.Client, claim_id: str, name: str, mime: str, data: bytes) -> dict[str, Any]:
    slot = open_slot(http, claim_id, name, mime, data)
    assert slot.status_code == 201, slot.text
    done = send(http, slot.json(), data)
    assert done.status_code == 200, done.text
    result: dict[str, Any] = done.json()
    return result
