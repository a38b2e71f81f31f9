"""The question bank: questions and rubrics as validated data, indexed in a Chroma store."""
