"""The serving process: ``dynamo-webhook serve``, one process or a supervisor and its workers.

Owns the settings (:mod:`~app.server.settings`, shared by every command), the start-up
(:mod:`~app.server.serve`, :mod:`~app.server.runtime`, :mod:`~app.server.workers`), the HTTP
routes that hand a body to :mod:`app.review` (:mod:`~app.server.routes`), the socket plumbing
(:mod:`~app.server.tls`, :mod:`~app.server.connections`, :mod:`~app.server.transport`,
:mod:`~app.server.deadlines`, :mod:`~app.server.memory`), metrics and logs
(:mod:`~app.server.observability`, :mod:`~app.server.tally`, :mod:`~app.server.labels`,
:mod:`~app.server.logstream`, :mod:`~app.server.metrics_http`), what runs beside the HTTPS server
when a Kubernetes API is reachable (:mod:`~app.server.cluster_services`: the certificate loop, the
Lease watcher, the live look-ups) and which build of the rule layer runs
(:mod:`~app.server.build`).

May import :mod:`app.review`, ``certs`` and the rule packages; never :mod:`app.cli` or
:mod:`app.cluster` (``serve`` is started by the command line, not the other way round).
"""
