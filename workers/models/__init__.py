"""Model providers: one neutral conversation shape, spoken to Anthropic or an OpenAI-compatible endpoint."""
