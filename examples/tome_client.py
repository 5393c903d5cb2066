"""A Python client of Tome's REST API, standard library only (Python 3.8+).

Run the demo against a running server (`bun run start` prints a key at its first start):

    TOME_URL=http://localhost:8080 TOME_API_KEY=wk_... python3 examples/tome_client.py "albedo"

Or use the class:

    from tome_client import TomeClient, TomeError
    tome = TomeClient("http://localhost:8080", "wk_...")
    for hit in tome.search("albedo", limit=3)["hits"]:
        print(hit["title"], hit["url"], hit["license"]["name"])

Every non-2xx answer raises TomeError carrying the API's error body ({"error", "message",
"details"?}, decision D1). A 429 (rate limit) or 503 (PDF renderer busy) is retried after its
Retry-After, a bounded number of times and only when the wait is short; otherwise it raises too.
"""

import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

__all__ = ["TomeClient", "TomeError", "TomeConnectionError"]


class TomeError(Exception):
    """A non-2xx answer. `body` is the API's error body; `code` its `error` field."""

    def __init__(self, status, body, headers=None):
        self.status = status
        self.body = body
        self.code = body.get("error")
        self.api_message = body.get("message", "")
        self.details = body.get("details")
        self.headers = headers if headers is not None else {}  # an HTTPMessage: case-insensitive get
        self.request_id = self.headers.get("X-Request-Id")
        self.retry_after = _seconds(self.headers.get("Retry-After"))
        super().__init__(f"{'' if status is None else f'{status} '}{self.code}: {self.api_message}")


class TomeConnectionError(TomeError):
    """The server could not be reached or did not answer in time."""

    def __init__(self, url, reason):
        message = f"cannot reach {url}: {reason}. Is the server running there? Set TOME_URL to its address."
        super().__init__(None, {"error": "connection_failed", "message": message})


def _seconds(value):
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _query_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class TomeClient:
    """Tome's read-only API (api.md section 4). Methods return the decoded JSON responses."""

    def __init__(self, base_url=None, api_key=None, *, timeout=30.0, max_retries=3, max_retry_wait=10, on_retry=None):
        """
        base_url and api_key default to the environment's TOME_URL and TOME_API_KEY.
        max_retries: how many times a 429/503 is retried; max_retry_wait: the longest Retry-After
        (seconds) worth waiting for (a spent monthly quota says "retry next month": that raises).
        on_retry(error, wait_seconds) is called before each wait, for logging.
        """
        base_url = base_url or os.environ.get("TOME_URL")
        api_key = api_key if api_key is not None else os.environ.get("TOME_API_KEY")
        if not base_url:
            raise ValueError("no server address: pass base_url or set TOME_URL")
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_retry_wait = max_retry_wait
        self.on_retry = on_retry

    # ---- the endpoints ----

    def search(self, q, *, limit=None, offset=None, page_id=None, crop_length=None, highlight=None):
        return self._json("/v1/search", q=q, limit=limit, offset=offset, page_id=page_id, crop_length=crop_length, highlight=highlight)

    def page(self, page_id, *, format=None, max_chunks=None, offset=None):
        return self._json(f"/v1/page/{int(page_id)}", format=format, max_chunks=max_chunks, offset=offset)

    def chunk(self, chunk_id):
        return self._json("/v1/chunk/" + urllib.parse.quote(str(chunk_id), safe=""))

    def changes(self, *, since=None, limit=None, offset=None):
        return self._json("/v1/changes", since=since, limit=limit, offset=offset)

    def lucky(self, q, *, format=None):
        return self._json("/v1/lucky", q=q, format=format)

    def license(self):
        return self._json("/v1/license")

    def meta(self):
        return self._json("/v1/meta")

    def pdf(self, page_id, path):
        """Renders a page as a PDF (10 credits) into the file `path`; returns the server's file name."""
        body, headers = self._request(f"/v1/pdf/{int(page_id)}", {})
        with open(path, "wb") as out:
            out.write(body)
        disposition = headers.get("Content-Disposition", "")
        return disposition.split('filename="', 1)[1].split('"', 1)[0] if 'filename="' in disposition else None

    # ---- the transport ----

    def _json(self, path, **params):
        body, _ = self._request(path, params)
        return json.loads(body)

    def _request(self, path, params):
        query = urllib.parse.urlencode({k: _query_value(v) for k, v in params.items() if v is not None})
        url = self.base_url + path + ("?" + query if query else "")
        headers = {"Accept": "application/json, application/pdf", "User-Agent": "tome-python-example/1"}
        if self.api_key:
            headers["X-API-Key"] = self.api_key
        attempt = 0
        while True:
            try:
                with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=self.timeout) as res:
                    return res.read(), res.headers
            except urllib.error.HTTPError as e:
                error = TomeError(e.code, _error_body(e), e.headers)
            except (urllib.error.URLError, TimeoutError, ConnectionError) as e:
                raise TomeConnectionError(self.base_url, getattr(e, "reason", e)) from None
            wait = error.retry_after
            retryable = error.status in (429, 503) and wait is not None and wait <= self.max_retry_wait
            if not retryable or attempt >= self.max_retries:
                raise error
            attempt += 1
            if self.on_retry:
                self.on_retry(error, wait)
            time.sleep(wait)


def _error_body(e):
    """The D1 body; a proxy's HTML page or an empty body becomes one too."""
    raw = e.read()
    try:
        body = json.loads(raw)
        if isinstance(body, dict) and "error" in body:
            return body
    except ValueError:
        pass
    text = raw.decode("utf-8", "replace").strip()[:200]
    return {"error": f"http_{e.code}", "message": text or (e.reason or "no body")}


def _headline(query, total, shown):
    if total == 0:
        return f'No page matches "{query}".'
    head = f'1 page matches "{query}"' if total == 1 else f'{total} pages match "{query}"'
    return f"{head}; the top {shown}:" if shown < total else f"{head}:"


def _demo(query):
    tome = TomeClient()
    result = tome.search(query, limit=5)
    print(_headline(query, result["estimatedTotalHits"], len(result["hits"])))
    for n, hit in enumerate(result["hits"], 1):
        section = f' / {hit["section"]}' if hit["section"] else ""
        print(f'{n}. {hit["title"]}{section}')
        print(f'   {hit["url"]} ({hit["license"]["name"]}, {hit["license"]["url"]})')
        print(f'   revision: {hit["source"]["permalink"]}')
        text = hit["text"].replace(chr(10), " ")
        print(f'   {text[:160]}…' if len(text) > 160 else f"   {text}")
    print()
    print(result["attribution"]["attribution_notice"])


if __name__ == "__main__":
    try:
        # No argument: a demo query. An empty one is sent as given, and the API says what is wrong with it.
        _demo(" ".join(sys.argv[1:]) if len(sys.argv) > 1 else "albedo")
    except (TomeError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(1)
