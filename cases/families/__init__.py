"""The built-in case families, one module each; every module exposes FAMILY (a cases.family.Family)."""

# what the `nan_layout` marker selects: the families that share it each say what they are in their own description
LAYOUTS = "hostile layouts: edge shapes, count magnitudes, NaN-padded rows, huge offsets"
