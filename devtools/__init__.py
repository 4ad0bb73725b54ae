"""What ``python3 dev.py`` runs besides its commands themselves: ``base`` (the checkout's
paths, the helpers every command uses, setting a database's registry up) and
``services`` (``start --services``, the production-like stack). Standard library only."""
