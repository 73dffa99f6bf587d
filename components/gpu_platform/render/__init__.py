"""Rendering: what the decisions look like to the systems that read them, as plain data: Kubernetes
objects, Helm values, alert rules, the Alertmanager configuration, the dashboard, IAM documents. No provider
SDK. Imports decisions, spec and facts."""
