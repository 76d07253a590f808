"""Trigger suites (``trigger-evals/<id>.toml``): does the agent pick the skill up when it should, and only
then?

One package: the suite's format (``definitions``), the run's decision (``decision``), the suite's metrics
(``scoring``), its tables (``tables``) and the kind (``kind``). Reading skill use from a transcript is
every run's (``skillassay.triggers``)."""
