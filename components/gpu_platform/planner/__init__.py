"""The offline planner behind the `gpu-platform` command: runs the Pulumi program against Pulumi's mock
engine, records what it registers, and turns that into a plan (resources, policy verdict, capacity, cost,
lifecycle, training, health, queueing), plus diff, lock, upgrade-check and check-preview (cli.py)."""
