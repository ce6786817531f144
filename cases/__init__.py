"""Case descriptions (records), their lists, and the builders that make tensors from them."""
