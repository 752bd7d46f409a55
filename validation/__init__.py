"""Validating admission rules for the Dynamo kinds: one module per kind (``validate(inp, ctx)``),
the rules several kinds share, and the upstream error rendering (:mod:`validation.errors`).

The chain every request goes through first (lease exclusion, the GVK guard, deletion) and the
look-up of the kind's rules are in :mod:`kinds.webhooks`; the registry in :mod:`kinds` says
which module validates which kind.
"""
