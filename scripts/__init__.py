"""dlc's helper scripts: python -m scripts.<name> from the repository root."""
