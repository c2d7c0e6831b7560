"""Real files made in the test: a PNG (zlib and struct), a minimal valid PDF, a WAV (the wave module),
and an SVG and an HTML page that carry script."""

from __future__ import annotations

import hashlib
import io
import struct
import wave
import zlib


def png(width: int = 4, height: int = 3) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + bytes([200, 30, 30]) * width for _ in range(height))  # red, filter 0
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def pdf(text: str = "Hello") -> bytes:
    stream = f"BT /F1 12 Tf 20 50 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(f"{number} 0 obj\n".encode() + body + b"\nendobj\n")
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    for offset in offsets:
        out.write(f"{offset:010d} 00000 n \n".encode())
    out.write(f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode())
    return out.getvalue()


def wav(seconds: float = 0.2, rate: int = 8000) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as audio:
        audio.setnchannels(1)
        audio.setsampwidth(2)
        audio.setframerate(rate)
        audio.writeframes(b"".join(struct.pack("<h", (i * 300) % 20000 - 10000) for i in range(int(rate * seconds))))
    return out.getvalue()


# If either ran, it would mark its own document and, in the site's origin, the page that opened it.
_SCRIPT = b"document.documentElement.setAttribute('data-ran','1');try{opener.pwned=1}catch(e){}"
SVG_WITH_SCRIPT = (b'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>' + _SCRIPT
                   + b'</script><rect width="10" height="10"/></svg>')
HTML_WITH_SCRIPT = b"<!doctype html><html><body><h1>Result</h1><script>" + _SCRIPT + b"</script></body></html>"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
