"""``torch._functorch``: what the ``functorch`` package (installed beside torch) imports.

``import functorch`` under ``--as-torch`` runs that package's ``__init__``, which takes its
names from these modules: the old functorch API (`deprecated`), the functional modules of
`make_functional`, and `python_key.make_fx` (which raises: lazytorch has no FX tracing).
"""
