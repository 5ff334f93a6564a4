"""Quality benchmark: labelled near-duplicate corpus, end-to-end run through the proxy, scores."""
