"""The baseline worker: reconciles the stored cluster with the engine, continuously."""
