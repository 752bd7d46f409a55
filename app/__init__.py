"""The service around the rules: a review's bytes in and its answer out, served over HTTPS, run
offline from the command line, or run against a live cluster.

Four rooms, each importing only the rooms before it (``tests/test_import_graph.py`` holds them to
it), and all of them the packages below (``domain`` … ``kinds``, ``certs``):

- :mod:`app.review`: the review envelope. A review's bytes decoded and checked, dispatched to the
  rules, and its answer encoded; knows nothing of HTTP, processes or the command line.
- :mod:`app.server`: the serving process (``dynamo-webhook serve``): settings, HTTP routes, TLS,
  connections, workers, metrics and logs, and what it runs beside (certificates, Lease watch).
- :mod:`app.cluster`: the tools that read or write a live cluster (``audit``,
  ``storage-migrate``, ``certs``), with the server's own settings and look-ups.
- :mod:`app.cli`: the ``dynamo-webhook`` command line and its offline commands (``review``,
  ``lint``, ``convert``, ``--version``).

This ``__init__`` imports nothing, nor do the rooms': ``dynamo-webhook --help`` loads only the
command line. docs/architecture.md has the picture.
"""
