"""One TLS context for the HTTP clients the harness opens, instead of one per client.

httpx builds a new ``ssl.SSLContext`` for each client given none, and loading the CA bundle into it costs
about 50 ms of CPU: the sandbox opens several clients per run (the app's health poll, its checks, the Seam
session), most of them to loopback servers that never speak TLS. ``context`` is the one httpx itself would
build (certifi's bundle, or ``SSL_CERT_FILE``/``SSL_CERT_DIR`` when the client trusts the environment),
made once per distinct setting and shared: an ``SSLContext`` may serve many connections and threads once
it is configured, and nothing here changes it afterwards.
"""

from __future__ import annotations

import functools
import os
import ssl


def context(trust_env: bool = True) -> ssl.SSLContext:
    """The verifying context httpx would make for a client with this ``trust_env``, shared."""
    if not trust_env:
        return _built(False, None, None)
    return _built(True, os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.cache
def _built(trust_env: bool, cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    import httpx

    # the environment is read again here by httpx: the key above makes a changed variable a new context
    return httpx.create_ssl_context(trust_env=trust_env)
