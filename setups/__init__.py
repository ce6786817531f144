"""Setup callables for --kernel-setup: what a deployment does before its kernel module runs, reproduced here."""
