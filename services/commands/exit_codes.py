"""Exit codes of the `glossator` client commands, in one place so scripts can tell failures apart.

| code | constant           | meaning                                                                   |
|------|--------------------|---------------------------------------------------------------------------|
| 0    | `OK`               | done                                                                      |
| 1    | `DOCUMENTS_FAILED` | done, but some documents failed to ingest (each one is reported)          |
| 2    | `USAGE`            | bad command line (argparse's own code): unknown option, malformed target  |
| 3    | `UNREACHABLE`      | the service cannot be reached at its target, or another service is there; |
|      |                    | or the site to crawl cannot be reached (refused, no such host, a timeout) |
| 4    | `NOT_FOUND`        | what the command names does not exist: a collection, a session, a        |
|      |                    | sitemap, pages to ingest in a folder                                      |
| 5    | `INVALID_ARGUMENT` | the service rejected a value of the request (INVALID_ARGUMENT)            |
| 6    | `DENIED`           | no valid token (UNAUTHENTICATED) or not allowed to (PERMISSION_DENIED)    |
| 7    | `RPC_FAILED`       | any other failed call: deadline exceeded, a dependency or the LLM down... |
| 130  | `INTERRUPTED`      | Ctrl-C (SIGINT, 128 + 2); an interrupted ingest resumes when run again    |
| 141  | `BROKEN_PIPE`      | stdout closed early (`| head`): 128 + SIGPIPE, what a shell reports       |
"""

from __future__ import annotations

OK = 0
DOCUMENTS_FAILED = 1
USAGE = 2
UNREACHABLE = 3
NOT_FOUND = 4
INVALID_ARGUMENT = 5
DENIED = 6
RPC_FAILED = 7
INTERRUPTED = 130
BROKEN_PIPE = 141
