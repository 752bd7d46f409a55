"""The ``dynamo-webhook`` command line (:mod:`~app.cli.main`) and its offline commands: ``review``
and ``lint`` through the same dispatch as the server, ``convert`` (:mod:`~app.cli.convert`), the
manifests they read and write (:mod:`~app.cli.documents`), ``--version``
(:mod:`~app.cli.version`) and the flags of the cluster tools (:mod:`~app.cli.tool_args`).

The top room: may import every other room of ``app`` and the packages below, and nothing imports
it. It imports each command's room only when that command runs, so ``--help`` loads none of them.
"""
