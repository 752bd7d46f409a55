"""Validating admission rules for the Dynamo kinds: one module per kind (``validate(inp, ctx)``)
and the rules several kinds share. Field paths and errors are apimachinery's, rendered by
:mod:`gocompat.fielderrors`.

The chain every request goes through first (lease exclusion, the GVK guard, deletion) and the
look-up of the kind's rules are in :mod:`kinds.chains`; the registry in :mod:`kinds` says
which module validates which kind.
"""
