"""Defaulting (mutating) admission rules for the Dynamo kinds: one module per kind
(``default_hub(obj, operation, settings)`` on the hub version), the checkpoint-restore pod
mutator (:mod:`defaulting.pod`) and the hub round trip of spoke-version requests
(:mod:`defaulting.common`).

The chain every request goes through first and the look-up of the kind's defaulter are in
:mod:`kinds.chains`; the registry in :mod:`kinds` says which module defaults which kind.
"""
