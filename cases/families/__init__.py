"""The built-in case families, one module each; every module exposes FAMILY (a cases.family.Family)."""
