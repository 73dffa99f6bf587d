"""Resources: thin ComponentResources that register what the layers below decided and rendered, each with
its own Args. The only layer (with the platform) that imports pulumi_aws and pulumi_kubernetes."""
