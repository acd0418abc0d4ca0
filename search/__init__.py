"""Table search: embeddings, chunking, hybrid retrieval, fusion, reranking and permission filters."""
