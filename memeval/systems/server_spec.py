"""What the reference server is configured with and what it promises: the routes fault injection can
target, :class:`Faults`, :class:`Limits` and the OpenAPI document served at ``/openapi.json``.

>>> Limits().max_body_bytes == 16 * 1024 * 1024 and "query" in ROUTES
True
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Faults", "Limits", "ROUTES", "OPENAPI", "OPEN_PATHS"]

ROUTES = ("reset", "sessions", "query")


@dataclass(frozen=True)
class Faults:
    delay_ms: float = 0.0  # added to every /query (server-side service time)
    error_rate: float = 0.0  # share of requests answered 500 (work not done)
    drop_rate: float = 0.0  # share of requests whose connection is closed before the work
    stall_rate: float = 0.0  # share of requests that sleep stall_ms before the work
    stall_ms: float = 2000.0
    seed: int = 0
    drop_after_rate: float = 0.0  # share of requests whose reply is dropped after the work is done
    routes: tuple[str, ...] = ("query",)  # which of ROUTES the rates apply to


@dataclass(frozen=True)
class Limits:
    max_body_bytes: int = 16 * 1024 * 1024  # larger bodies: 413, connection closed, body never read
    header_timeout_s: float = 10.0  # total time for the request line and headers, from the first byte
    body_timeout_s: float = 30.0  # total time for the body
    idle_timeout_s: float = 120.0  # keep-alive connection idle between requests
    backlog: int = 1024  # listen backlog (bursts of new connections)


_SESSION = {
    "type": "object",
    "required": ["session_id", "date", "turns"],
    "properties": {
        "session_id": {"type": ["integer", "string"]},
        "date": {"type": "string"},
        "turns": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["turn_id", "speaker", "text", "date"],
                "properties": {
                    "turn_id": {"type": "integer"},
                    "session_id": {"type": ["integer", "string"]},
                    "speaker": {"type": "string"},
                    "text": {"type": "string"},
                    "date": {"type": "string"},
                    "image": {
                        "type": "string",
                        "description": "a path inside the bench folder, or the bytes as a "
                        "data:image/...;base64, URL (memeval run --http-images inline)",
                    },
                    "image_no": {"type": "integer"},
                },
            },
        },
    },
}
_MEMORY = {
    "oneOf": [
        {"type": "string"},
        {
            "type": "object",
            "required": ["text"],
            "properties": {
                "text": {"type": "string"},
                "timestamp": {"type": "string"},
                "speaker": {"type": "string"},
                "image": {
                    "type": "string",
                    "description": "a path inside the bench folder or a data:image/...;base64, URL",
                },
            },
        },
    ]
}
_ERROR = {
    "description": "error",
    "content": {"application/json": {"schema": {"type": "object", "properties": {"error": {"type": "string"}}}}},
}
_GENERATION_PARAM = {
    "name": "Memory-Generation",
    "in": "header",
    "required": False,
    "schema": {"type": "string", "maxLength": 255},
    "description": "the generation POST /reset returned: a request naming a generation that is no longer "
    "current is refused (409) and never applied; memeval sends it whenever the server returned one",
}
_STALE = {
    "description": "the generation named is no longer current (the memory was reset since): nothing was done",
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "properties": {"error": {"type": "string"}, "generation": {"type": "string"}},
            }
        }
    },
}
_HELD = {
    "type": "object",
    "properties": {
        "generation": {"type": "string", "description": "the current generation"},
        "sessions": {"type": "integer", "description": "sessions stored in it (a repeated key counts once)"},
        "digest": {
            "type": "string",
            "description": "'sha256:' + SHA-256 of the sorted hex SHA-256 digests of the stored POST /sessions "
            "bodies, one per line (memeval.systems.fencing.haystack_digest)",
        },
    },
}
_LIMIT_RESPONSES = {
    "400": {**_ERROR, "description": "body is not JSON, or Content-Length is not a non-negative integer"},
    "401": {**_ERROR, "description": "missing or wrong bearer token (when the server was started with one)"},
    "411": {**_ERROR, "description": "no Content-Length (chunked bodies are not accepted)"},
    "413": {**_ERROR, "description": "body above the server's limit (memeval serve: --max-body-bytes)"},
}
OPENAPI = {
    "openapi": "3.1.0",
    "info": {
        "title": "memeval memory protocol",
        "version": "1",
        "description": (
            "What memeval's HTTP adapter speaks. Sessions arrive in chronological order. Every POST /sessions "
            "carries an Idempotency-Key header (a digest of the bench's content hash, the haystack and the "
            "session id): a server must treat a repeated key as a no-op that returns the first reply, and "
            'forget its keys on POST /reset. Haystacks are fenced: POST /reset returns {"generation": G}; '
            "every /sessions and /query carries G in the Memory-Generation header; a request for a generation "
            "that is no longer current is refused with 409 and never applied (checked when its work would run). "
            "A /reset carries an Idempotency-Key of its own (the same on its retries): a key already applied is "
            "a no-op returning the same generation, so a late attempt cannot empty the memory mid-haystack. "
            "After ingest the client compares GET /stats?generation=G (sessions stored and their digest) with "
            "what it sent before the first question. Optional: GET /memories lists what the generation stores (for "
            "failure attribution); a server without it answers 501 or 404. A server that returns no generation is unfenced: the "
            "client then checks the session count only. The client gives every request a total deadline (connect + send "
            "+ receive) and caps the reply size; a /query reply that breaks the schema is an error, not a "
            "score. The reference server (memeval serve) limits the request body (default 16 MiB; 413 "
            "above), gives the request line and headers 10 s and the body 30 s in total, closes keep-alive "
            "connections idle for 120 s, listens with a backlog of 1024, and with --token-env NAME requires "
            "'Authorization: Bearer <token>' on every route but /health and /openapi.json."
        ),
    },
    "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
    "paths": {
        "/reset": {
            "post": {
                "summary": "Forget everything (stored sessions and idempotency keys); start a new generation",
                "security": [{"bearer": []}, {}],
                "parameters": [
                    {
                        "name": "Idempotency-Key",
                        "in": "header",
                        "required": False,
                        "schema": {"type": "string", "maxLength": 255},
                        "description": "one per reset, the same on its retries: a key already applied is a "
                        "no-op returning the generation it started (kept across resets)",
                    }
                ],
                "responses": {
                    "200": {
                        "description": "reset: the new generation",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "required": ["generation"],
                                    "properties": {"generation": {"type": "string"}},
                                }
                            }
                        },
                    },
                    "204": {"description": "reset, unfenced (a server before generations)"},
                    **_LIMIT_RESPONSES,
                },
            }
        },
        "/sessions": {
            "post": {
                "summary": "Store one session (a repeated Idempotency-Key is a no-op)",
                "security": [{"bearer": []}, {}],
                "parameters": [
                    {
                        "name": "Idempotency-Key",
                        "in": "header",
                        "required": False,
                        "schema": {"type": "string", "maxLength": 255},
                        "description": "digest of (bench content hash, haystack, session id); memeval always sends it",
                    },
                    _GENERATION_PARAM,
                ],
                "requestBody": {"required": True, "content": {"application/json": {"schema": _SESSION}}},
                "responses": {
                    "200": {
                        "description": "stored (or a repeat: the first reply)",
                        "content": {
                            "application/json": {
                                "schema": {"type": "object", "properties": {"stored": {"type": "integer"}}}
                            }
                        },
                    },
                    "409": _STALE,
                    "422": {**_ERROR, "description": "key reused with another session"},
                    **_LIMIT_RESPONSES,
                },
            }
        },
        "/query": {
            "post": {
                "summary": "What the system remembers for a question",
                "security": [{"bearer": []}, {}],
                "parameters": [_GENERATION_PARAM],
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["question"],
                                "properties": {
                                    "question": {"type": "string"},
                                    "asked_at": {"type": ["string", "null"]},
                                },
                            }
                        }
                    },
                },
                "responses": {
                    "200": {
                        "description": "memories",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "required": ["memories"],
                                    "properties": {
                                        "memories": {
                                            "type": "array",
                                            "items": _MEMORY,
                                        },
                                        "turn_ids": {"type": "array", "items": {"type": "integer"}},
                                        "answer": {"type": "string"},
                                    },
                                }
                            }
                        },
                    },
                    "409": _STALE,
                    **_LIMIT_RESPONSES,
                },
            }
        },
        "/health": {
            "get": {
                "summary": "No-op, used to measure the network floor (never needs the token); reports the "
                "served system's name, version and params, which name the run",
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "properties": {
                                        "ok": {"type": "boolean"},
                                        "name": {"type": "string", "pattern": "^[A-Za-z0-9._+@-]{1,64}$"},
                                        "version": {"type": "string"},
                                        "params": {"type": "object"},
                                    },
                                }
                            }
                        },
                    }
                },
            }
        },
        "/memories": {
            "get": {
                "summary": "Optional: everything the current generation stores (a dump, for inspection: memeval "
                "attribute tells a fact never stored from one stored but not retrieved); 501 or 404 where the "
                "system does not list its memories",
                "security": [{"bearer": []}, {}],
                "parameters": [
                    _GENERATION_PARAM,
                    {
                        "name": "haystack",
                        "in": "query",
                        "required": False,
                        "schema": {"type": "string"},
                        "description": "the haystack ingested since the last reset (a name for the dump; a server "
                        "holds one haystack at a time)",
                    },
                ],
                "responses": {
                    "200": {
                        "description": "the stored memories, in any order, as /query returns memories",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "required": ["memories"],
                                    "properties": {
                                        "haystack": {"type": "string"},
                                        "memories": {"type": "array", "items": _MEMORY},
                                    },
                                }
                            }
                        },
                    },
                    "409": _STALE,
                    "501": {**_ERROR, "description": "the system does not list its stored memories"},
                },
            }
        },
        "/stats": {
            "get": {
                "summary": "What the current generation holds; without ?generation, the reference server's "
                "counts too (requests per route, sessions ingested and repeated, faults injected)",
                "security": [{"bearer": []}, {}],
                "parameters": [
                    {
                        "name": "generation",
                        "in": "query",
                        "required": False,
                        "schema": {"type": "string"},
                        "description": "the generation to describe: 409 when it is no longer current",
                    }
                ],
                "responses": {
                    "200": {
                        "description": "what the generation holds (and, without ?generation, the counts)",
                        "content": {"application/json": {"schema": {**_HELD, "additionalProperties": True}}},
                    },
                    "409": _STALE,
                },
            }
        },
    },
}

#: the routes that never need the bearer token
OPEN_PATHS = frozenset({"/health", "/openapi.json"})
