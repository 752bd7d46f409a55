"""Type skeletons derived from the Dynamo operator CRD schemas (Apache-2.0) by scripts/gen_schemas.py."""
