"""The fixture runner behind ``make eval``: conversation fixtures through the whole pipeline
(extraction, gate, recall, lifecycle), with precision, recall, hit@3, duplicate leaks and
cross-chat isolation leaks measured against thresholds kept in ``evals._metrics``."""
