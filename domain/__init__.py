"""What every other package shares: the admission request and answer types
(:mod:`domain.admission`) and the names the operator gives meaning to (:mod:`domain.constants`).
Imports nothing of the project."""
