"""The stack file: `gpu-platform:platform` as pydantic models (models.py), read with field-path errors
(parse.py), and every cross-field rule decidable from the file and the facts (rules*.py). Imports facts only."""
