"""Webhook TLS: certificates, the reconcile loop that keeps them and the caBundles in place, and the
namespace-scope Lease watcher.

Modules: ``pki`` (X.509 primitives), ``files`` (atomic cert-dir writes), ``dev`` (self-signed certificates
without a cluster), ``kube`` (API plumbing: config loading, retries, list+watch), ``loop`` (``CertConfig``,
``Reconciler``), ``leader`` (optional writer Lease), ``leases`` (``NamespaceScope``), ``status`` (read-only
report), ``metrics``.
"""
