"""Go compatibility: what the operator's Go code does to JSON, reproduced in Python.

* :mod:`gocompat.nodes` — Go types compiled from the generated tables (:mod:`gocompat.tables_core`,
  :mod:`gocompat.tables_grove`, and types defined by hand with :func:`gocompat.nodes.define`), built
  on the leaf types of :mod:`gocompat.leaves`;
* :mod:`gocompat.view` — ``encoding/json`` typed views and ``apiequality.Semantic.DeepEqual``;
* :mod:`gocompat.mergo` — ``mergo.Merge(…, WithOverride)``;
* :mod:`gocompat.decode` — the exact text of ``json.Unmarshal``'s error (the error types and
  Go's ``UnmarshalTypeError`` text: :mod:`gocompat.errors`);
* :mod:`gocompat.typed` — the schema vocabulary for Dynamo's own types (``Field``, ``Struct``,
  ``Ptr``, ``ListOf``, ``MapOf``, ``Go``), read by :mod:`gocompat.decoding` and written by
  :mod:`gocompat.encoding`;
* :mod:`gocompat.quantity`, :mod:`gocompat.gotime` — ``resource.Quantity``, ``time.Time`` and
  ``time.Duration`` parsing and printing;
* :mod:`gocompat.jsonvalue`, :mod:`gocompat.gotext` — JSON values (type names, copies, Go's
  ``float64`` round trip) and Go's text (``%q``, ``%v`` of a float, ``json.Marshal`` escapes).
"""
