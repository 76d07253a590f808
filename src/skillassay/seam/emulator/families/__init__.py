"""Hand-written handlers for the route families agents reach for beyond the three integration paths, each
written from the OpenAPI document and the SDK docs: linked access codes (``access_codes/create_multiple``),
connect webviews and connected accounts, client sessions, and access control systems (``acs/*``).

Importing ``families.routes`` registers their routes in ``handlers.HANDLERS`` (the emulator does, once);
``acs_seed`` is the access system every sandbox workspace starts with.
"""
