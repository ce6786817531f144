"""Case families (cases.families), their registry, the anchor's lists, and float formats built from raw bits."""
