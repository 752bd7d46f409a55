"""What the Kubernetes API server does to a custom resource before and around the webhooks, offline.

``kubectl create`` of a Dynamo manifest meets more than the operator's webhooks: the API server first
decodes the object strictly (unknown and duplicate fields are errors), checks its ObjectMeta, prunes
what the CRD's structural schema does not describe, applies the schema's defaults, calls the mutating
webhooks, validates the result against the OpenAPI v3 schema, list types and CEL rules of the CRD,
and only then calls the validating webhooks. This package models that pipeline for every vendored
CRD (``crds.json``, generated from ``tests/fixtures/crds`` by ``scripts/gen_crd_schemas.py``), with
the API server's own messages, so that ``lint`` gives the answer a cluster would.

The webhooks themselves are the caller's (:mod:`app` passes its dispatch in): this package sits
below :mod:`app` and above the rules' packages.
"""
