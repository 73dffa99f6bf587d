"""Decisions: pure functions from the validated spec to what gets built (capacity, sharing and MIG layouts,
node groups, boot scripts, placement, quotas and queues, pod sizing, cost, disruption, lifecycle), one module
per capability, and `validation.parse_platform`: the stack file validated whole, including the rules that
need a decision. Plain Python: no Pulumi. Imports spec and facts."""
