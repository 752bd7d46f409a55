"""Shared component spec conversion: DGD ``services.<n>`` / ``components[i]`` and DCD ``spec``.

Both directions work on the *typed view* of a spec (see :mod:`gocompat.typed`): a nil Go pointer is
an absent key, an omitempty scalar at its zero value is absent, and collections keep the
nil/empty distinction. :func:`~conversion.v1alpha1.component.to_hub.to_hub` converts v1alpha1 →
v1beta1 and fills the alpha-only save; :func:`~conversion.v1alpha1.component.from_hub.from_hub`
converts v1beta1 → v1alpha1 and fills the hub-only save.

Upstream quirks reproduced here (each follows from the pinned Go code, not from a design):

* A single compilation-cache mount does not keep its position among the α volumeMounts: β→α
  projects it first, and restored origin splits (restorePreservedVolumeMountOrigins) put it
  after the plain mounts; nor does it keep its position in the β main container.
* ``extraPodSpec.mainContainer: {}`` (no fields) is pruned on the way back.
* A mainContainer ``envFrom`` equal to ``[{secretRef: envFromSecret}]`` is folded into
  ``envFromSecret`` and does not come back on mainContainer.
* A mount declared both in ``volumeMounts`` and in mainContainer collapses into one.
* An α extraPodSpec container named ``sidecar-frontend`` next to ``frontendSidecar`` is used as
  the sidecar; the frontendSidecar image/args are then rebuilt from it.
"""
