"""Facts: the catalog (GPUs, instance types, MIG profiles and placement, drivers, AMIs, prices, the support
calendar), Karpenter's API and schedules, and every label key and resource name. Data and look-ups only:
this layer imports nothing of the platform's."""
