"""Built-in mutation testing of evals (``skillassay check --mutants``): each eval's golden broken in known
ways, graded by every layer, compared with what each layer is expected to catch (``classes.py``)."""
