"""Helpers the tests of every layer share: stack files, plans, AWS API models, CRD schemas."""
