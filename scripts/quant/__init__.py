"""PTQ accuracy acceptance on trained models (see README.md here)."""
