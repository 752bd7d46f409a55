"""The tools that work on a live cluster: ``dynamo-webhook audit`` (what the rules make of every
Dynamo object already stored), ``storage-migrate`` (every object rewritten in the storage version),
``certs`` (the certificate reconcile as a command) and ``crds release`` (the CRDs' conversion taken
away from a Service before its uninstall), with what they share
(:mod:`~app.cluster.inventory`: the kinds and CRDs on a cluster, a rate-limited client, paging).

May import :mod:`app.review` (an object is reviewed as the server would), :mod:`app.server` (its
settings and live look-ups, so a tool sees what ``serve`` sees), ``certs`` and the rule packages;
never :mod:`app.cli`, whose parsers start these tools.
"""
