"""Generated snake_case twins of the camelCase JMS methods (scripts/gen_twins.py)."""
