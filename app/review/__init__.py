"""The review envelope: one AdmissionReview or ConversionReview from its bytes to its answer.

Owns the JSON reading (:mod:`~app.review.jsonscan`, :mod:`~app.review.bignumbers`), the envelopes
and the JSON Patch (:mod:`~app.review.reviews`), the structural type check against the CRD
skeletons (:mod:`~app.review.schema`, ``schemas/``), the dispatch to the rules and its errors
(:mod:`~app.review.dispatch`, :mod:`~app.review.errors`), a large conversion read one object at a
time (:mod:`~app.review.conversion_stream`), the table of webhook paths
(:mod:`~app.review.webhook_paths`) and the conversion round trip with its comparison
(:mod:`~app.review.roundtrip`, :mod:`~app.review.compare`).

May import the rule packages (``domain`` … ``kinds``) and nothing else of ``app``: the server, the
offline commands and the cluster tools all answer a review through here, so they cannot disagree.
Nothing here knows HTTP (no web framework, no sockets); a bad request is an exception carrying its
code, which the server turns into a status and the CLI into an exit code.
"""
