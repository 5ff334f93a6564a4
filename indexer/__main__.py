"""``python -m indexer``: the index-time command line."""

from indexer.cli import main

if __name__ == "__main__":
    main()
